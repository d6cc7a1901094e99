import GatehousePosix
import GatehouseWire
#if canImport(Glibc)
import Glibc
#endif

/// The default mode: start or reach the server, run the load, print the figures.
enum LoadMode {
    static func run(_ options: LoadOptions) async -> Int32 {
        warnIfDebugBuild()
        switch options.server {
        case .running(let address, let http, let adminKey):
            let label = http.map { "\(address), http \($0)" } ?? "\(address)"
            let target = BenchTarget(address: address, httpAddress: http, adminKey: adminKey, label: label)
            if options.setupOnly {
                return await BenchThreads.detached { setUpOnly(options, on: target) }
            }
            let plan = options.plan
            let result = await BenchThreads.detached { LoadRun.run(plan, on: target) }
            return report(result, json: options.json)
        case .inProcess(let settings):
            let server: InProcessServer
            do {
                server = try InProcessServer.start(settings)
            } catch {
                printError("error: \(error)")
                return error.exitCode
            }
            let plan = options.plan
            let result = await BenchThreads.detached { LoadRun.run(plan, on: server.target) }
            await server.stop()
            return report(result, json: options.json)
        }
    }

    /// Prints the figures (or the failure) and answers the exit code.
    static func report(_ result: Result<LoadReport, BenchFailure>, json: Bool) -> Int32 {
        let report: LoadReport
        switch result {
        case .success(let value):
            report = value
        case .failure(let failure):
            printError("error: \(failure)")
            return failure.exitCode
        }
        if json {
            // stdout stays one parseable JSON object; people still see the line on stderr.
            printError(report.humanLine)
            print(JSONWriter.string(report.json))
        } else {
            print(report.humanLine)
        }
        // The figures before any complaint about them, also when stdout is a pipe.
        fflush(nil)
        guard let problem = report.problem else { return BenchExitCode.success }
        printError("error: \(problem)")
        return BenchExitCode.failure
    }

    /// `--setup-only`: a project to point `bench/lineload.c` (or anything else) at.
    private static func setUpOnly(_ options: LoadOptions, on target: BenchTarget) -> Int32 {
        let project: BenchProject
        do {
            project = try BenchSetup.createProject(on: target)
        } catch {
            printError("error: \(error)")
            return error.exitCode
        }
        let op = options.plan.op
        let key = project.key(op.key, adminKey: target.adminKey)
        let hello = JSONWriter.string(["op": "hello", "key": .string(key)])
        let request = op.request.replacing("{key}", with: JSONWriter.string(.string(key)))
            .replacing("{bench_project}", with: project.id)
        if options.json {
            print(JSONWriter.string([
                "project": .string(project.id), "public_key": .string(project.publicKey),
                "secret_key": .string(project.secretKey), "hello": .string(hello),
                "request": .string(request), "per_connection_setup": .bool(op.setup != nil),
            ]))
            return BenchExitCode.success
        }
        print("project \(project.id)\npublic_key \(project.publicKey)\nsecret_key \(project.secretKey)")
        if op.leftovers == .createdProjects {
            print("# \(op.name) creates projects \(project.id)\(BenchOp.createdProjectInfix)<n>: delete them when done")
        }
        if op.transport.isHTTP {
            print("# \(op.name) is an HTTP op, which lineload does not speak: use gatehouse-bench (or wrk for http.healthz)")
        } else if op.setup != nil {
            print("# \(op.name) needs a setup per connection, which lineload cannot do: use gatehouse-bench")
        } else {
            let plan = options.plan
            print("lineload -h \(target.address.host) -p \(target.address.port) -c \(plan.connections) -P \(plan.pipeline) "
                + "-d \(Int(plan.duration.inSeconds.rounded(.up))) -s '\(hello)' -r '\(request)'")
        }
        return BenchExitCode.success
    }
}
