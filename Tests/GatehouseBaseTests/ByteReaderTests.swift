import GatehouseBase
import Testing

/// Strings read back from disk: ASCII takes a fast path, anything else is validated, and bytes
/// that are not UTF-8 are damage, never repaired.
@Suite struct ByteReaderStrings {
    static func encoded(_ bytes: [UInt8]) -> [UInt8] {
        var writer = ByteWriter()
        writer.writeBytes(bytes)
        return writer.bytes
    }

    @Test(arguments: ["", "evt_123_0", "Grüße, 世界 🎉", String(repeating: "a", count: 300)])
    func writtenStringsReadBackAndSkip(_ text: String) throws {
        var writer = ByteWriter()
        writer.writeString(text)
        writer.writeUInt8(7)
        var reader = ByteReader(writer.bytes)
        #expect(try reader.readString() == text)
        #expect(try reader.readUInt8() == 7)
        var skipper = ByteReader(writer.bytes)
        try skipper.skipString()
        #expect(try skipper.readUInt8() == 7)
    }

    @Test(arguments: [[0xFF], [0x61, 0xC3], [0xE4, 0xB8], [0xED, 0xA0, 0x80], [0x61, 0x80, 0x62]] as [[UInt8]])
    func bytesThatAreNotUTF8AreDamage(_ bytes: [UInt8]) {
        var reader = ByteReader(Self.encoded(bytes))
        #expect(throws: ByteReaderError.invalid("UTF-8 string", at: 0)) { try reader.readString() }
        var skipper = ByteReader(Self.encoded(bytes))
        #expect(throws: ByteReaderError.invalid("UTF-8 string", at: 0)) { try skipper.skipString() }
        #expect(skipper.offset == 0 || skipper.offset == 1, "nothing past the length is consumed")
    }

    @Test func aLengthPastTheEndIsTruncation() {
        var reader = ByteReader([5, 0x61, 0x62])
        #expect(throws: ByteReaderError.truncated(at: 0)) { try reader.readString() }
    }
}
