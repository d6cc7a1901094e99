/// Appends values in Gatehouse's binary encoding (log records, snapshots, the manifest):
/// little-endian fixed-width integers, LEB128 varints, and length-prefixed bytes and strings.
/// The layout is documented in docs/data-format.md; ``ByteReader`` reads it back.
public struct ByteWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public var count: Int { bytes.count }

    public mutating func writeUInt8(_ value: UInt8) {
        bytes.append(value)
    }

    public mutating func writeBool(_ value: Bool) {
        bytes.append(value ? 1 : 0)
    }

    public mutating func writeUInt16(_ value: UInt16) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    public mutating func writeUInt32(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    public mutating func writeUInt64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// An unsigned LEB128 varint: 7 bits a byte, low bits first.
    public mutating func writeVarUInt(_ value: UInt64) {
        var remaining = value
        while remaining >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: remaining) | 0x80)
            remaining >>= 7
        }
        bytes.append(UInt8(remaining))
    }

    /// A signed varint, zigzag-encoded so small negative numbers stay small.
    public mutating func writeVarInt(_ value: Int64) {
        writeVarUInt(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    public mutating func writeVarInt(_ value: Int) {
        writeVarInt(Int64(value))
    }

    /// A varint length, then the bytes.
    public mutating func writeBytes(_ value: some Collection<UInt8>) {
        writeVarUInt(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// A varint length, then the UTF-8 bytes.
    public mutating func writeString(_ value: String) {
        var copy = value
        copy.withUTF8 { writeBytes($0) }
    }

    /// A presence byte, then the value when present.
    public mutating func writeOptional<T>(_ value: T?, _ write: (inout ByteWriter, T) -> Void) {
        if let value {
            writeBool(true)
            write(&self, value)
        } else {
            writeBool(false)
        }
    }

    /// A varint count, then each element.
    public mutating func writeArray<C: Collection>(_ values: C, _ write: (inout ByteWriter, C.Element) -> Void) {
        writeVarUInt(UInt64(values.count))
        for value in values { write(&self, value) }
    }

    /// Raw bytes with no length (fixed-size fields such as digests).
    public mutating func writeRaw(_ value: some Collection<UInt8>) {
        bytes.append(contentsOf: value)
    }
}
