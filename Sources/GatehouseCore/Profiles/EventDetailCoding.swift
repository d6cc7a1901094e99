public import GatehouseBase

/// Event details in binary: a count, then per detail its name, a kind byte and the value
/// (docs/data-format.md, "Event details"). The feed keeps each event's details in this form, one
/// small array instead of a list of strings, and snapshots copy it as it is.
public enum EventDetailCoding {
    public static func pack(_ details: [EventDetail]) -> [UInt8] {
        guard !details.isEmpty else { return [0] }
        var writer = ByteWriter(capacity: 16 * details.count)
        write(details, into: &writer)
        return writer.bytes
    }

    /// The details of a packed form this module wrote; damage (impossible for bytes that were
    /// checked when read) yields none.
    public static func unpack(_ bytes: [UInt8]) -> [EventDetail] {
        var reader = ByteReader(bytes)
        return (try? read(&reader)) ?? []
    }

    enum DetailKind: UInt8 {
        case string = 1
        case int = 2
        case profiles = 3
        case strings = 4
        case bool = 5
    }

    public static func write(_ details: [EventDetail], into writer: inout ByteWriter) {
        writer.writeArray(details) { writer, detail in
            writer.writeString(detail.name)
            switch detail.value {
            case .string(let string):
                writer.writeUInt8(DetailKind.string.rawValue)
                writer.writeString(string)
            case .int(let int):
                writer.writeUInt8(DetailKind.int.rawValue)
                writer.writeVarInt(int)
            case .profiles(let ids):
                writer.writeUInt8(DetailKind.profiles.rawValue)
                writer.writeArray(ids) { $0.writeProfileID($1) }
            case .strings(let strings):
                writer.writeUInt8(DetailKind.strings.rawValue)
                writer.writeArray(strings) { $0.writeString($1) }
            case .bool(let bool):
                writer.writeUInt8(DetailKind.bool.rawValue)
                writer.writeBool(bool)
            }
        }
    }

    /// Checks one packed form and moves past it, without building its values (loading a
    /// snapshot's events keeps their details packed).
    public static func skip(_ reader: inout ByteReader) throws(ByteReaderError) {
        let count = try reader.readCount()
        for _ in 0..<count {
            try reader.skipString()
            try skipValue(&reader)
        }
    }

    /// Checks one detail's kind byte and value and moves past them.
    static func skipValue(_ reader: inout ByteReader) throws(ByteReaderError) {
        let start = reader.offset
        switch DetailKind(rawValue: try reader.readUInt8()) {
        case .string: try reader.skipString()
        case .int: _ = try reader.readVarInt()
        case .profiles:
            let ids = try reader.readCount()
            for _ in 0..<ids { _ = try reader.readProfileID() }
        case .strings:
            let strings = try reader.readCount()
            for _ in 0..<strings { try reader.skipString() }
        case .bool: _ = try reader.readBool()
        case nil: throw ByteReaderError.invalid("event detail", at: start)
        }
    }

    public static func read(_ reader: inout ByteReader) throws(ByteReaderError) -> [EventDetail] {
        try reader.readArray { reader throws(ByteReaderError) -> EventDetail in
            let name = try reader.readString()
            let start = reader.offset
            switch DetailKind(rawValue: try reader.readUInt8()) {
            case .string: return EventDetail(name, .string(try reader.readString()))
            case .int: return EventDetail(name, .int(try reader.readVarInt()))
            case .profiles:
                return EventDetail(name, .profiles(try reader.readArray { reader throws(ByteReaderError) in try reader.readProfileID() }))
            case .strings:
                return EventDetail(name, .strings(try reader.readArray { reader throws(ByteReaderError) in try reader.readString() }))
            case .bool: return EventDetail(name, .bool(try reader.readBool()))
            case nil: throw ByteReaderError.invalid("event detail", at: start)
            }
        }
    }
}
