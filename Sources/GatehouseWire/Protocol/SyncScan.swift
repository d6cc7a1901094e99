public import GatehouseCore

/// A purpose-built reader for the one request SDKs send all day, `sync` with a cursor:
/// `{"id":…,"op":"sync","profile_id":"gh_…","cursor":<integer>}` in every shape the protocol
/// allows: with or without an `id` (any string or number), members in any order, other members
/// ignored, any JSON whitespace, escapes, a number in any form whose value is an integer. A
/// repeated member counts with its last value, as for the general parser.
///
/// It answers `nil` for a line the general road would refuse or read otherwise (another op, a
/// missing or unusable member), which the general road then answers. So does a `sync` without
/// a cursor (or with `"cursor":null`): that is a first sync, which the general road always
/// answers with the whole document from the project's actor, never with "nothing changed".
public struct SyncScan {
    /// The request's `id`, as the answer writes it back.
    public let id: AnswerID
    public let profileID: ProfileID
    public let cursor: UInt64

    /// How an answer writes a request's `id` back, byte for byte as ``Answer`` writes the
    /// `id` the general parser read: `null` when there is none; the line's own text for a
    /// number (its literal) or a string without escapes (quotes included); a string with
    /// escapes decoded, for ``JSONWriter`` to write anew.
    public enum AnswerID: Sendable, Equatable {
        case null
        case inLine(Range<Int>)
        case decoded(String)
    }

    public static func scan(_ line: UnsafeRawBufferPointer) -> SyncScan? {
        var reader = QuickJSONReader(bytes: line)
        var profile: QuickJSONReader.Text?
        var cursor: Int64?
        let id = reader.readRequest(op: Key.sync) { reader, name in
            if reader.matches(name, Key.profileID) { return reader.readText(into: &profile) }
            if reader.matches(name, Key.cursor) { return reader.readInteger(into: &cursor) }
            return reader.skipValue()
        }
        // The range `sync` takes (`SyncOperations.syncCursor`): a negative cursor is its error.
        guard let id, let profile, let cursor, cursor >= 0, let profileID = ProfileID(profile, in: reader) else { return nil }
        return SyncScan(id: AnswerID(id, in: reader), profileID: profileID, cursor: UInt64(cursor))
    }

    /// `{"id":<id>,"ok":true,"cursor":<cursor>,"changed":[]}\n`, exactly as the general writer
    /// writes it. `line` is the line this scan read.
    public func nothingChanged(in line: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        out.append(contentsOf: #"{"id":"#.utf8)
        switch id {
        case .null: out.append(contentsOf: "null".utf8)
        case .inLine(let range): out.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[range]))
        case .decoded(let string): JSONWriter.appendString(string, to: &out)
        }
        out.append(contentsOf: #","ok":true,"cursor":"#.utf8)
        JSONWriter.appendInt(Int64(cursor), to: &out)
        out.append(contentsOf: #","changed":[]}"#.utf8)
        out.append(UInt8(ascii: "\n"))
        return out
    }

    private enum Key {
        static let sync: StaticString = "sync"
        static let profileID: StaticString = "profile_id"
        static let cursor: StaticString = "cursor"
    }
}

extension SyncScan.AnswerID {
    init(_ id: QuickJSONReader.RequestID, in reader: QuickJSONReader) {
        switch id {
        case .absent: self = .null
        case .number(let literal): self = .inLine(literal)
        // The quotes go with the string's content.
        case .string(.inLine(let content)): self = .inLine((content.lowerBound - 1)..<(content.upperBound + 1))
        case .string(.escaped(let range)): self = .decoded(reader.decoded(range))
        }
    }
}
