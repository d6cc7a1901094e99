import GatehouseBase
@testable import GatehouseStorage
import GatehouseTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Snapshot files (storage.md C.7): atomic to write, and any damage is detected on read.
@Suite struct SnapshotFiles {
    static let header = SnapshotHeader(streamID: 7, lsn: 99, createdMs: 1_700_000_000_000, metadata: Array("meta".utf8))
    static let path = "/data/snapshots/p7.snap"

    static func disk() -> FaultyFileSystem {
        let disk = FaultyFileSystem()
        try! disk.makeDirectories("/data/snapshots")
        return disk
    }

    @Test(arguments: [0, 1, 5000, SnapshotFile.chunkBytes, 2 * SnapshotFile.chunkBytes + 17])
    func aSnapshotReadsBackAsWritten(size: Int) throws {
        let disk = Self.disk()
        let body = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7 / 3) }
        let written = try SnapshotFile.write(path: Self.path, header: Self.header, body: body, fileSystem: disk)
        let bytes = try #require(disk.contents(of: Self.path))
        #expect(written.bytes == bytes.count)
        #expect(written.bodyBytes == size)
        #expect(written.sha256 == SHA256.hex(bytes))
        #expect(written.path == Self.path)
        let (header, readBody) = try SnapshotFile.read(path: Self.path, fileSystem: disk)
        #expect(header == Self.header)
        #expect(readBody == body)
        #expect(!disk.names(in: "/data/snapshots").contains("p7.snap.tmp"))
    }

    /// A body given in parts reads back joined; each part is cut into chunks of its own (an
    /// empty part makes none), and a stored part and a compressible one mix.
    @Test func aBodyWrittenInPartsReadsBackJoined() throws {
        let disk = Self.disk()
        let noise = SeededRandomSource(seed: 3).randomBytes(count: SnapshotFile.chunkBytes + 5)
        let parts: [[UInt8]] = [[3], [], [UInt8](repeating: 9, count: 2 * SnapshotFile.chunkBytes + 1), noise, [1, 2]]
        let written = try SnapshotFile.write(path: Self.path, header: Self.header, parts: parts, fileSystem: disk)
        let bytes = try #require(disk.contents(of: Self.path))
        #expect(written.bytes == bytes.count)
        #expect(written.bodyBytes == parts.reduce(0) { $0 + $1.count })
        #expect(written.sha256 == SHA256.hex(bytes))
        let (header, body) = try SnapshotFile.read(path: Self.path, fileSystem: disk)
        #expect(header == Self.header)
        #expect(body == parts.flatMap { $0 })
        // Chunks: [3]; the run of nines in three; the noise in two; [1, 2].
        #expect(bytes.suffix(SnapshotFile.footerBytes)[bytes.count - SnapshotFile.footerBytes + 8] == 7)
        // One part is the plain body, byte for byte.
        #expect(SnapshotFile.encode(header: Self.header, parts: [noise]) == SnapshotFile.encode(header: Self.header, body: noise))
    }

    /// Parts compressed one by one, as they are made, give the same file as parts given whole.
    @Test func partsCompressedAheadWriteTheSameFile() throws {
        let noise = SeededRandomSource(seed: 4).randomBytes(count: SnapshotFile.chunkBytes + 5)
        let parts: [[UInt8]] = [[3], [], [UInt8](repeating: 9, count: 2 * SnapshotFile.chunkBytes + 1), noise]
        let disk = Self.disk()
        let written = try SnapshotFile.write(path: Self.path, header: Self.header, compressedParts: parts.map(SnapshotFile.compress),
                                             fileSystem: disk)
        let bytes = try #require(disk.contents(of: Self.path))
        #expect(bytes == SnapshotFile.encode(header: Self.header, parts: parts))
        #expect(written.sha256 == SHA256.hex(bytes))
        #expect(written.bodyBytes == parts.reduce(0) { $0 + $1.count })
        #expect(parts.map(SnapshotFile.compress).map(\.count) == parts.map(\.count))
        #expect(try SnapshotFile.read(path: Self.path, fileSystem: disk).1 == parts.flatMap { $0 })
        let oversized = SnapshotHeader(streamID: 1, lsn: 1, createdMs: 0, metadata: [UInt8](repeating: 0, count: SnapshotFile.metadataBytesMax + 1))
        #expect(throws: StorageError.self) {
            try SnapshotFile.write(path: Self.path, header: oversized, compressedParts: [], fileSystem: disk)
        }
    }

    @Test func aFailedWriteOfPartsReportsTheError() throws {
        let disk = Self.disk()
        disk.writeError = ENOSPC
        #expect(throws: StorageError.self) {
            try SnapshotFile.write(path: Self.path, header: Self.header, parts: [[1], [2]], fileSystem: disk)
        }
        #expect(disk.names(in: "/data/snapshots").isEmpty)
    }

    @Test func aWrittenSnapshotSurvivesPowerLoss() throws {
        let disk = FaultyFileSystem()
        try disk.makeDirectoriesDurably("/data/snapshots")
        _ = try SnapshotFile.write(path: Self.path, header: Self.header, body: [1, 2, 3], fileSystem: disk)
        let afterPowerLoss = disk.crash(seed: 1, .dropUnsynced)
        #expect(try SnapshotFile.read(path: Self.path, fileSystem: afterPowerLoss).1 == [1, 2, 3])
    }

    @Test func aFailedSnapshotWriteLeavesThePreviousOneAndNoTemporaryFile() throws {
        let disk = Self.disk()
        _ = try SnapshotFile.write(path: Self.path, header: Self.header, body: [1], fileSystem: disk)
        disk.writeError = ENOSPC
        #expect(throws: StorageError.self) {
            try SnapshotFile.write(path: Self.path, header: Self.header, body: [2], fileSystem: disk)
        }
        disk.writeError = nil
        #expect(try SnapshotFile.read(path: Self.path, fileSystem: disk).1 == [1])
        #expect(disk.names(in: "/data/snapshots") == ["p7.snap"])
    }

    @Test func everyBitFlipInAStoredSnapshotIsDetected() throws {
        let bytes = SnapshotFile.encode(header: Self.header, body: SeededRandomSource(seed: 5).randomBytes(count: 700))
        for offset in 0..<bytes.count {
            var damaged = bytes
            damaged[offset] ^= UInt8(1) << UInt8(offset % 8)
            #expect(throws: StorageError.self, "flip at \(offset)") { try SnapshotFile.decode(damaged) }
        }
    }

    @Test func bitFlipsInACompressedMultiChunkSnapshotAreDetected() throws {
        let body = (0..<(2 * SnapshotFile.chunkBytes + 5000)).map { UInt8(truncatingIfNeeded: $0 / 7) }
        let bytes = SnapshotFile.encode(header: Self.header, body: body)
        let random = SeededRandomSource(seed: 11)
        // Every byte of the header and footer, and sampled bytes of the chunks.
        var offsets = Array(0..<(64 + 4)) + Array((bytes.count - 32)..<bytes.count)
        offsets += (0..<400).map { _ in Int(random.randomUInt64() % UInt64(bytes.count)) }
        for offset in offsets {
            var damaged = bytes
            damaged[offset] ^= 0x20
            #expect(throws: StorageError.self, "flip at \(offset)") { try SnapshotFile.decode(damaged) }
        }
    }

    @Test func everyTruncationIsDetected() throws {
        let bytes = SnapshotFile.encode(header: Self.header, body: SeededRandomSource(seed: 6).randomBytes(count: 300))
        for length in 0..<bytes.count {
            #expect(throws: StorageError.self, "truncated to \(length)") { try SnapshotFile.decode(Array(bytes[0..<length])) }
        }
        #expect(throws: StorageError.self) { try SnapshotFile.decode(bytes + [0]) }
    }

    @Test func declaredSizesBeyondWhatTheFileCanHoldAreRefusedBeforeAllocating() throws {
        var bytes = SnapshotFile.encode(header: Self.header, body: [1, 2, 3])
        let footer = bytes.count - 32
        // A footer (with a valid checksum) claiming a petabyte body and a billion chunks.
        bytes.replaceSubrange(footer + 8..<footer + 12, with: [0xFF, 0xFF, 0xFF, 0x3F])
        bytes.replaceSubrange(footer + 16..<footer + 24, with: [0, 0, 0, 0, 0, 0, 4, 0])
        bytes.storeLE32(CRC32C.checksum(bytes[footer..<footer + 28]), at: footer + 28)
        #expect {
            try SnapshotFile.decode(bytes)
        } throws: { error in
            (error as? StorageError)?.code == .corrupt
        }
    }

    @Test func anEmptyOrMissingFileIsReported() throws {
        let disk = Self.disk()
        disk.setContents([], of: Self.path)
        #expect {
            try SnapshotFile.read(path: Self.path, fileSystem: disk)
        } throws: { error in
            let error = error as? StorageError
            return error?.code == .corrupt && error?.message.contains("empty") == true && error?.message.contains(Self.path) == true
        }
        #expect {
            try SnapshotFile.read(path: "/data/snapshots/none.snap", fileSystem: disk)
        } throws: { error in
            (error as? StorageError)?.code == .notFound
        }
    }

    @Test func oversizedMetadataIsRefused() {
        var header = Self.header
        header.metadata = [UInt8](repeating: 1, count: SnapshotFile.metadataBytesMax + 1)
        #expect(throws: StorageError.self) { try SnapshotFile.write(path: Self.path, header: header, body: [], fileSystem: Self.disk()) }
    }
}

