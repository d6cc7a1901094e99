/// A purpose-built reader for the one request SDKs send all day, `sync` with a cursor:
/// `{"id":<integer or plain string>,"op":"sync","profile_id":"gh_…","cursor":<integer>}` with
/// the members in any order and spaces allowed around the punctuation. It only recognizes: any
/// other shape (escapes, other members, duplicates, floats, a missing cursor) answers `nil`, and
/// the line takes the general parser's road, which gives every error its usual answer.
public struct SyncScan {
    /// Where the `id` value's text is (echoed as it was sent), quotes included for a string.
    public let idRange: Range<Int>
    /// Where the `profile_id` string's content is.
    public let profileRange: Range<Int>
    public let cursor: UInt64

    public static func scan(_ line: UnsafeRawBufferPointer) -> SyncScan? {
        var reader = Reader(bytes: line)
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var id: Range<Int>?
        var profile: Range<Int>?
        var cursor: UInt64?
        var sawOp = false
        repeat {
            guard let key = reader.plainString() else { return nil }
            guard reader.take(UInt8(ascii: ":")) else { return nil }
            if reader.matches(key, Key.id) {
                guard id == nil else { return nil }
                reader.skipSpaces()
                let start = reader.offset
                if reader.peek == UInt8(ascii: "\"") {
                    guard reader.plainString() != nil else { return nil }
                } else {
                    guard reader.unsignedInteger(allowingMinus: true) != nil else { return nil }
                }
                id = start..<reader.offset
            } else if reader.matches(key, Key.op) {
                guard !sawOp, let value = reader.plainString(), reader.matches(value, Key.sync) else { return nil }
                sawOp = true
            } else if reader.matches(key, Key.profileID) {
                guard profile == nil, let value = reader.plainString() else { return nil }
                profile = value
            } else if reader.matches(key, Key.cursor) {
                guard cursor == nil, let value = reader.unsignedInteger(allowingMinus: false) else { return nil }
                cursor = value
            } else {
                return nil
            }
        } while reader.take(UInt8(ascii: ","))
        guard reader.take(UInt8(ascii: "}")), reader.atEndAfterSpaces, sawOp, let id, let profile, let cursor else { return nil }
        return SyncScan(idRange: id, profileRange: profile, cursor: cursor)
    }

    /// `{"id":<id>,"ok":true,"cursor":<cursor>,"changed":[]}\n`, exactly as the general writer
    /// would write it.
    public static func nothingChanged(line: UnsafeRawBufferPointer, id: Range<Int>, cursor: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + id.count)
        out.append(contentsOf: #"{"id":"#.utf8)
        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[id]))
        out.append(contentsOf: #","ok":true,"cursor":"#.utf8)
        out.append(contentsOf: String(cursor).utf8)
        out.append(contentsOf: #","changed":[]}"#.utf8)
        out.append(UInt8(ascii: "\n"))
        return out
    }

    private enum Key {
        static let id = Array("id".utf8)
        static let op = Array("op".utf8)
        static let sync = Array("sync".utf8)
        static let profileID = Array("profile_id".utf8)
        static let cursor = Array("cursor".utf8)
    }

    private struct Reader {
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
            for (offset, byte) in literal.enumerated() where bytes[range.lowerBound + offset] != byte { return false }
            return true
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
    }
}
