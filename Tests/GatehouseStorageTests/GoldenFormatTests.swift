import Foundation
import GatehouseBase
@testable import GatehouseStorage
import GatehouseTesting
import Testing

/// Frozen files of format version 1 (etcd's testdata/ habit): an accidental format change
/// fails here. Regenerate only on purpose, with GATEHOUSE_UPDATE_FIXTURES=1.
///
/// Byte-for-byte comparisons use only stored (uncompressed) frames and chunks, because another
/// zlib build (zlib-ng, say) may deflate the same input to different, equally valid bytes; the
/// compressed fixtures are checked by decoding them, which is what compatibility means.
@Suite struct GoldenFormat {
    static let databaseID = DatabaseID(bytes: Array(1...16))!

    /// Stored frames only: a single record, a batch with an empty payload, an incompressible record, a seal.
    static func storedSegment() -> [UInt8] {
        var builder = SegmentBuilder(databaseID: databaseID, salt: 0xA1B2_C3D4, policy: .always, tornWindowBytes: 48 + (4 << 20))
        builder.frame([WALRecord(kind: 1, payload: Array("hello".utf8))])
        builder.frame([WALRecord(kind: 2, payload: [1, 2, 3]), WALRecord(kind: 3, payload: []), WALRecord(kind: 4, payload: Array("gatehouse".utf8))])
        builder.frame([WALRecord(kind: 5, payload: SeededRandomSource(seed: 42).randomBytes(count: 300))])
        builder.seal()
        return builder.bytes
    }

    static let storedSegmentRecords: [WALRecord] = [
        WALRecord(kind: 1, payload: Array("hello".utf8)),
        WALRecord(kind: 2, payload: [1, 2, 3]), WALRecord(kind: 3, payload: []), WALRecord(kind: 4, payload: Array("gatehouse".utf8)),
        WALRecord(kind: 5, payload: SeededRandomSource(seed: 42).randomBytes(count: 300)),
    ]

    static let deflatedRecords: [WALRecord] = (0..<40).map { WALRecord(kind: 9, payload: Array("project p\($0 % 3) balance \($0 * 10)".utf8)) }

    static func deflatedSegment() -> [UInt8] {
        var builder = SegmentBuilder(databaseID: databaseID, salt: 0x0BAD_F00D, policy: .everysec, tornWindowBytes: 16 << 20)
        builder.frame(deflatedRecords)
        builder.seal()
        return builder.bytes
    }

    static let snapshotHeader = SnapshotHeader(streamID: 42, lsn: 1234, createdMs: 1_700_000_000_000, metadata: Array("project-a".utf8))
    static let storedSnapshotBody = SeededRandomSource(seed: 9).randomBytes(count: 2000)
    static let deflatedSnapshotBody: [UInt8] = (0..<(2 * SnapshotFile.chunkBytes + 1000)).map { UInt8(truncatingIfNeeded: $0 / 100) }

    static let manifest = Manifest(
        databaseID: databaseID, replayFromLSN: 1000,
        snapshots: [ManifestEntry(streamID: 1, file: "p1-5.snap", lsn: 990), ManifestEntry(streamID: 7, file: "p7-2.snap", lsn: 1001)],
        runtimeMetadata: [1, 2, 3]
    )

    @Test func theStoredSegmentMatchesItsGoldenFileByteForByte() throws {
        try expectGolden("segment-v1.wal", Self.storedSegment())
    }

    @Test func theGoldenSegmentsDecode() throws {
        var records: [WALRecord] = []
        let stored = SegmentScanner().scan(file: "/f/0000000000000001.wal", bytes: try fixture("segment-v1.wal"), previousBodyCRC: 0) { _, batch in
            records += batch
        }
        #expect(records == Self.storedSegmentRecords)
        #expect(stored.end == .sealed(nextLSN: 6))
        #expect(stored.header?.databaseID == Self.databaseID)

        records = []
        let deflated = SegmentScanner().scan(file: "/f/0000000000000001.wal", bytes: try fixture("segment-v1-deflate.wal"), previousBodyCRC: 0) { frame, batch in
            #expect(frame.header.kind == .seal || frame.header.codec == .deflate)
            records += batch
        }
        #expect(records == Self.deflatedRecords)
        #expect(deflated.end == .sealed(nextLSN: 41))
        #expect(deflated.header?.policy == .everysec)
    }

    @Test func theGoldenSegmentOpensAsALog() async throws {
        let disk = FaultyFileSystem()
        disk.setContents(try fixture("segment-v1.wal"), of: walDirectory + "/0000000000000001.wal")
        var options = testOptions()
        options.databaseID = Self.databaseID
        let opened = try openLog(disk, options)
        #expect(opened.replayed.map(\.record) == Self.storedSegmentRecords)
        #expect(try opened.log.append(WALRecord(kind: 1, payload: [])) == 6)
        await opened.log.close()
    }

    @Test func theStoredSnapshotMatchesItsGoldenFileByteForByte() throws {
        try expectGolden("snapshot-v1.snap", SnapshotFile.encode(header: Self.snapshotHeader, body: Self.storedSnapshotBody))
    }

    @Test func theGoldenSnapshotsDecode() throws {
        let (header, body) = try SnapshotFile.decode(try fixture("snapshot-v1.snap"))
        #expect(header == Self.snapshotHeader)
        #expect(body == Self.storedSnapshotBody)
        let (deflatedHeader, deflatedBody) = try SnapshotFile.decode(try fixture("snapshot-v1-deflate.snap"))
        #expect(deflatedHeader == Self.snapshotHeader)
        #expect(deflatedBody == Self.deflatedSnapshotBody)
    }

    @Test func theManifestMatchesItsGoldenFileByteForByte() throws {
        try expectGolden("MANIFEST-v1", ManifestFile.encode(Self.manifest))
        #expect(try ManifestFile.decode(try fixture("MANIFEST-v1")) == Self.manifest)
    }

    /// Writes the compressed fixtures too when updating; they are only ever decoded.
    @Test func updateCompressedFixturesWhenAsked() throws {
        guard updating else { return }
        try write("segment-v1-deflate.wal", Self.deflatedSegment())
        try write("snapshot-v1-deflate.snap", SnapshotFile.encode(header: Self.snapshotHeader, body: Self.deflatedSnapshotBody))
    }

    // MARK: Fixture files

    private var updating: Bool { ProcessInfo.processInfo.environment["GATEHOUSE_UPDATE_FIXTURES"] == "1" }

    private func expectGolden(_ name: String, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
        if updating { try write(name, bytes) }
        let golden = try fixture(name)
        #expect(golden == bytes, "\(name) changed: the on-disk format differs from version 1", sourceLocation: sourceLocation)
    }

    private func fixture(_ name: String) throws -> [UInt8] {
        if updating { return Array(try Data(contentsOf: sourceFixtures.appendingPathComponent(name))) }
        let directory = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        return Array(try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    private func write(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: sourceFixtures.appendingPathComponent(name))
    }

    private var sourceFixtures: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    }
}
