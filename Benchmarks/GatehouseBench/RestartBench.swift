import GatehouseBase
import GatehouseCore
import GatehouseRuntime
import GatehouseStorage
#if canImport(Glibc)
import Glibc
#endif

/// `gatehouse-bench restart`: DESIGN.md's restart goals, "one million profiles and five million
/// log records back in service in under 10 s; snapshotting such a tenant in under 3 s", on the
/// real engine in a scratch data directory:
///
/// 1. build: `Engine.open` on an empty directory, one project (a currency, a subscription
///    product granting it, the test store), and N identified profiles each buying the
///    subscription, through the `Project` actor's public methods. W writer tasks each wait for
///    their write to be durable before the next (like W clients at pipeline 1), so the log's
///    group commit packs their records into shared frames;
/// 2. snapshot: `Checkpointer.checkpoint()` timed, its body and file sizes, and the file read
///    back and decoded alone;
/// 3. append: M `currency.transact` credits after the snapshot, spread over the profiles;
/// 4. restart: the engine closed cleanly, then a fresh `Engine.open` timed (snapshot load,
///    replay of the M records, the start-up expiry pass), split into phases by a
///    ``RestartProbe``; the state is checked against what was there before the close;
/// 5. resident memory after the restart.
///
/// Automatic snapshots are off (their thresholds at `Int.max`), so the restart replays every
/// record written after the one snapshot, as the goal asks.
enum RestartBench {
    struct Options: Sendable {
        var profiles = 1_000_000
        var records = 5_000_000
        /// The log's policy while building, appending and after the restart.
        var fsync: DurabilityPolicy = .none
        /// Tasks driving the project actor, each with one write in flight.
        var writers = 16
        /// Where the scratch directory goes; nil: `$TMPDIR`, else `/tmp`.
        var parentDirectory: String?

        /// What `--smoke` runs: every phase, small enough for a debug build in CI.
        static let smoke = Options(profiles: 2_000, records: 10_000, writers: 4)
    }

    static func run(_ options: Options) async -> Int32 {
        warnIfDebugBuild()
        return await measure(options)
    }

    /// Runs every phase, printing each as it finishes; answers the exit code.
    static func measure(_ options: Options) async -> Int32 {
        do throws(BenchFailure) {
            let scratch = try ScratchDirectory.make(in: options.parentDirectory)
            defer { ScratchDirectory.remove(scratch) }
            print("""
                restart: \(options.profiles) profiles, \(options.records) log records after the snapshot, \
                \(options.writers) writer tasks; fsync \(options.fsync.rawValue) for building, appending and the \
                restart; automatic snapshots off, so the restart replays every record after the one snapshot; \
                data under \(scratch)
                """)
            flush()
            let dataDirectory = scratch + "/data"
            let before = try await buildAndClose(dataDirectory, options)
            try await restart(dataDirectory, options, expecting: before)
            return BenchExitCode.success
        } catch {
            printError("error: restart: \(error)")
            return error.exitCode
        }
    }

    // MARK: Before the restart

    /// What the project looked like when the first engine closed.
    private struct Closed {
        let profiles: Int
        let cursor: UInt64
        let lastLSN: LSN
    }

    /// Phases 1 to 3, then a clean close. Everything of the first engine is released when this
    /// returns, so the restart's memory is measured without it.
    private static func buildAndClose(_ dataDirectory: String, _ options: Options) async throws(BenchFailure) -> Closed {
        let probe = RestartProbe()
        let fatal = BenchLog.FatalError()
        let (engine, _) = try await openEngine(dataDirectory, options, fileSystem: NativeFileSystem(), logger: probe.logger,
                                               fatal: fatal)
        let project: Project
        do {
            project = try engine.registry.createProject(id: try validProjectID(), name: nil).value.0
            _ = try await project.putConfig(config)
        } catch {
            await engine.close()
            throw BenchFailure("cannot create the project: \(error)")
        }
        do throws(BenchFailure) {
            let ids = try await build(project, log: engine.log, options)
            try await snapshot(engine, dataDirectory, probe: probe, options)
            try await append(project, log: engine.log, profiles: ids, options)
        } catch {
            await engine.close()
            throw error
        }
        let summary = await project.summary().value
        let lastLSN = engine.log.lastLSN
        await engine.close()
        if let failure = fatal.failure { throw failure }
        return Closed(profiles: summary.profiles, cursor: summary.cursor, lastLSN: lastLSN)
    }

