import GatehouseBase
import GatehousePosix
import GatehouseWire
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What `gatehouse-bench watch` was asked for.
struct WatchOptions: Sendable {
    enum Server: Sendable {
        /// The bench's own server, in a child process (``WatchServerProcess``).
        case child(InProcessServer.Settings)
        case running(HostPort, adminKey: String)
    }

    var server: Server
    /// Watching connections, each watching a profile of its own.
    var connections: Int
    /// Changes made, each to a random watched profile.
    var changes: Int
    /// Changes unfinished at once (answer or push outstanding).
    var inFlight: Int
    /// Be the child: serve until stdin closes (``WatchServerProcess/serve(_:connections:)``).
    var serveChild = false

    static let smoke = WatchOptions(server: .child(InProcessServer.Settings()), connections: 200, changes: 100, inFlight: 1)
}

/// `gatehouse-bench watch`: N connections each `watch` a profile of their own, one driver
/// connection makes M changes (`currency.transact` credits) to random watched profiles, and each
/// change's push is timed at its watcher (DESIGN.md: with 10,000 connections holding a watch, a
/// change reaches its watcher within 10 ms).
enum WatchBench {
    /// Connections the bench opens besides the watchers (project setup, profile creation, the
    /// driver), with room to spare.
    static let extraConnections = 16

    static func run(_ options: WatchOptions) async -> Int32 {
        switch options.server {
        case .child(let settings) where options.serveChild:
            return await WatchServerProcess.serve(settings, connections: options.connections)
        case .child(let settings):
            warnIfDebugBuild()
            let connections = options.connections
            let started = await BenchThreads.detached { () -> Result<WatchServerProcess, BenchFailure> in
                Result { () throws(BenchFailure) in try WatchServerProcess.start(settings, connections: connections) }
            }
            let server: WatchServerProcess
            switch started {
            case .success(let value): server = value
            case .failure(let failure):
                printError("error: \(failure)")
                return failure.exitCode
            }
            let result = await BenchThreads.detached { measure(options, on: server.target, server: server) }
            await BenchThreads.detached { server.stop() }
            return report(result)
        case .running(let address, let adminKey):
            warnIfDebugBuild()
            let target = BenchTarget(address: address, adminKey: adminKey, label: "\(address)")
            return report(await BenchThreads.detached { measure(options, on: target, server: nil) })
        }
    }

    // MARK: Measuring (blocking: a thread of its own)

    private static func measure(_ options: WatchOptions, on target: BenchTarget, server: WatchServerProcess?)
        -> Result<WatchReport, BenchFailure>
    {
        let project: BenchProject
        do throws(BenchFailure) {
            let limit = raiseDescriptorLimit()
            guard options.connections + extraConnections + 16 <= limit else {
                throw BenchFailure("\(options.connections) connections need about \(options.connections + 32) descriptors; "
                    + "this process may open \(limit) (ulimit -n)")
            }
            project = try BenchSetup.createProject(on: target)
        } catch {
            return .failure(error)
        }
        defer { if !target.isThrowaway { BenchSetup.deleteProject(project, on: target) } }
        do {
            return .success(try measure(options, project: project, on: target, server: server))
        } catch {
            return .failure(error)
        }
    }

