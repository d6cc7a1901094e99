#if canImport(Glibc)
import Glibc
#endif
import GatehouseCore

/// Reads a request object's members for the quick request readers (``SyncScan``,
/// ``TransactScan``). The forms requests take all day (strings without escapes, integers of up
/// to 18 digits) it reads in place; anything else (an escape, a non-ASCII character, another
/// number form, a nested value) it hands to ``JSONParser/parseValue(_:from:maxDepth:)`` at that
/// offset. So a scanner accepts exactly the lines the general parser accepts, in any shape
/// the protocol allows, and reads the same values from them.
struct QuickJSONReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0
    /// The last string with escapes read, and its text: a member's name is compared with
    /// several, and an `id` is decoded right after it is read.
    private var lastEscaped: (range: Range<Int>, text: String)?

    /// A string as read: where its UTF-8 is when the line holds it as is (no escapes), or where
    /// the whole string is, quotes included, when it has escapes (decoded when it is needed, so
    /// that what the scanners keep while they read holds no `String`).
    enum Text {
        case inLine(Range<Int>)
        case escaped(Range<Int>)
    }

    /// A number as read: where its literal is, and its value as an exact integer the way
    /// ``JSONNumber/int64`` gives it (`nil`: a fraction, or out of range).
    struct Number {
        let literal: Range<Int>
        let integer: Int64?
    }

    /// A member's value, told apart as far as the scanners need: anything else (`true`,
    /// `false`, an array, an object) is `other`, left unread.
    enum Value {
        case text(Text)
        case number(Number)
        case null
        case other
    }

    /// A request's `id` as read: absent (or `null`), a number (where its literal is), or a string.
    enum RequestID {
        case absent
        case number(Range<Int>)
        case string(Text)
    }

    /// Nesting allowed inside a member's value: the request object is the first level of the
    /// general parser's limit.
    private static let memberMaxDepth = JSONParser.defaultMaxDepth - 1

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    // MARK: The object

    /// Reads the whole line as a request for `op`, and answers its `id`: `id` and `op` it reads
    /// itself, and `member` gets every other member's name with the reader at its value, which
    /// it must read (or skip). `nil` when the line is not a single JSON object, is for another
    /// op, or `member` answered `false`. Another `op` ends the reading at once: every line is
    /// offered to the scanners first.
    mutating func readRequest(op: StaticString, _ member: (inout QuickJSONReader, Text) -> Bool) -> RequestID? {
        var id = RequestID.absent
        var isOp = false
        let read = readObject { reader, name in
            if reader.matches(name, Self.idKey) {
                guard let value = reader.requestID() else { return false }
                id = value
                return true
            }
            if reader.matches(name, Self.opKey) {
                guard case .text(let text)? = reader.value() else { return false }
                isOp = reader.matches(text, op)
                return isOp
            }
            return member(&reader, name)
        }
        return read && isOp ? id : nil
    }

    private static let idKey: StaticString = "id"
    private static let opKey: StaticString = "op"

    /// Reads the whole line as one object: `member` gets each member's name with the reader at
    /// its value, and must read it (or skip it). `false` when the line is not a single JSON
    /// object, or `member` answered `false`.
    private mutating func readObject(_ member: (inout QuickJSONReader, Text) -> Bool) -> Bool {
        guard take(UInt8(ascii: "{")) else { return false }
        repeat {
            skipSpaces()
            guard let name = text(), take(UInt8(ascii: ":")) else { return false }
            skipSpaces()
            guard member(&self, name) else { return false }
        } while take(UInt8(ascii: ","))
        guard take(UInt8(ascii: "}")) else { return false }
        skipSpaces()
        return offset == bytes.count
    }

    /// Moves past a value the scanner does not need, checking it as the general parser would.
    mutating func skipValue() -> Bool {
        guard let byte = peek else { return false }
        switch byte {
        case UInt8(ascii: "\""): return text() != nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number() != nil
        default: return parsed() != nil
        }
    }

    /// The value at the reader, read as far as ``Value`` tells; `nil` when it is not JSON.
    mutating func value() -> Value? {
        guard let byte = peek else { return nil }
        switch byte {
        case UInt8(ascii: "\""):
            return text().map { .text($0) }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return number().map { .number($0) }
        case UInt8(ascii: "n"):
            guard matches(offset..<min(offset + 4, bytes.count), "null") else { return nil }
            offset += 4
            return .null
        default:
            return .other
        }
    }

    /// A string member's value into `slot` (`null`: none, as the general road's fields read
    /// it); `false` for any other value, which the general road refuses.
    mutating func readText(into slot: inout Text?) -> Bool {
        switch value() {
        case .text(let text): slot = text
        case .null: slot = nil
        default: return false
        }
        return true
    }

    /// An integer member's value into `slot` (`null`: none); `false` for any other value (a
    /// fraction, a string…), which the general road refuses.
    mutating func readInteger(into slot: inout Int64?) -> Bool {
        switch value() {
        case .number(let number):
            guard let integer = number.integer else { return false }
            slot = integer
        case .null:
            slot = nil
        default:
            return false
        }
        return true
    }

    /// A request's `id`; `nil` for a value that cannot be one (the general road refuses it).
    private mutating func requestID() -> RequestID? {
        switch value() {
        case .text(let text): .string(text)
        case .number(let number): .number(number.literal)
        case .null: .absent
        case .other, nil: nil
        }
    }

    /// The `id` as the general parser reads it.
    func value(of id: RequestID) -> JSONValue {
        switch id {
        case .absent: .null
        case .number(let literal): .number(JSONNumber(uncheckedText: string(literal)))
        case .string(let text): .string(string(text))
        }
    }

    // MARK: Names and text

    func matches(_ text: Text, _ literal: StaticString) -> Bool {
        switch text {
        case .inLine(let range): matches(range, literal)
        case .escaped(let range): decoded(range).utf8.elementsEqual(Self.bytes(of: literal))
        }
    }

    private func matches(_ range: Range<Int>, _ literal: StaticString) -> Bool {
        let literal = Self.bytes(of: literal)
        return range.count == literal.count && memcmp(bytes.baseAddress! + range.lowerBound, literal.baseAddress!, literal.count) == 0
    }

    /// Whether the line holds `literal`'s bytes anywhere.
    func contains(_ literal: StaticString) -> Bool {
        let literal = Self.bytes(of: literal)
        guard literal.count > 0, literal.count <= bytes.count else { return literal.count == 0 }
        let base = bytes.baseAddress!
        let lastStart = bytes.count - literal.count
        var from = 0
        while from <= lastStart, let hit = memchr(base + from, Int32(literal[0]), lastStart - from + 1) {
            let start = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(base + start, literal.baseAddress!, literal.count) == 0 { return true }
            from = start + 1
        }
        return false
    }

    private static func bytes(of literal: StaticString) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
    }

    func string(_ text: Text) -> String {
        switch text {
        case .inLine(let range): string(range)
        case .escaped(let range): decoded(range)
        }
    }

    func string(_ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// The text of a string with escapes, which ``text()`` found the general parser reads.
    func decoded(_ range: Range<Int>) -> String {
        if let lastEscaped, lastEscaped.range == range { return lastEscaped.text }
        guard case .string(let string)? = (try? JSONParser.parseValue(bytes, from: range.lowerBound))?.value else {
            preconditionFailure("a string the reader checked no longer parses")
        }
        return string
    }

    // MARK: Scalars

    /// A string at the reader. A run of printable ASCII up to the closing quote is the line's
    /// own bytes; at anything else the general parser reads the string whole. Every escape
    /// makes the decoded text shorter than its source, so a string that kept its length had
    /// none, and its bytes in the line are its UTF-8 (and what the answer writer would write).
    private mutating func text() -> Text? {
        guard peek == UInt8(ascii: "\"") else { return nil }
        let start = offset + 1
        let end = plainRunEnd(from: start)
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            offset = end + 1
            return .inLine(start..<end)
        }
        guard case .string(let string)? = parsed() else { return nil }
        let content = start..<(offset - 1)
        guard string.utf8.count != content.count else { return .inLine(content) }
        lastEscaped = ((start - 1)..<offset, string)
        return .escaped((start - 1)..<offset)
    }

    /// Where the run of printable ASCII other than `"` and `\` that starts at `index` ends.
    /// Eight bytes at a time (SWAR, as the line framer finds newlines): each test flags the
    /// bytes it is after with their high bit, and a borrow can only flag bytes above a real
    /// match, which the lowest-bit pick ignores.
    private func plainRunEnd(from index: Int) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var index = index
        while bytes.count - index >= 8 {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let quotes = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
            let backslashes = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
            let controls = (word &- ones &* 0x20) & ~word
            let found = (controls | (quotes &- ones) & ~quotes | (backslashes &- ones) & ~backslashes | word) & highs
            if found != 0 { return index + found.trailingZeroBitCount / 8 }
            index += 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") else { return index }
            index += 1
        }
        return index
    }

    /// A number at the reader. An integer of up to 18 digits is read in place; any other form
    /// (more digits, a fraction, an exponent, a leading zero, which the parser refuses) is the
    /// general parser's to read.
    private mutating func number() -> Number? {
        let start = offset
        var index = offset
        let negative = index < bytes.count && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        let digitsStart = index
        var magnitude: Int64 = 0
        while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10, index - digitsStart < 18 {
            magnitude = magnitude * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
            index += 1
        }
        let count = index - digitsStart
        let plain = count > 0 && (count == 1 || bytes[digitsStart] != UInt8(ascii: "0")) && !Self.continuesNumber(at: index, in: bytes)
        if plain {
            offset = index
            return Number(literal: start..<index, integer: negative ? -magnitude : magnitude)
        }
        guard case .number(let number)? = parsed() else { return nil }
        return Number(literal: start..<offset, integer: number.int64)
    }

    /// A byte that would carry a number on past an integer read so far.
    private static func continuesNumber(at index: Int, in bytes: UnsafeRawBufferPointer) -> Bool {
        guard index < bytes.count else { return false }
        let byte = bytes[index]
        return byte &- UInt8(ascii: "0") < 10 || byte == UInt8(ascii: ".") || byte | 0x20 == UInt8(ascii: "e")
    }

    /// The value at the reader, read by the general parser; `nil` where it refuses it.
    private mutating func parsed() -> JSONValue? {
        guard let (value, end) = try? JSONParser.parseValue(bytes, from: offset, maxDepth: Self.memberMaxDepth) else { return nil }
        offset = end
        return value
    }

    // MARK: Punctuation

    private var peek: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    /// JSON's whitespace, as the general parser skips it.
    private mutating func skipSpaces() {
        while let byte = peek,
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
        {
            offset += 1
        }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        skipSpaces()
        guard peek == byte else { return false }
        offset += 1
        return true
    }
}

extension ProfileID {
    /// The profile id a scanned string names, as ``init(parsing:)`` reads it.
    init?(_ text: QuickJSONReader.Text, in reader: QuickJSONReader) {
        switch text {
        case .inLine(let range): self.init(utf8: UnsafeRawBufferPointer(rebasing: reader.bytes[range]))
        case .escaped(let range): self.init(parsing: reader.decoded(range))
        }
    }
}
