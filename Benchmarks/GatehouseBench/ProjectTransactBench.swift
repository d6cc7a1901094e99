import GatehouseBase
import GatehouseCore
import GatehouseRuntime
import GatehouseStorage

/// `gatehouse-bench micro`'s `project.transact`: the domain's share of one `currency.transact`,
/// the work the project's actor does one request at a time (decide, log, apply, publish),
/// without sockets, JSON or the lane's hop.
///
/// An engine on a scratch directory (fsync `none`, no snapshots), one profile and one currency,
/// and every request a +1 credit with a new idempotency key, run through ``Project/perform(_:)``
/// in rounds of ``roundSteps`` as the server's lane runs them. The keys are made before the
/// rounds start, as the server reads them on its loops. ``runRound(_:profile:keys:)`` is the one
/// function a profiler should look inside: it is exactly the actor's work, e.g.
/// `valgrind --tool=callgrind --separate-threads=yes --toggle-collect='*runRound_7profile4keys*'`
/// (the mangled name spells the type in pieces). Valgrind 3.19 writes into the mask given to
/// `sigsuspend`, which libdispatch keeps in read-only memory, and crashes: preload a
/// `sigsuspend` that passes a copy.
enum ProjectTransactBench {
    /// Requests per visit of the actor (the lane takes what gathered, up to 1,024).
    static let roundSteps = 200

    /// Prints one line like the other micro benchmarks; answers the exit code.
    static func run(iterations: Int) async -> Int32 {
        do throws(BenchFailure) {
            print(try await measure(transacts: max(roundSteps, iterations)).line)
            return BenchExitCode.success
        } catch {
            printError("error: \(error)")
            return error.exitCode
        }
    }

    private static func measure(transacts: Int) async throws(BenchFailure) -> MicroResult {
        let scratch = try ScratchDirectory.make(in: nil)
        defer { ScratchDirectory.remove(scratch) }
        let fatal = BenchLog.FatalError()
        let engine = try openEngine(scratch + "/data", fatal: fatal)
        do throws(BenchFailure) {
            let (project, profile) = try await setUp(engine)
            // Warm-up: a tenth as many requests, so the tables have grown and the allocator has pools.
            let warmUp = try await transact(project, profile: profile, from: 0, count: max(roundSteps, transacts / 10))
            let measured = try await transact(project, profile: profile, from: warmUp.count, count: transacts)
            await engine.close()
            if let failure = fatal.failure { throw failure }
            let perTransact = measured.rounds.map { $0.inSeconds * 1e9 / Double(roundSteps) }.sorted()
            return MicroResult(name: "Project.transact (new key, one profile, rounds of \(roundSteps))", unit: "op",
                               iterations: measured.count, medianNanoseconds: perTransact[perTransact.count / 2],
                               bestNanoseconds: perTransact[0])
        } catch {
            await engine.close()
            throw error
        }
    }

    private static func openEngine(_ dataDirectory: String, fatal: BenchLog.FatalError) throws(BenchFailure) -> Engine {
        var options = EngineOptions(wal: WALOptions(policy: .none))
        options.snapshotAfterLoggedBytes = .max
        options.walBytesCap = .max
        let logger = Logger(label: "bench-engine", handler: StreamLogHandler(), logLevel: .warning)
        do {
            return try Engine.open(
                dataDirectory: dataDirectory, fileSystem: NativeFileSystem(), options: options,
                adminKey: "ak_bench_" + SystemRandomSource().randomToken(alphabet: .base62, length: 32),
                clock: SystemServerClock(), random: SystemRandomSource(), logger: logger, onFatal: { fatal.record($0) })
        } catch {
            throw BenchFailure("Engine.open on \(dataDirectory) failed: \(error)")
        }
    }

    /// The project (with ``RestartBench/config``: COINS) and its one profile.
    private static func setUp(_ engine: Engine) async throws(BenchFailure) -> (Project, ProfileID) {
        do {
            let project = try engine.registry.createProject(id: try ProjectID(validating: "bench-transact"), name: nil).value.0
            _ = try await project.putConfig(RestartBench.config)
            let profile = try await project.createProfile(customerUserID: "bench-user", token: nil, by: .server).value.view.profile.id
            return (project, profile)
        } catch {
            throw BenchFailure("cannot set up the project: \(error)")
        }
    }

    /// Runs `count` credits (whole rounds) with the keys `k<from>` onwards; answers how many
    /// ran and each round's time. The final balance must be the number of credits so far.
    private static func transact(_ project: Project, profile: ProfileID, from first: Int, count: Int)
        async throws(BenchFailure) -> (count: Int, rounds: [Duration])
    {
        let roundCount = max(1, count / roundSteps)
        var rounds: [Duration] = []
        rounds.reserveCapacity(roundCount)
        // All keys first: making them allocates, and a profiler's count of the actor's thread
        // should not see it.
        let keys = (first..<(first + roundCount * roundSteps)).map { "k\($0)" }
        let clock = ContinuousClock()
        for round in 0..<roundCount {
            let start = first + round * roundSteps
            let roundKeys = keys[(start - first)..<(start - first + roundSteps)]
            let began = clock.now
            let balance = await project.perform { project in runRound(project, profile: profile, keys: roundKeys) }
            rounds.append(clock.now - began)
            guard balance == Int64(start + roundSteps) else {
                throw BenchFailure("project.transact: balance \(balance) after \(start + roundSteps) credits of 1")
            }
        }
        return (roundCount * roundSteps, rounds)
    }

    /// One visit of the actor: a credit of 1 per key. Answers the last balance (-1 on an error).
    @inline(never)
    static func runRound(_ project: isolated Project, profile: ProfileID, keys: ArraySlice<String>) -> Int64 {
        var balance: Int64 = -1
        for key in keys {
            guard let outcome = try? project.transact(.id(profile), currency: "COINS", amount: 1, key: key, reason: nil) else {
                return -1
            }
            balance = outcome.value.balance
        }
        return balance
    }
}
