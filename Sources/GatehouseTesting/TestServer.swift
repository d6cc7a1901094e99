public import GatehouseBase
public import GatehousePosix
public import GatehouseServer
import GatehouseWire

/// A real server in this process, on a free loopback port, with a temporary data directory
/// that outlives restarts (``restart(_:)``) until ``stop()``.
public final class TestServer: Sendable {
    public static let adminKey = "ak_test_admin_key_0123456789abcdef"
    public let server: Server
    public let dataDirectory: TemporaryDirectory
    public let logs: CapturingLogHandler

    public var address: HostPort { server.address }
    public var dataPath: String { dataDirectory.appending("data") }

    /// Starts a server; `configure` adjusts the configuration (limits, test clock…).
    public convenience init(_ configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        try self.init(dataDirectory: TemporaryDirectory(), configure)
    }

    /// Starts a server on an existing data directory (a restart).
    public init(dataDirectory: TemporaryDirectory, _ configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        var configuration = ServerConfiguration()
        configuration.dataDirectory = dataDirectory.appending("data")
        configuration.listen = HostPort(host: "127.0.0.1", port: 0)
        configuration.adminKey = Self.adminKey
        configuration.shutdownGrace = .seconds(5)
        // Small segments so tests rotate; no exit on a storage failure inside the test process.
        configuration.walSegmentBytes = 1 << 20
        configuration.diskReserveBytes = 0
        configuration.exitOnStorageFailure = false
        configure(&configuration)
        let logs = CapturingLogHandler()
        self.logs = logs
        self.dataDirectory = dataDirectory
        self.server = try Server(configuration: configuration, logger: Logger(label: "test", handler: logs, logLevel: .debug))
    }

    /// Stops the server and removes its data.
    public func stop() async {
        await server.shutdown()
        dataDirectory.remove()
    }

    /// Stops the server cleanly and starts a new one on the same data directory.
    public func restart(_ configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> TestServer {
        await server.shutdown()
        return try TestServer(dataDirectory: dataDirectory, configure)
    }

    /// A new connection, not yet authenticated.
    public func connect() throws -> TestClient {
        try TestClient(connectingTo: address)
    }

    /// A connection that said hello with the admin key.
    public func admin() async throws -> TestClient {
        let client = try connect()
        try await client.hello(Self.adminKey)
        return client
    }

    /// Creates a project and answers its keys.
    public func createProject(_ id: String) async throws -> (publicKey: String, secretKey: String) {
        let admin = try await admin()
        let answer = try await admin.call("project.create", ["project": .string(id)])
        guard answer.isSuccess, let keys = answer.object("keys"), let publicKey = keys.string("public"),
            let secretKey = keys.string("secret")
        else { throw TestClientError.failed(answer) }
        return (publicKey, secretKey)
    }
}

/// Runs `body` against a fresh server and stops the server afterwards, also when `body` throws.
public func withTestServer<T>(
    _ configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: (TestServer) async throws -> T
) async throws -> T {
    let server = try TestServer(configure)
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}
