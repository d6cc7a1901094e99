#if canImport(Glibc)
import Glibc
#endif

/// Reads the plain shapes the purpose-built request scanners (``SyncScan``, ``TransactScan``)
/// recognize: punctuation with spaces around it, strings of printable ASCII without escapes,
/// and integers without fraction or exponent. Anything else answers `nil`, and the scanner
/// leaves the line to the general parser.
struct PlainJSONReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    var peek: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    var atEndAfterSpaces: Bool {
        var copy = self
        copy.skipSpaces()
        return copy.offset == bytes.count
    }

    mutating func skipSpaces() {
        while let byte = peek, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { offset += 1 }
    }

    mutating func take(_ byte: UInt8) -> Bool {
        skipSpaces()
        guard peek == byte else { return false }
        offset += 1
        return true
    }

    func matches(_ range: Range<Int>, _ literal: [UInt8]) -> Bool {
        guard range.count == literal.count else { return false }
        return literal.withUnsafeBytes { literal in
            memcmp(bytes.baseAddress! + range.lowerBound, literal.baseAddress!, literal.count) == 0
        }
    }

    /// A string of printable ASCII with no escapes; answers its content's range.
    mutating func plainString() -> Range<Int>? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = offset
        while let byte = peek, byte != UInt8(ascii: "\"") {
            guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
            offset += 1
        }
        guard peek == UInt8(ascii: "\"") else { return nil }
        let range = start..<offset
        offset += 1
        return range
    }

    /// Digits without a leading zero (unless alone), fraction or exponent, up to 18 of them.
    mutating func unsignedInteger(allowingMinus: Bool) -> UInt64? {
        skipSpaces()
        if allowingMinus, peek == UInt8(ascii: "-") { offset += 1 }
        let start = offset
        var value: UInt64 = 0
        while let byte = peek, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            value = value * 10 + UInt64(byte - UInt8(ascii: "0"))
            offset += 1
            guard offset - start <= 18 else { return nil }
        }
        let count = offset - start
        guard count > 0, count == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
        if let byte = peek, byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return nil }
        return value
    }

    /// A request's `id`: a plain string or an integer. Answers the value's text (quotes included
    /// for a string) and the value as the general parser reads it.
    mutating func requestID() -> (range: Range<Int>, value: JSONValue)? {
        skipSpaces()
        let start = offset
        if peek == UInt8(ascii: "\"") {
            guard let content = plainString() else { return nil }
            return (start..<offset, .string(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[content]), as: UTF8.self)))
        }
        guard unsignedInteger(allowingMinus: true) != nil else { return nil }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        return (start..<offset, .number(JSONNumber(uncheckedText: text)))
    }

    /// An integer with an optional minus sign, in the form ``unsignedInteger(allowingMinus:)`` reads.
    mutating func signedInteger() -> Int64? {
        skipSpaces()
        let negative = peek == UInt8(ascii: "-")
        if negative { offset += 1 }
        guard let magnitude = unsignedInteger(allowingMinus: false) else { return nil }
        return negative ? -Int64(magnitude) : Int64(magnitude)
    }

    /// The text of a range of the line, as a `String`.
    func string(_ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }
}
