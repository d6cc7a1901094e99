/// Appends values in Gatehouse's binary encoding (log records, snapshots, the manifest):
/// little-endian fixed-width integers, LEB128 varints, and length-prefixed bytes and strings.
/// The layout is documented in docs/data-format.md; ``ByteReader`` reads it back.
///
/// Its methods are `@inlinable`: records and snapshots are written a field at a time, and a call
/// into another module for every byte would cost more than the byte.
public struct ByteWriter: Sendable {
    @usableFromInline var storage: [UInt8]

    /// What has been written so far.
    @inlinable public var bytes: [UInt8] { storage }

    @inlinable public init(capacity: Int = 64) {
        storage = []
        storage.reserveCapacity(capacity)
    }

    /// Writes on after the bytes of `bytes`, which it takes over (left empty): no copy.
    @inlinable public init(adopting bytes: inout [UInt8]) {
        storage = []
        swap(&storage, &bytes)
    }

    /// The bytes written, taken out of the writer without a copy.
    @inlinable public consuming func takeBytes() -> [UInt8] {
        storage
    }

    @inlinable public var count: Int { storage.count }

    @inlinable public mutating func writeUInt8(_ value: UInt8) {
        storage.append(value)
    }

    @inlinable public mutating func writeBool(_ value: Bool) {
        storage.append(value ? 1 : 0)
    }

    @inlinable public mutating func writeUInt16(_ value: UInt16) {
        writeLittleEndian(value)
    }

    @inlinable public mutating func writeUInt32(_ value: UInt32) {
        writeLittleEndian(value)
    }

    @inlinable public mutating func writeUInt64(_ value: UInt64) {
        writeLittleEndian(value)
    }

    /// The bytes of `value`, low first, appended one at a time: about 90 instructions for 8
    /// bytes, where appending them as a raw buffer (`withUnsafeBytes(of:)`) took Array's generic
    /// path at about 220 (every profile id written, twice in a `currency.transact` record).
    @inlinable mutating func writeLittleEndian<T: FixedWidthInteger>(_ value: T) {
        var shift = 0
        while shift < T.bitWidth {
            storage.append(UInt8(truncatingIfNeeded: value >> shift))
            shift += 8
        }
    }

    /// An unsigned LEB128 varint: 7 bits a byte, low bits first.
    @inlinable public mutating func writeVarUInt(_ value: UInt64) {
        var remaining = value
        while remaining >= 0x80 {
            storage.append(UInt8(truncatingIfNeeded: remaining) | 0x80)
            remaining >>= 7
        }
        storage.append(UInt8(remaining))
    }

    /// A signed varint, zigzag-encoded so small negative numbers stay small.
    @inlinable public mutating func writeVarInt(_ value: Int64) {
        writeVarUInt(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    @inlinable public mutating func writeVarInt(_ value: Int) {
        writeVarInt(Int64(value))
    }

    /// A varint length, then the bytes.
    @inlinable public mutating func writeBytes(_ value: some Collection<UInt8>) {
        writeVarUInt(UInt64(value.count))
        storage.append(contentsOf: value)
    }

    /// A varint length, then the UTF-8 bytes.
    @inlinable public mutating func writeString(_ value: String) {
        var copy = value
        copy.withUTF8 { writeBytes($0) }
    }

    /// A presence byte, then the value when present.
    @inlinable public mutating func writeOptional<T>(_ value: T?, _ write: (inout ByteWriter, T) -> Void) {
        if let value {
            writeBool(true)
            write(&self, value)
        } else {
            writeBool(false)
        }
    }

    /// A varint count, then each element.
    @inlinable public mutating func writeArray<C: Collection>(_ values: C, _ write: (inout ByteWriter, C.Element) -> Void) {
        writeVarUInt(UInt64(values.count))
        for value in values { write(&self, value) }
    }

    /// Raw bytes with no length (fixed-size fields such as digests).
    @inlinable public mutating func writeRaw(_ value: some Collection<UInt8>) {
        storage.append(contentsOf: value)
    }
}
