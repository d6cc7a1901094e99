public import GatehouseBase
public import GatehousePosix
public import GatehouseServer
import GatehouseWire
public import Testing

/// A real server in this process, on a free loopback port, with a temporary data directory
/// that outlives restarts (``restart(sourceLocation:_:)``) until ``stop(sourceLocation:)``.
///
/// Starting and stopping block (recovery, fsyncs, thread starts, removing the directory), so
/// they run off the Swift concurrency pool: the suite's tests and every server under test
/// share its two threads, and one of them held by a start stalls half of all the servers. The
/// server itself must not touch the disk from the pool either: every file-system call it makes
/// there fails the test when it stops (``PoolGuardedFileSystem``).
public final class TestServer: Sendable {
    public static let adminKey = "ak_test_admin_key_0123456789abcdef"
    public let server: Server
    public let dataDirectory: TemporaryDirectory
    public let logs: CapturingLogHandler

    public var address: HostPort { server.address }
    /// The HTTP listener's address (every test server has one, unless its test turned it off).
    public var httpAddress: HostPort { server.httpAddress! }
    public var dataPath: String { dataDirectory.appending("data") }
    private let poolCalls: PoolCalls

    private init(dataDirectory: TemporaryDirectory, configuration: ServerConfiguration, poolCalls: PoolCalls) throws {
        let logs = CapturingLogHandler()
        self.logs = logs
        self.dataDirectory = dataDirectory
        self.poolCalls = poolCalls
        var guarded = configuration
        guarded.fileSystem = PoolGuardedFileSystem(configuration.fileSystem, noting: poolCalls)
        self.server = try Server(configuration: guarded, logger: Logger(label: "test", handler: logs, logLevel: .debug))
    }

    /// Starts a server on a fresh data directory; `configure` adjusts the configuration
    /// (limits, test clock…).
    public static func start(_ configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> TestServer {
        let dataDirectory = try await offThePool { try TemporaryDirectory() }
        return try await start(dataDirectory: dataDirectory, configure)
    }

    /// Starts a server on an existing data directory (a restart).
    public static func start(dataDirectory: TemporaryDirectory, _ configure: (inout ServerConfiguration) -> Void = { _ in })
        async throws -> TestServer
    {
        try await start(dataDirectory: dataDirectory, poolCalls: PoolCalls(), configure)
    }

    private static func start(dataDirectory: TemporaryDirectory, poolCalls: PoolCalls,
                              _ configure: (inout ServerConfiguration) -> Void) async throws -> TestServer
    {
        var configuration = ServerConfiguration()
        configuration.dataDirectory = dataDirectory.appending("data")
        configuration.listen = HostPort(host: "127.0.0.1", port: 0)
        configuration.http = HostPort(host: "127.0.0.1", port: 0)
        configuration.adminKey = Self.adminKey
        configuration.shutdownGrace = .seconds(5)
        // Small segments so tests rotate; no exit on a storage failure inside the test process.
        configuration.walSegmentBytes = 1 << 20
        configuration.diskReserveBytes = 0
        configuration.exitOnStorageFailure = false
        configure(&configuration)
        let chosen = configuration
        return try await offThePool { try TestServer(dataDirectory: dataDirectory, configuration: chosen, poolCalls: poolCalls) }
    }

    /// Stops the server and removes its data; fails the test for each file-system call the
    /// server (or an earlier one on the same data directory) made on the concurrency pool.
    public func stop(sourceLocation: SourceLocation = #_sourceLocation) async {
        await server.shutdown()
        reportPoolCalls(at: sourceLocation)
        let dataDirectory = self.dataDirectory
        await offThePool { dataDirectory.remove() }
    }

    /// Stops the server cleanly and starts a new one on the same data directory.
    public func restart(
        sourceLocation: SourceLocation = #_sourceLocation, _ configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        await server.shutdown()
        reportPoolCalls(at: sourceLocation)
        return try await Self.start(dataDirectory: dataDirectory, poolCalls: poolCalls, configure)
    }

    private func reportPoolCalls(at sourceLocation: SourceLocation) {
        for call in poolCalls.take() {
            Issue.record("the server called the file system on a thread of the concurrency pool: \(call)",
                         sourceLocation: sourceLocation)
        }
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
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (TestServer) async throws -> T
) async throws -> T {
    let server = try await TestServer.start(configure)
    do {
        let result = try await body(server)
        await server.stop(sourceLocation: sourceLocation)
        return result
    } catch {
        await server.stop(sourceLocation: sourceLocation)
        throw error
    }
}
