import GatehouseBase
import GatehouseCore
import GatehouseRuntime
import GatehouseStorage

/// `gatehouse-bench retention`: writes per second on a tenant whose time-bounded tables are
/// filling, against the same tenant once they are full and aging (issue 17: a write must cost
/// the same in steady state).
///
/// A steady flow of `currency.transact` credits (each a history entry, an idempotency key and a
/// feed event) through the project's actor, in rounds as the server's lane runs them, on an
/// engine with fsync `none` and no snapshots. The clock is moved, not waited for: every write is
/// ``Options/stepMs`` after the one before, so the first ``Options/writesPerWindow`` writes fill
/// the feed's 7 days (the idempotency keys' 24 hours, and each profile's history, fill sooner),
/// and the writes after them run on tables that forget as much as they take.
enum RetentionBench {
    struct Options: Sendable {
        /// Writes in one feed window (7 days at one a second by default).
        var writesPerWindow = 604_800
        /// Profiles credited in turn: their histories fill after `historyEntriesPerCurrency` × this.
        var profiles = 100
        var retention = Retention.standard

        var stepMs: Int64 { max(1, retention.feedAgeMs / Int64(writesPerWindow)) }

        static var smoke: Options {
            var options = Options()
            options.writesPerWindow = 4_000
            options.profiles = 10
            options.retention.feedAgeMs = 4_000_000
            options.retention.idempotencyMs = 1_000_000
            options.retention.historyEntriesPerCurrency = 100
            return options
        }
    }

    static let roundSteps = 200

    static func run(_ options: Options) async -> Int32 {
        warnIfDebugBuild()
        do throws(BenchFailure) {
            for line in try await measure(options) { print(line) }
            return BenchExitCode.success
        } catch {
            printError("error: \(error)")
            return error.exitCode
        }
    }

    /// Answers the report's lines; fails on a wrong balance or a table that kept the wrong amount.
    static func measure(_ options: Options) async throws(BenchFailure) -> [String] {
        let scratch = try ScratchDirectory.make(in: nil)
        defer { ScratchDirectory.remove(scratch) }
        let fatal = BenchLog.FatalError()
        let clock = ManualServerClock(startMs: 1_800_000_000_000)
        let engine = try openEngine(scratch + "/data", options: options, clock: clock, fatal: fatal)
        do throws(BenchFailure) {
            let (project, profiles) = try await setUp(engine, count: options.profiles)
            let flow = Flow(project: project, profiles: profiles, clock: clock, stepMs: options.stepMs)
            let window = options.writesPerWindow
            let early = try await flow.run(writes: max(roundSteps, window / 10))
            let filling = try await flow.run(writes: window - early.writes)
            let filledResident = MemoryBench.residentBytes()
            let aging = try await flow.run(writes: window)
            let agedResident = MemoryBench.residentBytes()
            let held = await project.perform { project in project.heldCounts() }
            await engine.close()
            if let failure = fatal.failure { throw failure }
            try check(held, options: options, writes: flow.written)
            let fillingRate = Double(early.writes + filling.writes) / (early.seconds + filling.seconds)
            return [
                "retention: \(options.profiles) profiles, a credit every \(options.stepMs) ms of a moved clock, rounds of \(roundSteps)",
                "  filling (the first \(window) writes, a feed window): \(Int(fillingRate)) writes/s "
                    + "(first \(early.writes): \(Int(Double(early.writes) / early.seconds)) writes/s); resident \(mebibytes(filledResident)) MiB",
                "  full and aging (the next \(window)): \(Int(Double(aging.writes) / aging.seconds)) writes/s, "
                    + "\(decimal(100 * Double(aging.writes) / aging.seconds / fillingRate))% of filling; resident \(mebibytes(agedResident)) MiB",
                "  held at the end: \(held.events) events, \(held.keys) idempotency keys, \(held.entries) history entries",
            ]
        } catch {
            await engine.close()
            throw error
        }
    }

