import GatehouseBase
import GatehouseCore
import GatehouseWire
import Testing

/// What the general road reads from a line, for holding the quick readers to it: the general
/// parser, then the fields the op reads the way its operation reads them (`SyncOperations.sync`'s
/// inline body, `CurrencyOperations.transact`'s fields). `nil` where that road answers an error
/// (or, for `sync`, where it does not answer "nothing changed" from the board: no cursor).
enum GeneralRoad {
    struct Sync: Equatable {
        let profileID: ProfileID
        let cursor: UInt64
        /// The answer when the board says nothing changed.
        let answer: String
    }

    struct Transact: Equatable {
        let id: JSONValue
        let profile: TransactScan.Profile
        let currency: String
        let amount: Int64
        let idempotencyKey: String
        let reason: String?
    }

    static func sync(_ line: [UInt8]) -> Sync? {
        guard let request = try? Request(line: line), request.op == "sync" else { return nil }
        let fields = request.fields
        // `try?` flattens: `nil` for a cursor refused and for none.
        guard let cursor = try? fields.optionalInt("cursor", in: 0...Int64.max),
            let text = try? fields.string("profile_id"), let profileID = ProfileID(parsing: text)
        else { return nil }
        let answer = Answer.success(id: request.id, ["cursor": .int(cursor), "changed": .array([])])
        return Sync(profileID: profileID, cursor: UInt64(cursor), answer: String(decoding: answer, as: UTF8.self))
    }

    static func transact(_ line: [UInt8]) -> Transact? {
        guard let request = try? Request(line: line), request.op == "currency.transact" else { return nil }
        let fields = request.fields
        let profile: TransactScan.Profile
        if fields.has("profile_id") {
            guard let text = try? fields.string("profile_id"), let id = ProfileID(parsing: text) else { return nil }
            profile = .id(id)
        } else if fields.has("customer_user_id") {
            guard let text = try? fields.string("customer_user_id") else { return nil }
            profile = .customerUserID(text)
        } else {
            return nil
        }
        guard let currency = try? fields.string("currency"), let amount = try? fields.int("amount"),
            let key = try? fields.string("idempotency_key")
        else { return nil }
        let reason: String?
        do {
            reason = try fields.optionalString("reason")
        } catch {
            return nil
        }
        return Transact(id: request.id, profile: profile, currency: currency, amount: amount, idempotencyKey: key, reason: reason)
    }

    /// A scan in the general road's terms, to compare the two.
    static func transact(_ scan: TransactScan) -> Transact {
        Transact(id: scan.id, profile: scan.profile, currency: scan.currency, amount: scan.amount,
                 idempotencyKey: scan.idempotencyKey, reason: scan.reason)
    }
}

/// Writes a request in the shapes the protocol allows (PROTOCOL.md, "Requests and answers"):
/// members in a random order, JSON whitespace around the punctuation, names and strings with
/// escapes, integers in every form JSON has for them, an `id` of every form or none, members
/// the op does not know. Seeded, so a failing shape comes back on the next run.
struct RequestShapes {
    private var random: RandomSourceGenerator

    init(seed: UInt64) {
        random = RandomSourceGenerator(SeededRandomSource(seed: seed))
    }

    /// `id` values of every form, as JSON text: what the general writer echoes is their own
    /// text for a number, and the decoded string written anew for a string.
    static let ids = [
        "1", "0", "-0", "-12", "4294967296", "123456789012345678901234567890", "1.5", "-2.25e-3", "1E+2", "0.0", "-0.0", "1e400",
        #""abc""#, #""""#, #""é 中""#, #""a\"b\\c""#, #""\u00e9""#, #""\/x""#, #""\ud83d\ude00""#, #""tab\there""#,
        "null",
    ]

