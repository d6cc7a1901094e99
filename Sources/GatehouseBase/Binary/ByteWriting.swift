/// What the binary encoding (docs/data-format.md) is written into: ``ByteWriter``, a growing
/// array, or ``StagedByteWriter``, which gathers small fields on the stack and appends them to
/// a ``ByteWriter`` in one go. Every form of a field is defined once, here, over two primitives
/// (a byte and raw bytes), so an encoder generic over the writer writes the same bytes into
/// either.
///
/// The methods are `@inlinable` for ``ByteWriter``'s reason: a call into another module for
/// every byte would cost more than the byte.
public protocol ByteWriting {
    mutating func writeUInt8(_ value: UInt8)
    /// Raw bytes with no length.
    mutating func writeRaw(_ bytes: UnsafeBufferPointer<UInt8>)

    // The rest have their one definition in the extension below; they are requirements only so
    // that an encoder generic over the writer reaches them directly rather than through a copy
    // of the extension's body.
    mutating func writeBool(_ value: Bool)
    mutating func writeUInt16(_ value: UInt16)
    mutating func writeUInt32(_ value: UInt32)
    mutating func writeUInt64(_ value: UInt64)
    mutating func writeVarUInt(_ value: UInt64)
    mutating func writeVarInt(_ value: Int64)
    mutating func writeBytes(_ bytes: UnsafeBufferPointer<UInt8>)
    mutating func writeString(_ value: String)
}

extension ByteWriting {
    @inlinable public mutating func writeBool(_ value: Bool) {
        writeUInt8(value ? 1 : 0)
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

    /// The bytes of `value`, low first, a byte at a time: into a ``ByteWriter`` about 90
    /// instructions for 8 bytes, where appending them as a raw buffer (`withUnsafeBytes(of:)`)
    /// took Array's generic path at about 220.
    @inlinable mutating func writeLittleEndian<T: FixedWidthInteger>(_ value: T) {
        var shift = 0
        while shift < T.bitWidth {
            writeUInt8(UInt8(truncatingIfNeeded: value >> shift))
            shift += 8
        }
    }

    /// An unsigned LEB128 varint: 7 bits a byte, low bits first.
    @inlinable public mutating func writeVarUInt(_ value: UInt64) {
        var remaining = value
        while remaining >= 0x80 {
            writeUInt8(UInt8(truncatingIfNeeded: remaining) | 0x80)
            remaining >>= 7
        }
        writeUInt8(UInt8(remaining))
    }

    /// A signed varint, zigzag-encoded so small negative numbers stay small.
    @inlinable public mutating func writeVarInt(_ value: Int64) {
        writeVarUInt(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    @inlinable public mutating func writeVarInt(_ value: Int) {
        writeVarInt(Int64(value))
    }

    /// A varint length, then the bytes.
    @inlinable public mutating func writeBytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        writeVarUInt(UInt64(bytes.count))
        writeRaw(bytes)
    }

    /// A varint length, then the UTF-8 bytes.
    @inlinable public mutating func writeString(_ value: String) {
        var copy = value
        copy.withUTF8 { writeBytes($0) }
    }

    /// A presence byte, then the value when present.
    @inlinable public mutating func writeOptional<T>(_ value: T?, _ write: (inout Self, T) -> Void) {
        if let value {
            writeBool(true)
            write(&self, value)
        } else {
            writeBool(false)
        }
    }

    /// A varint count, then each element.
    @inlinable public mutating func writeArray<C: Collection>(_ values: C, _ write: (inout Self, C.Element) -> Void) {
        writeVarUInt(UInt64(values.count))
        for value in values { write(&self, value) }
    }
}
