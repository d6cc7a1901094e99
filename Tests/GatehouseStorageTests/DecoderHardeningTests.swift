import GatehouseBase
@testable import GatehouseStorage
import Testing

/// Damaged input never crashes the decoders, never makes them allocate past the file's own
/// bounds, and never yields a record that was not written (storage.md Part D, item 2; Redis's
/// corrupt-dump fuzzer). Bounded in CI; GATEHOUSE_SOAK=1 runs many more iterations.
@Suite struct DecoderHardening {
    static func segment() -> (bytes: [UInt8], records: [WALRecord], offsets: [Int]) {
        var builder = SegmentBuilder()
        let random = SeededRandomSource(seed: 2024)
        var records: [WALRecord] = []
        for index in 0..<30 {
            let batch = (0..<(index % 4 + 1)).map { item in
                index % 3 == 0
                    ? WALRecord(kind: UInt16(item), payload: [UInt8](repeating: UInt8(index), count: 300 + item))
                    : WALRecord(kind: UInt16(item), payload: random.randomBytes(count: Int(random.randomUInt64() % 200)))
            }
            builder.frame(batch)
            records += batch
        }
        builder.seal()
        return (builder.preallocated(to: builder.bytes.count + 16 << 10), records, builder.frameOffsets)
    }

    @Test func damagedSegmentsNeverCrashAndNeverYieldAnUnwrittenRecord() {
        let (original, written, offsets) = Self.segment()
        let random = SeededRandomSource(seed: 77)
        func draw(_ bound: Int) -> Int { Int(random.randomUInt64() % UInt64(bound)) }
        let iterations = soak ? 20_000 : 600
        var outcomes: [String: Int] = [:]
        for iteration in 0..<iterations {
            var bytes = original
            switch iteration % 5 {
            case 0:
                var positions = Set<Int>()
                let flips = draw(2) + 1
                while positions.count < flips { positions.insert(draw(bytes.count)) }
                for position in positions { bytes[position] ^= UInt8(1 << draw(8)) }
            case 1:
                bytes = Array(bytes.prefix(draw(bytes.count)))
            case 2:
                // A length set to anything, behind a header checksum that still matches.
                let frame = offsets[draw(offsets.count)]
                bytes.storeLE32(UInt32(truncatingIfNeeded: random.randomUInt64()), at: frame + 8 + 4 * draw(2))
                bytes.storeLE32(CRC32C.checksum(bytes[(frame + 8)..<(frame + 48)]), at: frame + 4)
            case 3:
                // A frame duplicated over another (a replayed or misdirected write).
                let source = draw(offsets.count - 1)
                let target = draw(offsets.count - 1)
                let length = offsets[source + 1] - offsets[source]
                let copy = Array(bytes[offsets[source]..<offsets[source] + length])
                bytes.replaceSubrange(offsets[target]..<min(bytes.count, offsets[target] + length), with: copy)
            default:
                // A run of zeros or garbage (a lost or torn write).
                let start = draw(bytes.count)
                let end = min(bytes.count, start + draw(3000))
                let fill: UInt8 = iteration % 2 == 0 ? 0 : UInt8(draw(256))
                for index in start..<end { bytes[index] = fill }
            }
            var replayed: [WALRecord] = []
            let scan = SegmentScanner().scan(file: "/w/0000000000000001.wal", bytes: bytes, previousBodyCRC: 0) { _, records in
                replayed += records
            }
            #expect(replayed == Array(written.prefix(replayed.count)), "iteration \(iteration) yielded records that were not written")
            switch RecoveryPlanner().plan([scan]) {
            case .useAsIs: outcomes["ok", default: 0] += 1
            case .truncateTail: outcomes["torn", default: 0] += 1
            case .refuse: outcomes["refused", default: 0] += 1
            }
        }
        #expect(outcomes.count == 3, "the damage exercised every verdict: \(outcomes)")
    }

    @Test func damagedSnapshotsAndManifestsNeverCrash() {
        let snapshot = SnapshotFile.encode(
            header: SnapshotHeader(streamID: 1, lsn: 2, createdMs: 3, metadata: [4, 5]),
            body: (0..<5000).map { UInt8(truncatingIfNeeded: $0 / 9) }
        )
        let manifest = ManifestFile.encode(Manifest(replayFromLSN: 9, snapshots: [ManifestEntry(streamID: 1, file: "x.snap", lsn: 8)]))
        let random = SeededRandomSource(seed: 5)
        for iteration in 0..<(soak ? 20_000 : 400) {
            for original in [snapshot, manifest] {
                var bytes = original
                if iteration % 2 == 0 {
                    var positions = Set<Int>()
                    while positions.count < iteration % 3 + 1 { positions.insert(Int(random.randomUInt64() % UInt64(bytes.count))) }
                    for position in positions { bytes[position] ^= UInt8(1 << (iteration % 8)) }
                } else {
                    bytes = Array(bytes.prefix(Int(random.randomUInt64() % UInt64(bytes.count))))
                }
                if original == snapshot {
                    #expect(throws: StorageError.self) { try SnapshotFile.decode(bytes) }
                } else {
                    #expect(throws: StorageError.self) { try ManifestFile.decode(bytes) }
                }
            }
        }
    }
}
