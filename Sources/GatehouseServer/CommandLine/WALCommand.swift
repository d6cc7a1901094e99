import GatehouseBase
import GatehouseStorage

/// `gatehouse wal verify|dump|repair --data-dir=DIR`: the operator's log tools, like
/// `redis-check-aof`. Run them on a stopped server.
enum WALCommand {
    static let parser = ArgumentParser(
        command: "gatehouse wal",
        summary: """
            Inspects or repairs the write-ahead log of a stopped server:
              verify    reports every problem, changes nothing (exit 1 if there is any)
              dump      prints one line per frame and per record
              repair    backs the log up, then cuts it at the first bad frame so the server can start
            """,
        options: [
            .value("data-dir", placeholder: "DIR", help: "the server's data directory (default ./gatehouse-data)")
        ],
        positionals: "verify|dump|repair"
    )

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: ParsedArguments
        switch GatehouseCommand.parse(parser, arguments) {
        case .run(let arguments): parsed = arguments
        case .exit(let code): return code
        }
        guard parsed.positionals.count == 1, let action = parsed.positionals.first else {
            GatehouseCommand.printError("name one action: verify, dump or repair\nsee 'gatehouse wal --help'")
            return GatehouseCommand.ExitCode.usage
        }
        let directory = (parsed.value("data-dir") ?? "./gatehouse-data") + "/wal"
        let fileSystem = NativeFileSystem()
        do {
            switch action {
            case "verify":
                let verification = try WALTool.verify(directory: directory, fileSystem: fileSystem)
                print(verification.description)
                return verification.isHealthy ? GatehouseCommand.ExitCode.success : GatehouseCommand.ExitCode.failure
            case "dump":
                try WALTool.dump(directory: directory, fileSystem: fileSystem) { print($0) }
                return GatehouseCommand.ExitCode.success
            case "repair":
                let report = try WALTool.repair(directory: directory, fileSystem: fileSystem)
                print(report.description)
                return GatehouseCommand.ExitCode.success
            default:
                GatehouseCommand.printError("unknown action '\(action)'\nsee 'gatehouse wal --help'")
                return GatehouseCommand.ExitCode.usage
            }
        } catch {
            GatehouseCommand.printError("\(error)")
            return GatehouseCommand.ExitCode.failure
        }
    }
}