    static let projectID = "bench-restart"

    /// Like ``BenchSetup/config``: an entitlement, a subscription granting it and 100 COINS on
    /// purchase, the currency, and the test store.
    static var config: ProjectConfig {
        var config = ProjectConfig.empty
        config.entitlements = [EntitlementDefinition(id: "pro")]
        config.products = [
            ProductDefinition(id: "pro_monthly", type: .subscription, entitlements: ["pro"],
                              grants: [CurrencyGrant(currency: "COINS", amount: 100, on: .purchase)]),
        ]
        config.currencies = [CurrencyDefinition(code: "COINS", name: "Coins")]
        config.stores.test = true
        return config
    }

    /// Phase 1: N profiles, each created with a customer user id and then buying
    /// `pro_monthly` in the test store (two log records each). Answers the profiles' ids.
    private static func build(_ project: Project, log: WriteAheadLog, _ options: Options) async throws(BenchFailure)
        -> [ProfileID]
    {
        let before = log.stats
        let started = ContinuousClock.now
        let ids = try await runWriters(options.writers) { writer async throws(BenchFailure) -> [ProfileID] in
            var ids: [ProfileID] = []
            ids.reserveCapacity(options.profiles / options.writers + 1)
            for index in stride(from: writer, to: options.profiles, by: options.writers) {
                let id = try await durable(log, "profile.create of user-\(index)") {
                    let created = try await project.createProfile(customerUserID: "user-\(index)", token: nil, by: .server)
                    return (created.value.view.profile.id, created.lsn)
                }
                let transactionID = "\(2_000_000_000_000 + index)"
                try await durable(log, "the purchase of user-\(index)") {
                    let purchase = try await project.reportPurchase(profile: .id(id)) { _, nowMs throws(GatehouseError) in
                        StoreTransaction(
                            store: "test", kind: .subscription, transactionID: transactionID,
                            originalTransactionID: transactionID, productID: "pro_monthly", purchasedMs: nowMs,
                            expiresMs: nowMs + 30 * 86_400_000, token: nil, price: 9.99, currency: "USD",
                            periodType: .normal, environment: .production)
                    }
                    return ((), purchase.lsn)
                }
                ids.append(id)
            }
            return ids
        }.flatMap { $0 }
        let took = ContinuousClock.now - started
        let written = Written(log.stats, since: before)
        print("""
            build: \(ids.count) profiles (profile.create with a customer user id, then a test-store purchase of \
            pro_monthly, which grants 100 COINS): \(written.records) records in \(seconds(took)) s \
            (\(whole(Double(written.records) / took.inSeconds)) records/s); \(written.summary)
            """)
        flush()
        guard ids.count == options.profiles else {
            throw BenchFailure("built \(ids.count) of \(options.profiles) profiles")
        }
        return ids
    }

    /// Phase 2: one checkpoint of the tenant, timed; then its file read back and decoded alone.
    private static func snapshot(_ engine: Engine, _ dataDirectory: String, probe: RestartProbe, _ options: Options)
        async throws(BenchFailure)
    {
        let started = ContinuousClock.now
        do {
            _ = try await engine.checkpointer.checkpoint()
        } catch {
            throw BenchFailure("checkpoint failed: \(error)")
        }
        let took = ContinuousClock.now - started
        let fileSystem = NativeFileSystem()
        let directory = dataDirectory + "/snapshots"
        let names: [String]
        do {
            names = try fileSystem.listDirectory(directory).filter { $0.hasSuffix(".snap") }
        } catch {
            throw BenchFailure("cannot list \(directory): \(error)")
        }
        guard names.count == 1, let name = names.first else {
            throw BenchFailure("expected one snapshot file in \(directory), found \(names.count)")
        }
        let path = directory + "/" + name
        let loaded = await BenchThreads.detached { () -> Result<SnapshotLoad, BenchFailure> in
            Result { () throws(BenchFailure) in try load(path, fileSystem: fileSystem) }
        }
        let readBack = try loaded.get()
        // The checkpointer logs how long the file write took; the rest of the step is capturing and
        // encoding the state, and publishing the manifest.
        let split = probe.event("snapshot.written")?.metadata["took_ms"].flatMap { Int64("\($0)") }.map { writeMs in
            let write = Duration.milliseconds(writeMs)
            return "\(seconds(took - write)) s to capture and encode the state and publish the manifest, "
                + "\(seconds(write)) s to write the file (deflate, checksums, fsync, rename)"
        }
        print("""
            snapshot: checkpoint() of the tenant in \(seconds(took)) s (DESIGN.md goal for 1M profiles: under 3 s): \
            \(split ?? "no snapshot.written line to split it by"); body \(mebibytes(readBack.bodyBytes)) MiB, file \
            \(mebibytes(readBack.fileBytes)) MiB; read back alone: \(seconds(readBack.read)) s to read, check and inflate, \
            \(seconds(readBack.decode)) s to decode
            """)
        flush()
        guard readBack.profiles == options.profiles else {
            throw BenchFailure("the snapshot holds \(readBack.profiles) profiles, expected \(options.profiles)")
        }
    }