/// The manifest (storage.md C.7): atomic, checksummed, and never guessed at when damaged.
@Suite struct ManifestFiles {
    static let manifest = Manifest(
        databaseID: DatabaseID(bytes: Array(100..<116)), replayFromLSN: 4242,
        snapshots: [ManifestEntry(streamID: 1, file: "a.snap", lsn: 4000), ManifestEntry(streamID: 2, file: "b.snap", lsn: 4241)],
        runtimeMetadata: Array("policy=always".utf8)
    )

    @Test func aManifestReadsBackAsWritten() throws {
        let disk = FaultyFileSystem()
        try disk.makeDirectoriesDurably("/data")
        #expect(try ManifestFile.read(directory: "/data", fileSystem: disk) == nil)
        try ManifestFile.write(Self.manifest, directory: "/data", fileSystem: disk)
        #expect(try ManifestFile.read(directory: "/data", fileSystem: disk) == Self.manifest)
        let minimal = Manifest(replayFromLSN: 1)
        try ManifestFile.write(minimal, directory: "/data", fileSystem: disk)
        #expect(try ManifestFile.read(directory: "/data", fileSystem: disk) == minimal)
        #expect(disk.names(in: "/data") == ["MANIFEST"])
        #expect(disk.crash(seed: 1, .dropUnsynced).contents(of: "/data/MANIFEST") == ManifestFile.encode(minimal))
    }

