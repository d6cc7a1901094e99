import GatehouseBase
@testable import GatehouseStorage
import Testing

/// The codecs of docs/data-format.md: every field round-trips and every damaged header is caught.
@Suite struct FrameAndSegmentCodecs {
    let header = SegmentHeader(
        databaseID: DatabaseID(bytes: Array(1...16))!, salt: 77, firstLSN: 12345, createdMs: 1_700_000_000_123,
        policy: .everysec, tornWindowBytes: 9999
    )

    @Test func segmentHeaderRoundTrips() throws {
        let bytes = header.encoded()
        #expect(bytes.count == 64)
        #expect(Array(bytes[0..<8]) == Array("GHWALSEG".utf8))
        #expect(try SegmentHeader.decode(bytes) == header)
    }

    @Test func everyBitFlipInASegmentHeaderIsCaught() {
        let bytes = header.encoded()
        for offset in 0..<bytes.count {
            for bit in 0..<8 {
                var damaged = bytes
                damaged[offset] ^= 1 << bit
                #expect(throws: SegmentHeader.Problem.self) { try SegmentHeader.decode(damaged) }
            }
        }
    }

    @Test func aNewerSegmentVersionIsReportedAsUnsupported() {
        var bytes = header.encoded()
        bytes[8] = 2
        bytes.storeLE32(CRC32C.checksum(bytes[0..<60]), at: 60)
        #expect(throws: SegmentHeader.Problem.unsupportedVersion(2)) { try SegmentHeader.decode(bytes) }
    }

    @Test func frameHeaderRoundTripsAndCatchesEveryBitFlip() throws {
        let frame = FrameHeader(
            bodyLength: 100, rawLength: 300, firstLSN: 42, recordCount: 3, codec: .deflate, kind: .data,
            salt: 5, previousBodyCRC: 0xDEAD_BEEF, bodyCRC: 0x1234_5678
        )
        let bytes = frame.encoded()
        #expect(bytes.count == 48)
        #expect(Array(bytes[0..<4]) == Array("WALF".utf8))
        #expect(try bytes.withUnsafeBytes { try FrameHeader.decode($0) } == frame)
        for offset in 0..<bytes.count {
            var damaged = bytes
            damaged[offset] ^= 0x10
            #expect(throws: FrameHeader.Problem.self) { try damaged.withUnsafeBytes { try FrameHeader.decode($0) } }
        }
    }

    @Test func smallFramesAreStoredAndCompressibleOnesDeflated() {
        let encoder = FrameEncoder()
        let small = encoder.encodeData([[WALRecord(kind: 1, payload: Array("hi".utf8))]], firstLSN: 1, salt: 0, previousBodyCRC: 0)
        #expect(small.header.codec == .stored)
        #expect(small.header.rawLength == 8)
        #expect(small.bytes.count == 48 + 8)
        let big = encoder.encodeData([[WALRecord(kind: 1, payload: [UInt8](repeating: 65, count: 4000))]], firstLSN: 2, salt: 0, previousBodyCRC: 0)
        #expect(big.header.codec == .deflate)
        #expect(big.header.bodyLength < 200)
        let noise = encoder.encodeData([[WALRecord(kind: 1, payload: SeededRandomSource(seed: 3).randomBytes(count: 4000))]], firstLSN: 3, salt: 0, previousBodyCRC: 0)
        #expect(noise.header.codec == .stored)
        #expect(noise.bytes.count % 8 == 0)
    }

    @Test func recordsSurviveAFrameRoundTripThroughTheScanner() {
        var builder = SegmentBuilder()
        let batches: [[WALRecord]] = [
            [WALRecord(kind: 0, payload: [])],
            (0..<20).map { WALRecord(kind: UInt16($0), payload: [UInt8](repeating: UInt8($0), count: $0 * 50)) },
            [WALRecord(kind: 65535, payload: SeededRandomSource(seed: 1).randomBytes(count: 1000))],
        ]
        for batch in batches { builder.frame(batch) }
        builder.seal()
        var seen: [WALRecord] = []
        let scan = SegmentScanner().scan(file: "/x/" + builder.name, bytes: builder.preallocated(to: 65536), previousBodyCRC: 0) { _, records in
            seen += records
        }
        #expect(seen == batches.flatMap { $0 })
        #expect(scan.end == .sealed(nextLSN: 23))
        #expect(scan.records == 22)
        #expect(scan.dataFrames == 3)
    }

    @Test func frameBodiesWithBadRecordLengthsAreRefused() {
        var body: [UInt8] = []
        FrameBody.append(WALRecord(kind: 1, payload: [1, 2, 3]), to: &body)
        let valid = body.withUnsafeBytes { FrameBody.records($0, count: 1) }
        #expect((try? valid.get()) == [WALRecord(kind: 1, payload: [1, 2, 3])])
        for (bytes, count) in [(body, UInt32(2)), (Array(body.dropLast()), 1), (body + [0], 1), ([0xFF, 0xFF, 0xFF, 0x7F, 0, 0], 1)] {
            let result = bytes.withUnsafeBytes { FrameBody.records($0, count: count) }
            #expect((try? result.get()) == nil)
        }
    }

    @Test func segmentNamesAreSixteenLowercaseHexDigits() {
        #expect(WALFormat.segmentName(firstLSN: 1) == "0000000000000001.wal")
        #expect(WALFormat.segmentName(firstLSN: 0xA3F01) == "00000000000a3f01.wal")
        #expect(WALFormat.firstLSN(ofSegmentName: "00000000000a3f01.wal") == 0xA3F01)
        for bad in ["00000000000A3F01.wal", "1.wal", "0000000000000001.wal.broken-1", "next.tmp", "000000000000001g.wal"] {
            #expect(WALFormat.firstLSN(ofSegmentName: bad) == nil)
        }
    }
}
