import GatehouseBase
import GatehouseWire
#if canImport(Glibc)
import Glibc
#endif

/// `gatehouse call [--connect=HOST:PORT] [--key=KEY] [JSON ...]`: like `redis-cli`, sends each
/// JSON request given (or each line of standard input), prints each answer, and exits 1 if any
/// answer is an error.
enum CallCommand {
    static let parser = ArgumentParser(
        command: "gatehouse call",
        summary: """
            Sends each JSON request given (or, with none, each line of standard input) to a server and prints \
            each answer line. Fills in missing ids and says hello first. Exits 1 if any answer is an error.
            """,
        options: CommandClient.connectionOptions,
        positionals: "[JSON ...]"
    )

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: ParsedArguments
        switch GatehouseCommand.parse(parser, arguments) {
        case .run(let arguments): parsed = arguments
        case .exit(let code): return code
        }
        do {
            let requests = try parsed.positionals.map { text throws(CommandFailure) in try parseRequest(text) }
            let client = try CommandClient.connect(parsed)
            var failed = false
            if requests.isEmpty {
                while let line = readLine(strippingNewline: true) {
                    guard !line.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\r" }) else { continue }
                    failed = try exchange(client, parseRequest(line)) || failed
                }
            } else {
                for request in requests {
                    failed = try exchange(client, request) || failed
                }
            }
            return failed ? GatehouseCommand.ExitCode.failure : GatehouseCommand.ExitCode.success
        } catch {
            GatehouseCommand.printError(error.description)
            return error.exitCode
        }
    }

    /// Sends one request, prints its answer, and answers whether it was an error.
    private static func exchange(_ client: CommandClient, _ request: JSONObject) throws(CommandFailure) -> Bool {
        let answer = try client.send(request)
        print(answer.line)
        fflush(nil)
        return !answer.ok
    }

    private static func parseRequest(_ text: String) throws(CommandFailure) -> JSONObject {
        guard let object = (try? JSONParser.parse(text))?.objectValue else {
            throw CommandFailure(GatehouseCommand.ExitCode.usage, "not a JSON object: \(text.prefix(200))")
        }
        return object
    }
}