    /// What the tables must hold once a window of writes has aged: the feed one window's events
    /// (and the one at its edge), the keys their window's, each history its newest entries.
    private static func check(_ held: Project.HeldCounts, options: Options, writes: Int) throws(BenchFailure) {
        let stepMs = options.stepMs
        let events = Int(options.retention.feedAgeMs / stepMs) + 1
        let keys = Int(options.retention.idempotencyMs / stepMs) + 1
        let entries = options.profiles * options.retention.historyEntriesPerCurrency
        guard held.events == min(events, writes), held.keys == min(keys, writes), held.entries == min(entries, writes) else {
            throw BenchFailure("after \(writes) writes the tables hold \(held), expected \(events) events, \(keys) keys, \(entries) entries")
        }
    }

    private static func openEngine(_ directory: String, options: Options, clock: ManualServerClock, fatal: BenchLog.FatalError)
        throws(BenchFailure) -> Engine
    {
        var settings = EngineOptions(wal: WALOptions(policy: .none))
        settings.snapshotAfterLoggedBytes = .max
        settings.walBytesCap = .max
        settings.retention = options.retention
        let logger = Logger(label: "bench-retention", handler: StreamLogHandler(), logLevel: .warning)
        do {
            return try Engine.open(
                dataDirectory: directory, fileSystem: NativeFileSystem(), options: settings,
                adminKey: "ak_bench_" + SystemRandomSource().randomToken(alphabet: .base62, length: 32),
                clock: clock, random: SystemRandomSource(), logger: logger, onFatal: { fatal.record($0) })
        } catch {
            throw BenchFailure("Engine.open on \(directory) failed: \(error)")
        }
    }

    private static func setUp(_ engine: Engine, count: Int) async throws(BenchFailure) -> (Project, [ProfileID]) {
        do {
            let project = try engine.registry.createProject(id: try ProjectID(validating: "bench-retention"), name: nil).value.0
            _ = try await project.putConfig(RestartBench.config)
            var profiles: [ProfileID] = []
            for number in 0..<count {
                profiles.append(try await project.createProfile(customerUserID: "user-\(number)", token: nil, by: .server).value.view.profile.id)
            }
            return (project, profiles)
        } catch {
            throw BenchFailure("cannot set up the project: \(error)")
        }
    }

    /// The flow of credits, write after write: the profiles in turn, a new key each, the clock a
    /// step on before each.
    private final class Flow: @unchecked Sendable {
        // Used by one task at a time: the bench awaits each round before the next.
        let project: Project
        let profiles: [ProfileID]
        let clock: ManualServerClock
        let stepMs: Int64
        private(set) var written = 0

        init(project: Project, profiles: [ProfileID], clock: ManualServerClock, stepMs: Int64) {
            self.project = project
            self.profiles = profiles
            self.clock = clock
            self.stepMs = stepMs
        }

        func run(writes: Int) async throws(BenchFailure) -> (writes: Int, seconds: Double) {
            let rounds = max(1, writes / RetentionBench.roundSteps)
            let watch = ContinuousClock()
            let began = watch.now
            for _ in 0..<rounds {
                let first = written
                let (profiles, clock, stepMs) = (self.profiles, self.clock, self.stepMs)
                let balance = await project.perform { project in
                    Self.round(project, from: first, profiles: profiles, clock: clock, stepMs: stepMs)
                }
                let last = first + RetentionBench.roundSteps - 1
                guard balance == Int64(last / profiles.count + 1) else {
                    throw BenchFailure("write \(last): balance \(balance), expected \(last / profiles.count + 1)")
                }
                written += RetentionBench.roundSteps
            }
            return (rounds * RetentionBench.roundSteps, (watch.now - began).inSeconds)
        }

        /// One visit of the actor; answers the last balance (-1 on an error).
        private static func round(_ project: isolated Project, from first: Int, profiles: [ProfileID], clock: ManualServerClock,
                                  stepMs: Int64) -> Int64
        {
            var balance: Int64 = -1
            for write in first..<(first + RetentionBench.roundSteps) {
                clock.advance(byMs: stepMs)
                let profile = profiles[write % profiles.count]
                guard let outcome = try? project.transact(.id(profile), currency: "COINS", amount: 1, key: "k\(write)", reason: nil)
                else { return -1 }
                balance = outcome.value.balance
            }
            return balance
        }
    }
}
