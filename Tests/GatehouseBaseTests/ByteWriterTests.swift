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

/// A staged writer writes exactly what a plain one writes, after the bytes of the writer it took
/// over, however its writes fall against its buffer: small fields, strings that cross its end,
/// and raw bytes longer than it.
@Suite struct StagedByteWriterBytes {
    /// The same writes into any writer.
    private static func write(_ writer: inout some ByteWriting, strings: [String]) {
        for (index, string) in strings.enumerated() {
            writer.writeUInt8(UInt8(truncatingIfNeeded: index))
            writer.writeBool(index % 2 == 0)
            writer.writeUInt16(UInt16(truncatingIfNeeded: index &* 0x0101))
            writer.writeUInt32(UInt32(truncatingIfNeeded: index &* 0x0102_0304))
            writer.writeUInt64(UInt64(index) &* 0x0102_0304_0506_0708)
            writer.writeVarUInt(UInt64(index) << (index % 60))
            writer.writeVarInt(-Int64(index) << (index % 50))
            writer.writeString(string)
            writer.writeOptional(index % 3 == 0 ? string : nil) { $0.writeString($1) }
            writer.writeArray(Array(string.utf8.prefix(5))) { $0.writeUInt8($1) }
        }
    }

    private static let cases: [[String]] = [
        [],
        ["COINS", "k1", "transaction", "vct_12_0"],
        (0..<40).map { "key-\($0)-Grüße" },
        [String(repeating: "a", count: 255), String(repeating: "b", count: 256), String(repeating: "c", count: 257), "d"],
        [String(repeating: "🎉", count: 300), "", String(repeating: "x", count: 1_000)],
    ]

    @Test(arguments: cases)
    func writesWhatAPlainWriterWrites(_ strings: [String]) {
        var plain = ByteWriter()
        plain.writeString("before")
        Self.write(&plain, strings: strings)

        var target = ByteWriter()
        target.writeString("before")
        var staged = StagedByteWriter(adopting: &target)
        #expect(target.count == 0, "taken over")
        Self.write(&staged, strings: strings)
        #expect(staged.finish().bytes == plain.bytes)
    }
}
