import GatehouseStorage
#if canImport(Glibc)
import Glibc
#endif

/// `gatehouse-bench durability`: what durable writes cost, through the server and in the log
/// alone, and how fast the log replays and snapshots are written and read. Each part prints
/// its figures as soon as it has them; a failed part fails the run but does not stop the rest.
enum DurabilityMode {
    static func run(_ options: DurabilityOptions) async -> Int32 {
        warnIfDebugBuild()
        return await measure(options)
    }

    /// Runs the parts `options` names and prints them; answers the exit code.
    static func measure(_ options: DurabilityOptions) async -> Int32 {
        print("durability: on a real disk, temporary directories under \(options.parentDirectory ?? "$TMPDIR or /tmp")")
        var status = BenchExitCode.success
        for part in options.parts {
            let result: Result<String, BenchFailure>
            switch part {
            case .server:
                result = await serverWrites(options)
            case .log:
                result = await BenchThreads.detached { Result { () throws(BenchFailure) in try logAppends(options) } }
            case .replay:
                result = await BenchThreads.detached { Result { () throws(BenchFailure) in try replay(options) } }
            case .snapshot:
                result = await BenchThreads.detached { Result { () throws(BenchFailure) in try snapshot(options) } }
            }
            switch result {
            case .success(let text):
                print(text)
            case .failure(let failure):
                printError("error: durability \(part.rawValue): \(failure)")
                status = failure.exitCode
            }
            fflush(nil)
        }
        return status
    }

    private static func window(_ options: DurabilityOptions) -> String {
        "\(decimal(options.duration.inSeconds)) s per point after \(decimal(options.warmup.inSeconds)) s of warm-up"
    }

    // MARK: Through the server

    /// One server per policy, every client count against it.
    private static func serverWrites(_ options: DurabilityOptions) async -> Result<String, BenchFailure> {
        var table = BenchTable(["policy", "clients", "writes/s", "p50 us", "p99 us", "fsyncs", "writes/fsync", "writes/frame"])
        var label = ""
        for policy in options.policies {
            let server: InProcessServer
            do {
                server = try InProcessServer.start(ServerWriteBench.settings(policy, options))
            } catch {
                return .failure(error)
            }
            label = server.target.label.replacing("fsync \(policy.rawValue), ", with: "")
            let points = await BenchThreads.detached {
                Result { () throws(BenchFailure) in try ServerWriteBench.measure(policy: policy, server: server, options: options) }
            }
            await server.stop()
            switch points {
            case .failure(let failure):
                return .failure(BenchFailure("\(policy.rawValue): \(failure)", exitCode: failure.exitCode))
            case .success(let points):
                for point in points {
                    let report = point.report
                    table.add([
                        policy.rawValue, "\(report.connections)", whole(report.requestsPerSecond),
                        microsecondText(report.latencies.percentile(0.50)), microsecondText(report.latencies.percentile(0.99)),
                        "\(point.wal.syncs)", ratio(point.wal.lastLSN, point.wal.syncs), ratio(point.wal.lastLSN, point.wal.frames),
                    ])
                }
            }
        }
        let heading = "durable writes through the server: \(ServerWriteBench.op), pipeline 1, \(window(options)); "
            + "fsyncs and frames from server.stats over the same window [\(label)]"
        return .success(heading + "\n" + table.text + "\n")
    }

    // MARK: The log alone

    private static func logAppends(_ options: DurabilityOptions) throws(BenchFailure) -> String {
        var table = BenchTable(["policy", "threads", "records/s", "p50 us", "p99 us", "syncs", "records/sync", "records/frame"])
        for policy in options.policies {
            for threads in options.clients {
                let point = try LogAppendBench.measure(policy: policy, threads: threads, options: options)
                table.add([
                    policy.rawValue, "\(threads)", whole(point.recordsPerSecond),
                    microsecondText(point.latencies.percentile(0.50)), microsecondText(point.latencies.percentile(0.99)),
                    "\(point.syncs)", ratio(point.logged, point.syncs), ratio(point.logged, point.frames),
                ])
            }
        }
        let heading = "the log alone: records of \(LogReplayBench.recordBytes) bytes, each thread waits for its record's "
            + "durability before appending the next, \(window(options))"
        return heading + "\n" + table.text + "\n"
    }

    // MARK: Replay and snapshots

    private static func replay(_ options: DurabilityOptions) throws(BenchFailure) -> String {
        let result = try LogReplayBench.measure(options)
        return """
            replay: \(result.records) records of \(LogReplayBench.recordBytes) bytes, \(result.recordsPerFrame) per frame: \
            \(mebibytes(result.rawBytes)) MiB of frame bodies, \(mebibytes(result.storedBytes)) MiB written \
            (\(result.segments) segment(s)); writing them took \(decimal(result.writeSeconds)) s
              WriteAheadLog.open: \(seconds(result.openSeconds)) s = \(whole(result.recordsPerSecond)) records/s, \
            \(megabytesPerSecond(result.rawBytes, seconds: result.openSeconds)) MB/s of frame bodies \
            (\(megabytesPerSecond(result.storedBytes, seconds: result.openSeconds)) MB/s read)
              of which replay, to the last record: \(seconds(result.replaySeconds)) s = \
            \(whole(Double(result.records) / result.replaySeconds)) records/s; the rest seals the last segment and prepares a new one
            """ + "\n"
    }

    private static func snapshot(_ options: DurabilityOptions) throws(BenchFailure) -> String {
        let result = try SnapshotBench.measure(options)
        return """
            snapshot: \(mebibytes(result.bodyBytes)) MiB body -> \(mebibytes(result.fileBytes)) MiB file \
            (\(decimal(Double(result.bodyBytes) / Double(max(1, result.fileBytes)))):1)
              write \(seconds(result.writeSeconds)) s = \(megabytesPerSecond(result.bodyBytes, seconds: result.writeSeconds)) MB/s \
            of body (deflate and CRC32C per 1 MiB chunk, SHA-256 of the file, write, fsync, rename, directory fsync)
              read  \(seconds(result.readSeconds)) s = \(megabytesPerSecond(result.bodyBytes, seconds: result.readSeconds)) MB/s \
            of body (read, every checksum verified, every chunk inflated; from the page cache)
            """ + "\n"
    }

    /// `a / b` with one decimal, `-` when `b` is 0.
    private static func ratio(_ a: Int, _ b: Int) -> String {
        b > 0 ? decimal(Double(a) / Double(b)) : "-"
    }

    /// Seconds with three decimals.
    private static func seconds(_ value: Double) -> String {
        let millis = Int64((value * 1000).rounded())
        let fraction = "\(millis % 1000)"
        return "\(millis / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
