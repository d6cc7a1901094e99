import GatehouseBase
import GatehouseWire
#if canImport(Glibc)
import Glibc
#endif

/// `gatehouse project create|list|get|delete|rotate-keys`: friendly wrappers over the admin ops.
/// Prints the answer's result as one JSON object (without `id` and `ok`), so scripts can use it.
enum ProjectCommand {
    static let parser = ArgumentParser(
        command: "gatehouse project",
        summary: """
            Manages projects with the admin key:
              create ID [--name=NAME]           creates a project and prints its keys (shown only once)
              list                              lists the projects
              get ID                            shows one project
              delete ID                         deletes a project and all its data
              rotate-keys ID --which=public|secret
                                                replaces one key; the old one stops working at once
            """,
        options: CommandClient.connectionOptions + [
            .value("name", placeholder: "NAME", help: "the project's display name (create; default the id)"),
            .value("which", placeholder: "KEY", help: "which key to replace: public or secret (rotate-keys)"),
        ],
        positionals: "create|list|get|delete|rotate-keys [ID]"
    )

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: ParsedArguments
        switch GatehouseCommand.parse(parser, arguments) {
        case .run(let arguments): parsed = arguments
        case .exit(let code): return code
        }
        do {
            return send(try request(for: parsed), parsed)
        } catch {
            GatehouseCommand.printError(error.description)
            return error.exitCode
        }
    }

    /// Sends one admin request and prints its result (without `id` and `ok`) as one JSON object.
    static func send(_ request: JSONObject, _ parsed: ParsedArguments) -> Int32 {
        do {
            let client = try CommandClient.connect(parsed)
            let answer = try client.send(request)
            guard answer.ok, var result = answer.json else {
                GatehouseCommand.printError(answer.line)
                return GatehouseCommand.ExitCode.failure
            }
            result["id"] = nil
            result["ok"] = nil
            print(JSONWriter.string(.object(result)))
            return GatehouseCommand.ExitCode.success
        } catch {
            GatehouseCommand.printError(error.description)
            return error.exitCode
        }
    }

    /// The admin request a subcommand stands for.
    static func request(for parsed: ParsedArguments) throws(CommandFailure) -> JSONObject {
        let words = parsed.positionals
        func projectID() throws(CommandFailure) -> JSONValue {
            guard words.count == 2 else { throw usage("'\(words[0])' takes exactly one project id") }
            return .string(words[1])
        }
        guard let subcommand = words.first else { throw usage("name a subcommand: create, list, get, delete, rotate-keys") }
        switch subcommand {
        case "create":
            var request: JSONObject = ["op": "project.create", "project": try projectID()]
            if let name = parsed.value("name") { request.append("name", .string(name)) }
            return request
        case "list":
            guard words.count == 1 else { throw usage("'list' takes no arguments") }
            return ["op": "project.list"]
        case "get":
            return ["op": "project.get", "project": try projectID()]
        case "delete":
            return ["op": "project.delete", "project": try projectID()]
        case "rotate-keys":
            guard let which = parsed.value("which") else { throw usage("rotate-keys needs --which=public or --which=secret") }
            return ["op": "project.rotate_keys", "project": try projectID(), "which": .string(which)]
        default:
            throw usage("unknown subcommand '\(subcommand)'")
        }
    }

    private static func usage(_ message: String) -> CommandFailure {
        CommandFailure(GatehouseCommand.ExitCode.usage, message + "\nsee 'gatehouse project --help'")
    }
}
