import GatehouseBase
import GatehouseCore
import GatehouseRuntime
import GatehouseStorage
import GatehouseWire

/// `gatehouse tenant snapshot|restore|export`: moving a tenant between servers.
enum TenantCommand {
    static let parser = ArgumentParser(
        command: "gatehouse tenant",
        summary: """
            Moves tenants between servers:
              snapshot ID [--out=NAME]              a running server writes the tenant into its exports directory
              restore ID --from=NAME [--replace]    a running server restores the tenant from a file in its exports directory
              export ID --data-dir=DIR [--out=PATH] writes the tenant of a STOPPED server's data directory to a local file
            A running server only writes and reads file names inside its --exports-dir (default <data-dir>/exports):
            copy a file there to restore it. export runs as you, with no server, so it writes wherever --out says.
            A restore under the snapshot's own id keeps its keys; under another id it is a clone with fresh keys.
            """,
        options: CommandClient.connectionOptions + [
            .value("out", placeholder: "NAME|PATH", help: "snapshot: a file name in the server's exports directory (default <id>-<cursor>.snap); export: any local path (default <data-dir>/exports/<id>-<cursor>.snap)"),
            .value("from", placeholder: "NAME", help: "the file to restore, by name in the server's exports directory (restore)"),
            .flag("replace", help: "overwrite a project that exists (restore)"),
        ],
        positionals: "snapshot|restore|export ID"
    )

    static func run(_ arguments: [String]) async -> Int32 {
        let parsed: ParsedArguments
        switch GatehouseCommand.parse(parser, arguments) {
        case .run(let arguments): parsed = arguments
        case .exit(let code): return code
        }
        let words = parsed.positionals
        guard words.count == 2 else {
            GatehouseCommand.printError("usage: gatehouse tenant snapshot|restore|export ID\nsee 'gatehouse tenant --help'")
            return GatehouseCommand.ExitCode.usage
        }
        switch words[0] {
        case "snapshot":
            var request: JSONObject = ["op": "tenant.snapshot", "project": .string(words[1])]
            if let out = parsed.value("out") { request.append("path", .string(out)) }
            return ProjectCommand.send(request, parsed)
        case "restore":
            guard let from = parsed.value("from") else {
                GatehouseCommand.printError("restore needs --from=NAME")
                return GatehouseCommand.ExitCode.usage
            }
            let request: JSONObject = ["op": "tenant.restore", "project": .string(words[1]), "path": .string(from),
                                       "replace": .bool(parsed.flag("replace"))]
            return ProjectCommand.send(request, parsed)
        case "export":
            return await exportStopped(project: words[1], parsed)
        default:
            GatehouseCommand.printError("unknown action '\(words[0])'\nsee 'gatehouse tenant --help'")
            return GatehouseCommand.ExitCode.usage
        }
    }

    /// Recovers a stopped server's data directory (exactly as `serve` would at start, holding its
    /// lock so a running server refuses) and writes one tenant to a file.
    private static func exportStopped(project: String, _ parsed: ParsedArguments) async -> Int32 {
        let dataDirectory = parsed.value("data-dir") ?? "./gatehouse-data"
        let logger = Logger(label: "gatehouse", handler: StreamLogHandler(format: .text), logLevel: .warning)
        do {
            let id = try ProjectID(validating: project)
            let directory = try DataDirectory.prepare(dataDirectory)
            let lock = try directory.lock()
            defer { lock.release() }
            let engine = try Engine.open(
                dataDirectory: dataDirectory, fileSystem: NativeFileSystem(), options: EngineOptions(wal: WALOptions(policy: .always)),
                adminKey: SystemRandomSource().randomToken(alphabet: .base62, length: 43),
                clock: SystemServerClock(), random: SystemRandomSource(), logger: logger
            ) { _ in }
            let export = if let out = parsed.value("out") {
                try await engine.exportTenant(id, toPath: out)
            } else {
                try await engine.exportTenant(id, named: nil)
            }
            await engine.close()
            print(JSONWriter.string([
                "path": .string(export.value.path), "cursor": .int(Int64(export.value.cursor)),
                "profiles": .int(export.value.profiles), "bytes": .int(export.value.bytes), "sha256": .string(export.value.sha256),
            ]))
            return GatehouseCommand.ExitCode.success
        } catch {
            GatehouseCommand.printError("\(error)")
            return GatehouseCommand.ExitCode.failure
        }
    }
}