    private struct SnapshotLoad {
        let bodyBytes: Int
        let fileBytes: Int
        let profiles: Int
        let read: Duration
        let decode: Duration
    }

    /// Reads, checks and decodes one snapshot file as recovery does (blocking).
    private static func load(_ path: String, fileSystem: NativeFileSystem) throws(BenchFailure) -> SnapshotLoad {
        do {
            let started = ContinuousClock.now
            let (_, body) = try SnapshotFile.read(path: path, fileSystem: fileSystem)
            let read = ContinuousClock.now
            let state = try ProjectSnapshotBody.decode(body)
            let decoded = ContinuousClock.now
            return SnapshotLoad(bodyBytes: body.count, fileBytes: try fileSystem.fileSize(atPath: path),
                                profiles: state.profiles.count, read: read - started, decode: decoded - read)
        } catch {
            throw BenchFailure("cannot read back \(path): \(error)")
        }
    }

    /// Phase 3: M credits of 1 COINS, each under its own idempotency key and with a reason,
    /// to the profiles in turn.
    private static func append(_ project: Project, log: WriteAheadLog, profiles ids: [ProfileID], _ options: Options)
        async throws(BenchFailure)
    {
        let before = log.stats
        let started = ContinuousClock.now
        _ = try await runWriters(options.writers) { writer async throws(BenchFailure) -> Int in
            for index in stride(from: writer, to: options.records, by: options.writers) {
                let profile = ids[index % ids.count]
                try await durable(log, "currency.transact \(index)") {
                    let credit = try await project.transact(.id(profile), currency: "COINS", amount: 1,
                                                            key: "restart-\(index)", reason: "daily reward")
                    return ((), credit.lsn)
                }
            }
            return 0
        }
        let took = ContinuousClock.now - started
        let written = Written(log.stats, since: before)
        print("""
            append: \(options.records) currency.transact credits (1 COINS each, a unique idempotency key and a reason, \
            over the profiles in turn): \(written.records) records in \(seconds(took)) s \
            (\(whole(Double(written.records) / took.inSeconds)) records/s); \(written.summary)
            """)
        flush()
        guard written.records == options.records else {
            throw BenchFailure("appended \(written.records) records, expected \(options.records)")
        }
    }

    // MARK: The restart

