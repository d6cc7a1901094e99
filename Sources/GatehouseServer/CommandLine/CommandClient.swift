import GatehouseBase
import GatehousePosix
import GatehouseWire
#if canImport(Glibc)
import Glibc
#endif

/// The client side `gatehouse call` and `gatehouse project` share: connect, say `hello`, then
/// send requests with `id`s filled in and read their answers.
final class CommandClient {
    private let client: LineClient
    private var nextID: Int64 = 0

    static let connectionOptions: [OptionSpec] = [
        .value("connect", placeholder: "HOST:PORT", help: "the server to talk to (default 127.0.0.1:7411)"),
        .value("key", placeholder: "KEY", help: "key for hello (default: $GATEHOUSE_KEY, else $GATEHOUSE_ADMIN_KEY, else <data-dir>/admin.key)"),
        .value("data-dir", placeholder: "DIR", help: "where to look for admin.key when no key is given (default ./gatehouse-data)"),
    ]

    private init(client: LineClient) {
        self.client = client
    }

    /// Connects and says hello when a key can be found. Fails with a message for the user.
    static func connect(_ parsed: ParsedArguments) throws(CommandFailure) -> CommandClient {
        let target = parsed.value("connect") ?? "127.0.0.1:7411"
        guard let address = HostPort(parsing: target) else {
            throw CommandFailure(GatehouseCommand.ExitCode.usage, "--connect must be HOST:PORT, got '\(target)'")
        }
        let client: LineClient
        do {
            client = try LineClient(connectingTo: address)
        } catch {
            throw CommandFailure(GatehouseCommand.ExitCode.unavailable, "cannot connect to \(address): \(error)")
        }
        let commandClient = CommandClient(client: client)
        if let key = resolveKey(parsed) {
            let answer = try commandClient.send(["op": "hello", "key": .string(key)])
            guard answer.ok else {
                throw CommandFailure(GatehouseCommand.ExitCode.failure, "hello failed: \(answer.line)")
            }
        }
        return commandClient
    }

    private static func resolveKey(_ parsed: ParsedArguments) -> String? {
        if let key = parsed.value("key") { return key }
        let environment = currentEnvironment()
        for name in ["GATEHOUSE_KEY", "GATEHOUSE_ADMIN_KEY"] {
            if let key = environment[name], !key.isEmpty { return key }
        }
        return readFirstLine(of: (parsed.value("data-dir") ?? "./gatehouse-data") + "/admin.key")
    }

    /// Sends one request (its `id` filled in when missing) and reads its answer.
    func send(_ request: JSONObject) throws(CommandFailure) -> CommandAnswer {
        var request = request
        if request["id"] == nil {
            nextID += 1
            request.prepend("id", .int(nextID))
        }
        do {
            try client.send(JSONWriter.string(.object(request)))
            guard let line = try client.readLine() else {
                throw CommandFailure(GatehouseCommand.ExitCode.failure, "the server closed the connection")
            }
            return CommandAnswer(line: line)
        } catch let error as CommandFailure {
            throw error
        } catch {
            throw CommandFailure(GatehouseCommand.ExitCode.failure, "connection failed: \(error)")
        }
    }
}

/// One answer line as received, and whether it was a success.
struct CommandAnswer {
    let line: String

    var json: JSONObject? { (try? JSONParser.parse(line))?.objectValue }
    var ok: Bool { json?["ok"]?.boolValue == true }
}

/// Why a client command stopped, with its exit code.
struct CommandFailure: Error, CustomStringConvertible {
    let exitCode: Int32
    let description: String

    init(_ exitCode: Int32, _ description: String) {
        self.exitCode = exitCode
        self.description = description
    }
}

/// The first line of a small text file, or `nil` when it cannot be read.
func readFirstLine(of path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: 4096)
    let count = read(fd, &bytes, bytes.count)
    guard count > 0 else { return nil }
    let line = bytes[..<count].split(separator: UInt8(ascii: "\n")).first.map { String(decoding: $0, as: UTF8.self) }
    return line.flatMap { $0.isEmpty ? nil : $0 }
}
