import GatehousePosix
import GatehouseWire
#if canImport(Glibc)
import Glibc
#endif

/// What to measure: an op, how many connections, how deep each pipeline, for how long, and
/// how many generator threads share the connections.
struct LoadPlan: Sendable {
    let op: BenchOp
    let connections: Int
    let pipeline: Int
    let warmup: Duration
    let duration: Duration
    let threads: Int
}

/// Told when the measured window opens and closes, on the coordinating thread (blocking calls
/// are fine there): how `durability` reads the server's fsync counters over the same window.
protocol LoadProbe: AnyObject, Sendable {
    func windowOpened()
    func windowClosed()
}

/// The load mode from start to end. Blocking throughout: run it on a thread of its own
/// (``BenchThreads/detached(_:)``), never on the concurrency pool.
enum LoadRun {
    /// Creates the bench project, measures, and deletes the project again (and what the op
    /// created, on a server that outlives the run).
    static func run(_ plan: LoadPlan, on target: BenchTarget, probe: (any LoadProbe)? = nil) -> Result<LoadReport, BenchFailure> {
        let project: BenchProject
        do {
            project = try BenchSetup.createProject(on: target)
        } catch {
            return .failure(error)
        }
        defer { BenchSetup.deleteProject(project, on: target) }
        do {
            return .success(try measure(plan, project: project, on: target, probe: probe))
        } catch {
            return .failure(error)
        }
    }

    private static func measure(_ plan: LoadPlan, project: BenchProject, on target: BenchTarget, probe: (any LoadProbe)?)
        throws(BenchFailure) -> LoadReport
    {
        // The sessions own the line sockets, `sockets` the HTTP ones: all stay open until every
        // loop has stopped.
        var sessions: [BenchSession] = []
        defer { for session in sessions { session.close() } }
        var variables: [[String: JSONValue]] = []
        let key = project.key(plan.op.key, adminKey: target.adminKey)
        // Sequential: setup is not what is measured, and it keeps a failure's message simple.
        for _ in 0..<plan.connections {
            let session = try BenchSession(connectingTo: target.address)
            sessions.append(session)
            variables.append(try prepare(session, op: plan.op, key: key))
        }
        let sockets = try LoadSockets(plan.op, key: key, project: project, sessions: sessions, variables: variables, target: target)
        defer { sockets.close() }
        let loops = try makeLoops(count: min(plan.threads, plan.connections))
        let timeline = LoadTimeline(warmup: plan.warmup, duration: plan.duration)
        let tallies = loops.map { _ in LoadTally() }
        let connections = sockets.connections(pipeline: plan.pipeline, loops: loops, tallies: tallies, timeline: timeline)
        for connection in connections {
            connection.loop.execute { connection.start() }
        }
        if let probe {
            LoadTimeline.sleep(until: timeline.measureFromNanoseconds)
            probe.windowOpened()
        }
        LoadTimeline.sleep(until: timeline.endNanoseconds)
        probe?.windowClosed()
        // Connections stop themselves at the first answer after the end; these stop the ones a
        // silent server left waiting.
        for connection in connections {
            connection.loop.execute { connection.finish() }
        }
        for loop in loops {
            loop.stop()
            loop.waitUntilStopped()
        }
        if plan.op.leftovers != .nothing, !target.isThrowaway {
            BenchCleanup.removeLeftovers(of: plan.op, project: project, loadSessions: sessions, on: target)
        }
        let results = tallies.map(\.counts)
        if let failure = results.lazy.compactMap(\.failure).first {
            throw BenchFailure(failure)
        }
        return LoadReport(plan: plan, target: target, timeline: timeline, results: results)
    }

    /// `hello` with the op's key, then the op's own setup; answers what its template needs.
    private static func prepare(_ session: BenchSession, op: BenchOp, key: String) throws(BenchFailure) -> [String: JSONValue] {
        try session.hello(key)
        var variables = try op.setup?(session) ?? [:]
        variables["key"] = .string(key)
        return variables
    }

    private static func makeLoops(count: Int) throws(BenchFailure) -> [EventLoop] {
        var loops: [EventLoop] = []
        for index in 0..<count {
            do {
                loops.append(try EventLoop(name: "load-\(index)"))
            } catch {
                throw BenchFailure("cannot create a generator event loop: \(error)")
            }
        }
        // Started only once all exist, so a failure above leaves no thread behind.
        for loop in loops { loop.start() }
        return loops
    }
}
