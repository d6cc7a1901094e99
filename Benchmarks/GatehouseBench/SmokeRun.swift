/// `--smoke`, what CI runs on a debug build: every part of the tool once, briefly. It fails on
/// anything broken (a wrong micro checksum, an error answer, nothing completed, a log that
/// replays wrong) and never on speed, which a debug build on a shared CI machine cannot tell
/// us anything about.
enum SmokeRun {
    private static let microIterations = 2_000
    private static let ops = ["ping", "config.get", "config.put", "project.create", "http.healthz", "http.op-sync"]

    static func run() async -> Int32 {
        print("smoke: micro, \(microIterations) iterations")
        if let failure = MicroMode.measure(iterations: microIterations) { return failure }
        // The actor's own benchmark checks every balance it reaches, so a broken transact fails here.
        let transact = await ProjectTransactBench.run(iterations: microIterations)
        if transact != BenchExitCode.success { return transact }

        let server: InProcessServer
        do {
            server = try InProcessServer.start(InProcessServer.Settings())
        } catch {
            printError("error: \(error)")
            return error.exitCode
        }
        var status = BenchExitCode.success
        for name in ops {
            guard let op = BenchOp.named(name) else { preconditionFailure("smoke op \(name) is not in BenchOp.all") }
            let plan = LoadPlan(op: op, connections: 4, pipeline: 4, warmup: .milliseconds(200), duration: .seconds(1),
                                threads: 1)
            let target = server.target
            let result = await BenchThreads.detached { LoadRun.run(plan, on: target) }
            let code = LoadMode.report(result, json: false)
            if code != BenchExitCode.success { status = code }
        }
        await server.stop()

        print("smoke: durability, tiny sizes")
        let code = await DurabilityMode.measure(.smoke)
        if code != BenchExitCode.success { status = code }
        print("smoke: memory, 2,000 profiles, 2,000 store notifications, 2,000 merges and 1,000 grants")
        if MemoryBench.run(profiles: 2_000, notifications: 2_000, merges: 2_000, grants: 1_000) != BenchExitCode.success { status = BenchExitCode.failure }
        print("smoke: outbox, 20,000 events owed to a webhook that is down")
        if OutboxMemoryBench.run(owed: 20_000) != BenchExitCode.success { status = BenchExitCode.failure }
        print("smoke: restart, 2,000 profiles and 10,000 records")
        if await RestartBench.measure(.smoke) != BenchExitCode.success { status = BenchExitCode.failure }
        print("smoke: retention, small windows filled and aged")
        if await RetentionBench.run(.smoke) != BenchExitCode.success { status = BenchExitCode.failure }
        let watch = WatchOptions.smoke
        print("smoke: watch, \(watch.connections) connections, \(watch.changes) changes")
        if await WatchBench.run(watch) != BenchExitCode.success { status = BenchExitCode.failure }
        print(status == BenchExitCode.success ? "smoke: ok" : "smoke: FAILED")
        return status
    }
}