    @Test func everyBitFlipAndTruncationIsDetected() throws {
        let bytes = ManifestFile.encode(Self.manifest)
        for offset in 0..<bytes.count {
            for bit in [0, 5] {
                var damaged = bytes
                damaged[offset] ^= UInt8(1) << UInt8(bit)
                #expect(throws: StorageError.self, "flip at \(offset)") { try ManifestFile.decode(damaged) }
            }
        }
        for length in 0..<bytes.count {
            #expect(throws: StorageError.self) { try ManifestFile.decode(Array(bytes[0..<length])) }
        }
    }

    @Test func aDamagedManifestIsReportedNotIgnored() throws {
        let disk = FaultyFileSystem()
        try disk.makeDirectories("/data")
        try ManifestFile.write(Self.manifest, directory: "/data", fileSystem: disk)
        disk.flipBit(path: "/data/MANIFEST", offset: 20)
        #expect {
            try ManifestFile.read(directory: "/data", fileSystem: disk)
        } throws: { error in
            let error = error as? StorageError
            return error?.code == .corrupt && error?.message.contains("/data/MANIFEST") == true
        }
    }

    @Test func snapshotFileNamesMustBePlainNames() {
        let disk = FaultyFileSystem()
        for name in ["", ".", "..", "../x.snap", "a/b.snap"] {
            let manifest = Manifest(replayFromLSN: 1, snapshots: [ManifestEntry(streamID: 1, file: name, lsn: 1)])
            #expect(throws: StorageError.self) { try ManifestFile.write(manifest, directory: "/", fileSystem: disk) }
        }
    }
}