    /// Phases 4 and 5: a fresh `Engine.open` on the closed directory, timed and split, checked
    /// against `before`, and the resident memory it leaves.
    private static func restart(_ dataDirectory: String, _ options: Options, expecting before: Closed)
        async throws(BenchFailure)
    {
        // What the first engine freed goes back to the system, so the figure below is the restart's.
        trimMalloc()
        let residentBefore = MemoryBench.residentBytes()
        let id = try validProjectID()
        let probe = RestartProbe()
        let fatal = BenchLog.FatalError()
        let (engine, opening) = try await openEngine(
            dataDirectory, options, fileSystem: probe.fileSystem(over: NativeFileSystem()), logger: probe.logger, fatal: fatal)
        let took = opening.end - opening.start
        let residentAfter = MemoryBench.residentBytes()
        // Replay frees as it goes; what the allocator keeps of that is not the state's.
        trimMalloc()
        let residentTrimmed = MemoryBench.residentBytes()
        let phases = probe.phases(from: opening.start, to: opening.end)
        let report = engine.report
        let summary = await engine.registry.project(id)?.summary().value
        await engine.close()
        if let failure = fatal.failure { throw failure }

        let replayRate = phases.replay.map { ", \(whole(Double(report.recordsReplayed) / $0.inSeconds)) records/s" } ?? ""
        let split: [(String, Duration?)] = [
            ("snapshot load (manifest, read, check, inflate, decode)", phases.snapshotLoad),
            ("replay (read \(mebibytes(phases.segmentBytes)) MiB of segments in \(seconds(phases.segmentReads)) s; check, "
                + "inflate, decode and apply every record\(replayRate))", phases.replay),
            ("log tail (seal the last segment, prepare a new one)", phases.logTail),
            ("project actors and the start-up expiry pass", phases.projects),
            ("the rest", phases.rest),
        ]
        print("""
            restart: Engine.open in \(seconds(took)) s (DESIGN.md goal for 1M profiles and 5M records: under 10 s), \
            \(report.recordsReplayed) records replayed from \(report.segmentsScanned) segment(s); \
            \(split.map { "\($0.0) \($0.1.map { seconds($0) + " s" } ?? "unknown")" }.joined(separator: "; "))
            """)
        print("""
            cpu: Engine.open used \(seconds(opening.callerCPU)) s of CPU on its own thread (its share of the snapshot \
            load, and applying every replayed record), \(seconds(opening.processCPU)) s in the whole process
            """)
        print("""
            memory: resident \(mebibytes(residentAfter)) MiB after the restart (\(mebibytes(residentBefore)) MiB before Engine.open, \
            +\(mebibytes(residentAfter - residentBefore)) MiB); \(mebibytes(residentTrimmed)) MiB once malloc_trim has handed back \
            what the allocator kept of freed memory
            """)
        flush()

        guard report.tornTail == nil else { throw BenchFailure("the restart cut a torn tail: \(report.tornTail!)") }
        // The records after the snapshot, plus anything the first engine logged after the append.
        guard report.recordsReplayed >= options.records else {
            throw BenchFailure("the restart replayed \(report.recordsReplayed) records, expected at least \(options.records)")
        }
        guard let summary else { throw BenchFailure("project \(projectID) is missing after the restart") }
        guard summary.profiles == before.profiles, summary.cursor == before.cursor else {
            throw BenchFailure("""
                after the restart the project has \(summary.profiles) profiles at cursor \(summary.cursor); \
                before it had \(before.profiles) at \(before.cursor)
                """)
        }
        guard engine.log.lastLSN >= before.lastLSN else {
            throw BenchFailure("the log ends at \(engine.log.lastLSN) after the restart, before it ended at \(before.lastLSN)")
        }
    }

    // MARK: Helpers

    private static func validProjectID() throws(BenchFailure) -> ProjectID {
        do {
            return try ProjectID(validating: projectID)
        } catch {
            throw BenchFailure("\(projectID) is not a valid project id: \(error)")
        }
    }

    /// When an `Engine.open` began and returned, and the CPU time it used: on the thread that
    /// called it (the snapshot load's share, and applying every replayed record), and in the
    /// whole process (with the log reader's thread and the snapshot's helpers). On a machine
    /// others share, CPU time moves far less between runs than the wall clock.
    private struct Opening {
        let start: ContinuousClock.Instant
        let end: ContinuousClock.Instant
        let callerCPU: Duration
        let processCPU: Duration
    }

    /// CPU time used so far by the calling thread or the process (`CLOCK_THREAD_CPUTIME_ID`,
    /// `CLOCK_PROCESS_CPUTIME_ID`).
    private static func cpuTime(_ clock: clockid_t) -> Duration {
        var spec = timespec()
        clock_gettime(clock, &spec)
        return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
    }

