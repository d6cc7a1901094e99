/// The codes a ledger has seen (currencies, store names), each named by its position: a project
/// has a few (the config's), so a history or an idempotency answer names its currency in 2
/// bytes instead of a `String`, and finding a code is a short scan.
struct CodeList: Sendable {
    private(set) var codes: [String] = []

    init() {}

    /// The number of `code`, if it has been seen.
    func number(of code: String) -> UInt16? {
        codes.firstIndex(of: code).map { UInt16($0) }
    }

    /// The number of `code`, given one if it is new.
    mutating func intern(_ code: String) -> UInt16 {
        if let number = number(of: code) { return number }
        precondition(codes.count < Int(UInt16.max), "too many codes")
        codes.append(code)
        return UInt16(codes.count - 1)
    }

    subscript(number: UInt16) -> String { codes[Int(number)] }
}

/// A transaction id as the ledger keeps it: `vct_<sequence>_<index>` (every id the rules make)
/// as its two numbers, spelled only when read; any other spelling (hand-made data) is kept as
/// text, at an offset of the owner's arena.
struct TransactionName: Sendable, Equatable {
    /// The sequence, or the arena offset of a spelled id.
    let sequence: UInt64
    /// The index; ``spelled`` when the id is text.
    let index: UInt32

    static let spelled = UInt32.max

    init(sequence: UInt64, index: UInt32) {
        self.sequence = sequence
        self.index = index
    }

    /// The id in `text`, kept as numbers when it is one the rules would make, else appended to
    /// `arena`.
    init(_ text: String, arena: inout TextArena) {
        if let (sequence, index) = Self.parse(text) {
            self.init(sequence: sequence, index: index)
        } else {
            self.init(sequence: UInt64(arena.append(text)), index: Self.spelled)
        }
    }

    func spelled(in arena: TextArena) -> String {
        guard index != Self.spelled else { return arena.string(at: Int(sequence)) }
        return Self.spell(sequence: sequence, index: index)
    }

    /// `vct_<sequence>_<index>`, written digit by digit into the string's own storage. The
    /// capacity asked for is the spelling's exact length: an id of up to 15 bytes (sequences
    /// below 10^9) is then a small string, held inline, where a larger capacity always
    /// allocated one (twice a `currency.transact`, and a retain and release at every copy).
    static func spell(sequence: UInt64, index: UInt32) -> String {
        String(unsafeUninitializedCapacity: spelledCount(sequence: sequence, index: index)) { buffer in
            write(sequence: sequence, index: index, into: buffer)
        }
    }

    /// The UTF-8 of ``spell(sequence:index:)``, written on the stack and lent for the call: for
    /// writers that only copy the bytes (an event's details, a snapshot), no `String` is made.
    static func withSpelling<Result>(sequence: UInt64, index: UInt32, _ body: (UnsafeBufferPointer<UInt8>) -> Result)
        -> Result
    {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: spellingBytesMax) { buffer in
            let count = write(sequence: sequence, index: index, into: buffer)
            return body(UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// The longest spelling: `vct_`, 20 digits, `_`, 10 digits.
    private static let spellingBytesMax = 35

    private static func spelledCount(sequence: UInt64, index: UInt32) -> Int {
        "vct__".utf8.count + digitCount(sequence) + digitCount(UInt64(index))
    }

    /// Writes the spelling at the start of `buffer` (at least ``spelledCount(sequence:index:)``
    /// long); answers its length.
    private static func write(sequence: UInt64, index: UInt32, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var count = 0
        for byte in "vct_".utf8 {
            buffer[count] = byte
            count += 1
        }
        count = writeDigits(sequence, into: buffer, at: count)
        buffer[count] = UInt8(ascii: "_")
        return writeDigits(UInt64(index), into: buffer, at: count + 1)
    }

    private static func digitCount(_ value: UInt64) -> Int {
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        return digits
    }

    private static func writeDigits(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        let digits = digitCount(value)
        var value = value
        for position in stride(from: start + digits - 1, through: start, by: -1) {
            buffer[position] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
        }
        return start + digits
    }

    /// The two numbers of `vct_<sequence>_<index>` written as ``spell(sequence:index:)`` writes
    /// it (no sign, no leading zero, an index below ``spelled``); `nil` for any other text, so
    /// spelling the numbers again gives back exactly `text`.
    static func parse(_ text: String) -> (UInt64, UInt32)? {
        var text = text
        return text.withUTF8 { utf8 -> (UInt64, UInt32)? in
            guard utf8.count >= 7, utf8[0] == UInt8(ascii: "v"), utf8[1] == UInt8(ascii: "c"), utf8[2] == UInt8(ascii: "t"),
                utf8[3] == UInt8(ascii: "_")
            else { return nil }
            var position = 4
            guard let sequence = number(utf8, &position), position < utf8.count, utf8[position] == UInt8(ascii: "_") else {
                return nil
            }
            position += 1
            guard let index = number(utf8, &position), position == utf8.count, index < UInt64(spelled) else { return nil }
            return (sequence, UInt32(index))
        }
    }

    /// A decimal number at `position` without a leading zero (except 0 itself), that fits.
    private static func number(_ utf8: UnsafeBufferPointer<UInt8>, _ position: inout Int) -> UInt64? {
        let start = position
        var value: UInt64 = 0
        while position < utf8.count, utf8[position] >= UInt8(ascii: "0"), utf8[position] <= UInt8(ascii: "9") {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(utf8[position] - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            value = sum
            position += 1
        }
        let digits = position - start
        guard digits > 0, digits == 1 || utf8[start] != UInt8(ascii: "0") else { return nil }
        return value
    }
}
