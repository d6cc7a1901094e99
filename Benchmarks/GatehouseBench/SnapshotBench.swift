import GatehouseStorage

/// `SnapshotFile` on a body of M MiB: writing (compressing and checksumming each 1 MiB chunk,
/// hashing the file, writing a temporary file, fsync, rename, directory fsync) and reading
/// back (every checksum verified, every chunk inflated). The read follows the write, so the
/// file comes from the page cache.
enum SnapshotBench {
    struct Result: Sendable {
        let bodyBytes: Int
        let fileBytes: Int
        let writeSeconds: Double
        let readSeconds: Double
    }

    static func measure(_ options: DurabilityOptions) throws(BenchFailure) -> Result {
        let directory = try ScratchDirectory.make(in: options.parentDirectory)
        defer { ScratchDirectory.remove(directory) }
        var generator = BenchPayload(seed: 7)
        let body = generator.snapshotBody(bytes: options.snapshotMiB << 20)
        let path = directory + "/bench.snap"
        let header = SnapshotHeader(streamID: 1, lsn: 1, createdMs: 0)
        let fileSystem = NativeFileSystem()
        do {
            let writeStart = LoadTimeline.now()
            let written = try SnapshotFile.write(path: path, header: header, body: body, fileSystem: fileSystem)
            let readStart = LoadTimeline.now()
            let (readHeader, readBody) = try SnapshotFile.read(path: path, fileSystem: fileSystem)
            let readEnd = LoadTimeline.now()
            guard readHeader == header, readBody == body else {
                throw BenchFailure("the snapshot read back differs from what was written")
            }
            return Result(
                bodyBytes: body.count, fileBytes: written.bytes,
                writeSeconds: Double(readStart - writeStart) / 1e9, readSeconds: Double(readEnd - readStart) / 1e9
            )
        } catch let failure as BenchFailure {
            throw failure
        } catch {
            throw BenchFailure("snapshot of \(options.snapshotMiB) MiB failed: \(error)")
        }
    }
}