    /// `Engine.open` on a thread of its own (it blocks), timed from call to return.
    private static func openEngine(
        _ dataDirectory: String, _ options: Options, fileSystem: any FileSystem, logger: Logger, fatal: BenchLog.FatalError
    ) async throws(BenchFailure) -> (Engine, Opening) {
        var settings = EngineOptions(wal: WALOptions(policy: options.fsync))
        settings.snapshotAfterLoggedBytes = .max
        settings.walBytesCap = .max
        let engineOptions = settings
        let adminKey = "ak_bench_" + SystemRandomSource().randomToken(alphabet: .base62, length: 32)
        let opened = await BenchThreads.detached { () -> Result<(Engine, Opening), BenchFailure> in
            let callerCPU = cpuTime(CLOCK_THREAD_CPUTIME_ID)
            let processCPU = cpuTime(CLOCK_PROCESS_CPUTIME_ID)
            let start = ContinuousClock.now
            do {
                let engine = try Engine.open(
                    dataDirectory: dataDirectory, fileSystem: fileSystem, options: engineOptions, adminKey: adminKey,
                    clock: SystemServerClock(), random: SystemRandomSource(), logger: logger, onFatal: { fatal.record($0) })
                let end = ContinuousClock.now
                return .success((engine, Opening(start: start, end: end, callerCPU: cpuTime(CLOCK_THREAD_CPUTIME_ID) - callerCPU,
                                                 processCPU: cpuTime(CLOCK_PROCESS_CPUTIME_ID) - processCPU)))
            } catch {
                return .failure(BenchFailure("Engine.open on \(dataDirectory) failed: \(error)"))
            }
        }
        return try opened.get()
    }

    /// Runs `body(0)` ... `body(count - 1)` as concurrent tasks; the first failure fails all.
    private static func runWriters<R: Sendable>(
        _ count: Int, _ body: @escaping @Sendable (Int) async throws(BenchFailure) -> R
    ) async throws(BenchFailure) -> [R] {
        let results = await withTaskGroup(of: (Int, Result<R, BenchFailure>).self) { group in
            for writer in 0..<count {
                group.addTask {
                    do throws(BenchFailure) {
                        return (writer, .success(try await body(writer)))
                    } catch {
                        return (writer, .failure(error))
                    }
                }
            }
            var results: [(Int, Result<R, BenchFailure>)] = []
            for await result in group {
                if case .failure = result.1 { group.cancelAll() }
                results.append(result)
            }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
        return try results.map { result throws(BenchFailure) in try result.get() }
    }

    /// Runs one write through the actor and waits, like a client, until its record is durable.
    private static func durable<T: Sendable>(
        _ log: WriteAheadLog, _ what: @autoclosure () -> String, _ write: () async throws -> (T, LSN)
    ) async throws(BenchFailure) -> T {
        do {
            let (value, lsn) = try await write()
            try await log.waitDurableOrFailure(lsn)
            return value
        } catch {
            throw BenchFailure("\(what()) failed: \(error)")
        }
    }

    /// What the log wrote during a phase: records, frames, and bytes before and after deflate.
    private struct Written {
        let records: Int
        let frames: Int
        let rawBytes: Int
        let bytes: Int

        init(_ stats: WALStats, since before: WALStats) {
            records = stats.recordsWritten - before.recordsWritten
            frames = stats.framesWritten - before.framesWritten
            rawBytes = stats.rawBytesWritten - before.rawBytesWritten
            bytes = stats.bytesWritten - before.bytesWritten
        }

        var summary: String {
            let perFrame = frames > 0 ? decimal(Double(records) / Double(frames)) : "-"
            let perRecord = records > 0 ? "\(rawBytes / records)" : "-"
            return "\(frames) frames (\(perFrame) records/frame); log \(mebibytes(rawBytes)) MiB before deflate "
                + "(\(perRecord) bytes a record), \(mebibytes(bytes)) MiB written"
        }
    }

    /// Seconds with three decimals.
    private static func seconds(_ duration: Duration) -> String {
        let millis = Int64((duration.inSeconds * 1000).rounded())
        let fraction = "\(millis % 1000)"
        return "\(millis / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    private static func flush() {
        fflush(nil)
    }

    /// glibc's `malloc_trim(0)`: hands freed heap back to the system. Looked up at run time,
    /// as Swift's Glibc module leaves out `malloc.h`; a no-op where it is missing.
    private static func trimMalloc() {
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        typealias Trim = @convention(c) (Int) -> Int32
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
    }
}