    private static func measure(_ options: WatchOptions, project: BenchProject, on target: BenchTarget,
                                server: WatchServerProcess?) throws(BenchFailure) -> WatchReport
    {
        var report = WatchReport(options: options, label: target.label)
        let setupStarted = EventLoop.monotonicNanoseconds()
        let ids = try createProfiles(options.connections, project: project, on: target)
        report.profileSeconds = seconds(since: setupStarted)
        report.residentWithProfiles = server?.residentBytes()

        let loop: EventLoop
        do {
            loop = try EventLoop(name: "watch-generator")
        } catch {
            throw BenchFailure("cannot create the generator's event loop: \(error)")
        }
        loop.start()
        let state = WatchRunState(loop: loop, profileIDs: ids.map { Array($0.utf8) }, changes: options.changes,
                                  inFlight: options.inFlight)
        var sockets: [Socket] = []
        var driverSession: BenchSession?
        var loopRunning = true
        func stopLoop() {
            guard loopRunning else { return }
            loopRunning = false
            loop.stop()
            loop.waitUntilStopped()
        }
        defer {
            stopLoop()
            for socket in sockets { socket.close() }
            driverSession?.close()
        }

        /// The loop's own failure says more than the wait that saw it happen.
        func loopFailure(_ error: BenchFailure) -> BenchFailure {
            stopLoop()
            return state.failure.map { BenchFailure($0) } ?? error
        }

        do throws(BenchFailure) {
            // The watchers: connect, say hello and watch in one write, hand the socket to the loop.
            let connectStarted = EventLoop.monotonicNanoseconds()
            let address: SocketAddress
            do {
                address = try SocketAddress.resolve(target.address)
            } catch {
                throw BenchFailure("cannot resolve \(target.address): \(error)")
            }
            sockets.reserveCapacity(ids.count)
            for (index, id) in ids.enumerated() {
                // At most a few hundred handshakes unanswered, so the listen backlog never overflows.
                try waitFor(state, "watchers answering hello and watch") {
                    state.watching.load(ordering: .acquiring) >= index - 256
                }
                let socket: Socket
                do {
                    socket = try Socket.connect(to: address)
                } catch {
                    throw BenchFailure("watcher \(index) cannot connect to \(target.address): \(error)")
                }
                sockets.append(socket)
                let lines = #"{"id":1,"op":"hello","key":"\#(project.publicKey)"}"# + "\n"
                    + #"{"id":2,"op":"watch","profile_id":"\#(id)"}"# + "\n"
                do {
                    try socket.writeAll(Array(lines.utf8))
                } catch {
                    throw BenchFailure("watcher \(index) cannot send hello and watch: \(error)")
                }
                socket.setNonBlocking()
                let watcher = WatcherConnection(index: index, descriptor: socket.descriptor, state: state)
                loop.execute { watcher.start() }
            }
            try waitFor(state, "watchers answering hello and watch") {
                state.watching.load(ordering: .acquiring) == ids.count
            }
            report.connectSeconds = seconds(since: connectStarted)
            report.residentWatching = server?.residentBytes()
        } catch {
            throw loopFailure(error)
        }

        // The driver.
        let session = try BenchSession(connectingTo: target.address)
        driverSession = session
        try session.hello(project.secretKey)
        session.client.socket.setNonBlocking()
        let tag = SystemRandomSource().randomToken(alphabet: TokenAlphabet("abcdefghijklmnopqrstuvwxyz0123456789"), length: 8)
        let driver = WatchDriverConnection(descriptor: session.client.socket.descriptor, state: state, tag: tag)
        let changesStarted = EventLoop.monotonicNanoseconds()
        loop.execute {
            state.driver = driver
            driver.start()
            state.sendMore()
        }
        let finished = Result { () throws(BenchFailure) in
            try waitFor(state, "pushes") { state.completed.load(ordering: .acquiring) == options.changes }
        }
        report.changeSeconds = seconds(since: changesStarted)
        // A moment for pushes nobody expects (a change pushed twice) to show up.
        if case .success = finished { usleep(200_000) }
        report.residentAfter = server?.residentBytes()
        stopLoop()
        // The loop's thread is joined: its state is ours to read.
        report.take(state)
        if case .failure(let failure) = finished, state.failure == nil { throw failure }
        if let failure = state.failure { throw BenchFailure(failure) }
        return report
    }

    /// `count` anonymous profiles, created by the backend in pipelined batches; their ids.
    private static func createProfiles(_ count: Int, project: BenchProject, on target: BenchTarget) throws(BenchFailure)
        -> [String]
    {
        let backend = try BenchSession(connectingTo: target.address)
        defer { backend.close() }
        try backend.hello(project.secretKey)
        var ids: [String] = []
        ids.reserveCapacity(count)
        while ids.count < count {
            let batch = min(256, count - ids.count)
            let answers = try backend.pipelined(Array(repeating: ["op": "profile.create"], count: batch))
            for line in answers {
                guard let answer = (try? JSONParser.parse(line))?.objectValue, answer["ok"]?.boolValue == true,
                    let id = answer["profile"]?.objectValue?["profile_id"]?.stringValue
                else { throw BenchFailure("profile.create failed: \(line)") }
                ids.append(id)
            }
        }
        return ids
    }

    /// Waits (polling) until `done`; fails when the run failed or nothing moved for 15 s.
    private static func waitFor(_ state: WatchRunState, _ what: String, _ done: () -> Bool) throws(BenchFailure) {
        var lastProgress = (state.watching.load(ordering: .acquiring), state.completed.load(ordering: .acquiring))
        var lastChange = EventLoop.monotonicNanoseconds()
        while !done() {
            if state.failed.load(ordering: .acquiring) { throw BenchFailure("the run failed") }
            let progress = (state.watching.load(ordering: .acquiring), state.completed.load(ordering: .acquiring))
            let now = EventLoop.monotonicNanoseconds()
            if progress != lastProgress {
                lastProgress = progress
                lastChange = now
            } else if now - lastChange > 15_000_000_000 {
                throw BenchFailure("no progress for 15 s waiting for \(what): \(progress.0) watching, \(progress.1) changes pushed")
            }
            usleep(1_000)
        }
    }

