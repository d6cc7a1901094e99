@testable import GatehouseStorage
import Testing

/// CRC-32C is set in stone: these are the standard check values.
@Suite struct CRC32CChecksums {
    @Test func standardCheckValueFor123456789() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    }

    @Test func emptyInputIsZero() {
        #expect(CRC32C.checksum([UInt8]()) == 0)
    }

    @Test func rfc3720Vectors() {
        // RFC 3720 (iSCSI), appendix B.4.
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(CRC32C.checksum((0..<32).map { UInt8(31 - $0) }) == 0x113F_DB5C)
    }

    @Test func updateContinuesAChecksumAcrossSplits() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }
        let whole = CRC32C.checksum(bytes)
        for split in [0, 1, 7, 8, 9, 500, 999, 1000] {
            #expect(CRC32C.update(CRC32C.checksum(bytes[..<split]), bytes[split...]) == whole)
        }
    }

    @Test func theTableGivesTheStandardCheckValueToo() {
        let value = Array("123456789".utf8).withUnsafeBytes { CRC32C.updateBySlicing(0, $0) }
        #expect(value == 0xE306_9283)
    }

    @Test(.enabled(if: CRC32C.hardwareAvailable, "the CPU has the CRC-32C instruction"))
    func theInstructionAndTheTableAgreeOnEveryLengthAndAlignment() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes.withUnsafeBytes { all in
            for start in 0..<16 {
                for count in [0, 1, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4096 - 16] {
                    let slice = UnsafeRawBufferPointer(rebasing: all[start..<(start + count)])
                    for seed: UInt32 in [0, 0xE306_9283, .max] {
                        #expect(CRC32C.update(seed, slice) == CRC32C.updateBySlicing(seed, slice), "start \(start) count \(count) seed \(seed)")
                    }
                }
            }
        }
    }
}
