import CGatehouseLinux

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): the checksum of every frame,
/// segment header, snapshot chunk and manifest. The CPU's own instruction where there is one
/// (x86-64's SSE 4.2, about 8 GB/s: a snapshot's or a restart's hundreds of megabytes are
/// checked in tens of milliseconds); elsewhere slice-by-8 in plain Swift, about 1.6 GB/s. The
/// value for "123456789" is 0xE3069283.
///
/// A checksum on disk is set in stone: this function must never change what it returns.
public enum CRC32C {
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        update(0, bytes)
    }

    public static func checksum(_ bytes: some Collection<UInt8>) -> UInt32 {
        update(0, bytes)
    }

    public static func update(_ crc: UInt32, _ bytes: some Collection<UInt8>) -> UInt32 {
        if let result = bytes.withContiguousStorageIfAvailable({ update(crc, UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return Array(bytes).withUnsafeBytes { update(crc, $0) }
    }

    /// Continues a checksum: `update(checksum(a), b) == checksum(a + b)`.
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard hardwareAvailable, let base = bytes.baseAddress else { return updateBySlicing(crc, bytes) }
        return ~cgh_crc32c_hardware(~crc, base, bytes.count)
    }

    static let hardwareAvailable = cgh_crc32c_hardware_available() != 0

    /// ``update(_:_:)`` without the CPU's instruction: the reference the instruction is tested
    /// against, and the way on CPUs without it.
    static func updateBySlicing(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var value = ~crc
        let count = bytes.count
        var offset = 0
        table.withUnsafeBufferPointer { table in
            while count - offset >= 8 {
                let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) ^ UInt64(value)
                value = table[7 * 256 + Int(word & 0xFF)]
                    ^ table[6 * 256 + Int((word >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((word >> 16) & 0xFF)]
                    ^ table[4 * 256 + Int((word >> 24) & 0xFF)]
                    ^ table[3 * 256 + Int((word >> 32) & 0xFF)]
                    ^ table[2 * 256 + Int((word >> 40) & 0xFF)]
                    ^ table[1 * 256 + Int((word >> 48) & 0xFF)]
                    ^ table[Int(word >> 56)]
                offset += 8
            }
            while offset < count {
                value = table[Int((value ^ UInt32(bytes[offset])) & 0xFF)] ^ (value >> 8)
                offset += 1
            }
        }
        return ~value
    }

    /// table[k * 256 + b]: the CRC of byte b followed by k zero bytes.
    private static let table: [UInt32] = {
        let polynomial: UInt32 = 0x82F6_3B78
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ polynomial : crc >> 1 }
            table[byte] = crc
        }
        for byte in 0..<256 {
            var crc = table[byte]
            for slice in 1..<8 {
                crc = table[Int(crc & 0xFF)] ^ (crc >> 8)
                table[slice * 256 + byte] = crc
            }
        }
        return table
    }()
}