    private static func seconds(since start: UInt64) -> Double {
        Double(EventLoop.monotonicNanoseconds() - start) / 1e9
    }

    /// Raises this process's soft descriptor limit to its hard limit; answers the soft limit now.
    @discardableResult
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return Int(clamping: limit.rlim_cur)
    }

    // MARK: Reporting

    private static func report(_ result: Result<WatchReport, BenchFailure>) -> Int32 {
        switch result {
        case .failure(let failure):
            printError("error: \(failure)")
            return failure.exitCode
        case .success(let report):
            print(report.text)
            fflush(nil)
            guard let problem = report.problem else { return BenchExitCode.success }
            printError("error: \(problem)")
            return BenchExitCode.failure
        }
    }
}

/// The figures of one watch run.
struct WatchReport: Sendable {
    let options: WatchOptions
    let label: String
    var profileSeconds = 0.0
    var connectSeconds = 0.0
    var changeSeconds = 0.0
    var residentWithProfiles: Int?
    var residentWatching: Int?
    var residentAfter: Int?
    var fromSend = LatencyHistogram()
    var pushLag = LatencyHistogram()
    var pushLead = LatencyHistogram()
    var pushes = 0
    var unexpectedPushes = 0
    var closedWatchers = 0
    var changesSent = 0

    init(options: WatchOptions, label: String) {
        self.options = options
        self.label = label
    }

    mutating func take(_ state: WatchRunState) {
        fromSend = state.fromSend
        pushLag = state.pushLag
        pushLead = state.pushLead
        pushes = state.pushes
        unexpectedPushes = state.unexpectedPushes
        closedWatchers = state.closedWatchers
        changesSent = state.changesSent
    }

    var problem: String? {
        if pushes != options.changes || unexpectedPushes > 0 {
            return "\(pushes) pushes for \(options.changes) changes (\(unexpectedPushes) unexpected)"
        }
        if closedWatchers > 0 { return "the server closed \(closedWatchers) watching connections" }
        return nil
    }

    var text: String {
        let n = options.connections
        var lines = [
            "watch: \(n) connections each watching a profile of its own, \(options.changes) changes "
                + "(currency.transact +1 to a random watched profile, \(min(options.inFlight, n)) in flight); server \(label)",
            "  change -> push (the change's send at the driver to its push read at the watcher): " + Self.latencies(fromSend),
            "  push before its answer (read at the driver): \(pushLead.count) changes, by " + Self.latencies(pushLead),
            "  push after its answer:                       \(pushLag.count) changes, by " + Self.latencies(pushLag),
            "  pushes: \(pushes) received, \(options.changes) expected, \(unexpectedPushes) unexpected; "
                + "watchers closed by the server: \(closedWatchers); changes/s: \(decimal(Double(changesSent) / max(changeSeconds, 1e-9)))",
            "  setup: \(n) profiles in \(decimal(profileSeconds)) s, \(n) watching connections in \(decimal(connectSeconds)) s",
        ]
        if let base = residentWithProfiles, let watching = residentWatching {
            let growth = watching - base
            lines.append("  server resident memory: \(mebibytes(base)) MiB with the \(n) profiles, \(mebibytes(watching)) MiB with "
                + "\(n) connections watching (+\(mebibytes(growth)) MiB, \(growth / max(n, 1)) bytes a connection), "
                + "\(mebibytes(residentAfter ?? 0)) MiB after the changes")
        } else {
            lines.append("  server resident memory: n/a (--connect: the server is another process)")
        }
        return lines.joined(separator: "\n")
    }

    private static func latencies(_ histogram: LatencyHistogram) -> String {
        guard histogram.count > 0 else { return "no samples" }
        let values = [0.5, 0.9, 0.99].map { histogram.percentile($0) } + [histogram.maxNanoseconds]
        return "p50 \(micro(values[0])) p90 \(micro(values[1])) p99 \(micro(values[2])) max \(micro(values[3])) us"
    }

    private static func micro(_ nanoseconds: UInt64) -> String {
        decimal(Double(nanoseconds) / 1000)
    }
}
