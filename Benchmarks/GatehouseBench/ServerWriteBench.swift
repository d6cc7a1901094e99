import GatehouseStorage

/// Durable writes through the real server: an in-process server on a real disk, `config.put`
/// from N clients with one request in flight each (pipeline 1), under one fsync policy. Each
/// answer arrives only once its log record is durable, so writes/s is durable writes/s, and the
/// server's own counters tell how many fsyncs they shared.
enum ServerWriteBench {
    struct Point: Sendable {
        let policy: DurabilityPolicy
        let report: LoadReport
        /// The server's log over the measured window.
        let wal: ServerWALProbe.Counters
    }

    static let op = "config.put"

    /// Every client count against one server started with `policy`; blocking.
    static func measure(policy: DurabilityPolicy, server: InProcessServer, options: DurabilityOptions)
        throws(BenchFailure) -> [Point]
    {
        guard let op = BenchOp.named(op) else { preconditionFailure("\(op) is not in BenchOp.all") }
        var points: [Point] = []
        for clients in options.clients {
            let plan = LoadPlan(op: op, connections: clients, pipeline: 1, warmup: options.warmup,
                                duration: options.duration, threads: 1)
            let probe = try ServerWALProbe(target: server.target)
            let report = try LoadRun.run(plan, on: server.target, probe: probe).get()
            if let problem = report.problem { throw BenchFailure(problem) }
            points.append(Point(policy: policy, report: report, wal: try probe.delta()))
        }
        return points
    }

    static func settings(_ policy: DurabilityPolicy, _ options: DurabilityOptions) -> InProcessServer.Settings {
        var settings = InProcessServer.Settings()
        settings.fsync = policy.rawValue
        settings.ioThreads = options.ioThreads
        settings.parentDirectory = options.parentDirectory
        return settings
    }
}