    /// Members no op knows, with values of every JSON kind (names chosen so that no one-byte
    /// change makes them a member an op reads).
    static let extras: [(name: String, value: String)] = [
        ("app_version", #""1.2.3""#), ("nested", #"{"a":{"b":"c\"}"},"list":[]}"#), ("items", #"[1,[2,{"a":[]}],"]"]"#),
        ("flag", "true"), ("flags_off", "false"), ("nothing", "null"), ("small", "-1.5e-7"),
        ("huge", "123456789012345678901234567890"), ("words", #""é\u00e9\n\"""#), ("ünïcode", #""ü""#), ("empty", "{}"),
    ]

    private static let spaces = ["", "", "", "", " ", "\t", "\r", "\n", "  ", " \r\t "]

    mutating func pick<T>(_ items: [T]) -> T { items.randomElement(using: &random)! }

    mutating func number(in range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &random) }

    mutating func chance(_ oneIn: Int) -> Bool { Int.random(in: 0..<oneIn, using: &random) == 0 }

    /// An `id` member's value, or `nil` for a request without one.
    private mutating func id() -> String? { chance(4) ? nil : pick(Self.ids) }

    /// `value` as a JSON number in one of the forms whose value is that integer.
    mutating func integer(_ value: Int64) -> String {
        pick(["\(value)", "\(value).0", "\(value)e0", "\(value * 10)e-1", "\(value).000E+0"])
    }

    /// `text` (plain ASCII) as a JSON string, sometimes with one of its characters escaped.
    mutating func string(_ text: String) -> String {
        guard !text.isEmpty, chance(3) else { return "\"\(text)\"" }
        var characters = Array(text.unicodeScalars)
        let index = Int.random(in: 0..<characters.count, using: &random)
        let escaped = characters[index] == "/" ? #"\/"# : "\\u" + hex4(characters[index].value)
        characters.remove(at: index)
        let before = String(String.UnicodeScalarView(characters[..<index]))
        let after = String(String.UnicodeScalarView(characters[index...]))
        return "\"" + before + escaped + after + "\""
    }

    /// One line of `members` (name, JSON text of the value): shuffled, with an `id` of any
    /// form or none, up to three members no op knows, whitespace between every token, names
    /// sometimes escaped.
    mutating func line(_ members: [(name: String, value: String)]) -> [UInt8] {
        var all = members
        if let id = id() { all.append((name: "id", value: id)) }
        for _ in 0..<Int.random(in: 0...3, using: &random) { all.append(pick(Self.extras)) }
        all.shuffle(using: &random)
        var line = pick(Self.spaces) + "{"
        for (index, member) in all.enumerated() {
            if index > 0 { line += pick(Self.spaces) + "," }
            line += pick(Self.spaces) + string(member.name) + pick(Self.spaces) + ":" + pick(Self.spaces) + member.value
        }
        return Array((line + pick(Self.spaces) + "}" + pick(Self.spaces)).utf8)
    }
}

/// Holds a scanner to the general road on the lines near `line`: every prefix, and every byte
/// replaced by one that matters to JSON. Most are not JSON, the rest read differently: where
/// the general road refuses a line (`general` is false) the scanner must leave it (`scans` is
/// false), and where both read it `agree` checks they read it alike.
func expectNearbyLinesAgree(
    _ line: [UInt8], general: ([UInt8]) -> Bool, scans: ([UInt8]) -> Bool, agree: ([UInt8]) -> Void,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    for nearby in mutations(of: line) {
        if !general(nearby) {
            #expect(!scans(nearby), "read a line the general road refuses: \(String(decoding: nearby, as: UTF8.self))",
                    sourceLocation: sourceLocation)
        } else if scans(nearby) {
            agree(nearby)
        }
    }
}

private func mutations(of bytes: [UInt8]) -> [[UInt8]] {
    let replacements: [UInt8] = Array(#"" \{}[],:0-.e"#.utf8) + [0x01, 0x7F, 0x80, 0xC3, 0xFF]
    var lines: [[UInt8]] = (0..<bytes.count).map { Array(bytes[..<$0]) }
    for index in bytes.indices {
        for byte in replacements where byte != bytes[index] {
            var changed = bytes
            changed[index] = byte
            lines.append(changed)
        }
    }
    return lines
}

/// `line` with every `"P"` standing for `profile`, so that cases read short.
func naming(_ profile: String, in line: String) -> [UInt8] {
    Array(line.split(separator: "\"P\"", omittingEmptySubsequences: false).joined(separator: "\"\(profile)\"").utf8)
}

/// Four lowercase hex digits.
private func hex4(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
