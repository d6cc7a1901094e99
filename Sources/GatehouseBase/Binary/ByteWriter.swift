/// Appends values in Gatehouse's binary encoding (log records, snapshots, the manifest):
/// little-endian fixed-width integers, LEB128 varints, and length-prefixed bytes and strings
/// (``ByteWriting`` defines each form). The layout is documented in docs/data-format.md;
/// ``ByteReader`` reads it back.
///
/// Its methods are `@inlinable`: records and snapshots are written a field at a time, and a call
/// into another module for every byte would cost more than the byte.
public struct ByteWriter: ByteWriting, Sendable {
    @usableFromInline var storage: [UInt8]

    /// What has been written so far.
    @inlinable public var bytes: [UInt8] { storage }

    /// Room for `capacity` bytes; none (no allocation) for 0.
    @inlinable public init(capacity: Int = 64) {
        storage = []
        if capacity > 0 { storage.reserveCapacity(capacity) }
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

    /// A varint length, then the bytes.
    @inlinable public mutating func writeBytes(_ value: some Collection<UInt8>) {
        writeVarUInt(UInt64(value.count))
        storage.append(contentsOf: value)
    }

    @inlinable public mutating func writeRaw(_ bytes: UnsafeBufferPointer<UInt8>) {
        storage.append(contentsOf: bytes)
    }

    /// Raw bytes with no length (fixed-size fields such as digests).
    @inlinable public mutating func writeRaw(_ value: some Collection<UInt8>) {
        storage.append(contentsOf: value)
    }
}
