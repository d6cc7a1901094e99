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
        var reader = PlainJSONReader(bytes: line)
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var id: Range<Int>?
        var profile: Range<Int>?
        var cursor: UInt64?
        var sawOp = false
        repeat {
            guard let key = reader.plainString() else { return nil }
            guard reader.take(UInt8(ascii: ":")) else { return nil }
            if reader.matches(key, Key.id) {
                guard id == nil, let value = reader.requestID() else { return nil }
                id = value.range
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
}
