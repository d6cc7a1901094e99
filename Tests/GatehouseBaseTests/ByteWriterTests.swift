import GatehouseBase
import Testing

/// Fixed-width integers are written little-endian (docs/data-format.md), byte for byte what
/// their in-memory little-endian bytes are, and read back as they were.
@Suite struct ByteWriterFixedWidth {
    private static let values: [UInt64] = [0, 1, 0x7F, 0x80, 0xFF, 0x1234, 0xFFFF, 0x0102_0304, 0xFFFF_FFFF,
                                           0x0102_0304_0506_0708, 0x8000_0000_0000_0000, .max]

    /// The bytes as `withUnsafeBytes(of:)` sees the little-endian value: the reference.
    private static func reference<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }

    @Test(arguments: values)
    func eachWidthWritesItsLittleEndianBytes(_ value: UInt64) throws {
        var writer = ByteWriter()
        writer.writeUInt16(UInt16(truncatingIfNeeded: value))
        writer.writeUInt32(UInt32(truncatingIfNeeded: value))
        writer.writeUInt64(value)
        #expect(writer.bytes == Self.reference(UInt16(truncatingIfNeeded: value)) + Self.reference(UInt32(truncatingIfNeeded: value))
            + Self.reference(value))

        var reader = ByteReader(writer.bytes)
        #expect(try reader.readUInt16() == UInt16(truncatingIfNeeded: value))
        #expect(try reader.readUInt32() == UInt32(truncatingIfNeeded: value))
        #expect(try reader.readUInt64() == value)
        #expect(reader.remaining == 0)
    }
}
