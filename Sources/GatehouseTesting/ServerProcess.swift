import Foundation
public import GatehousePosix

/// `gatehouse serve` as a child process on a free port, with the test admin key.
public final class ServerProcess: @unchecked Sendable {
    public let process: GatehouseProcess
    public let address: HostPort
    /// The HTTP listener's, from the banner's `http on` line (`nil` with `--http=off`).
    public let httpAddress: HostPort?
    public let banner: String

    private init(process: GatehouseProcess, address: HostPort, httpAddress: HostPort?, banner: String) {
        self.process = process
        self.address = address
        self.httpAddress = httpAddress
        self.banner = banner
    }

    /// Starts the server on `dataDirectory` and waits (off the concurrency pool) until it says
    /// where it listens.
    public static func start(dataDirectory: String, extraArguments: [String] = [], descriptorLimit: Int? = nil)
        async throws -> ServerProcess
    {
        let process = try await GatehouseProcess.start(
            ["serve", "--data-dir=\(dataDirectory)", "--listen=127.0.0.1:0", "--http=127.0.0.1:0", "--admin-key=\(TestServer.adminKey)",
             "--log-format=json"] + extraArguments,
            descriptorLimit: descriptorLimit
        )
        guard let banner = await process.readOutput(until: "admin key") else {
            throw ServerProcessError.didNotStart
        }
        guard let line = banner.split(separator: "\n").first(where: { $0.contains("listening on ") }),
            let range = line.range(of: "listening on "),
            let text = line[range.upperBound...].split(separator: " ").first,
            let address = HostPort(parsing: String(text))
        else { throw ServerProcessError.didNotStart }
        let httpAddress = banner.split(separator: "\n").first(where: { $0.hasPrefix("http on ") })
            .flatMap { HostPort(parsing: String($0.dropFirst("http on ".count))) }
        return ServerProcess(process: process, address: address, httpAddress: httpAddress, banner: banner)
    }

    /// A connection that said hello with the admin key.
    public func admin() async throws -> TestClient {
        let client = try TestClient(connectingTo: address)
        try await client.hello(TestServer.adminKey)
        return client
    }

    public func kill9() async -> Int32 {
        process.signal(SIGKILL)
        return await process.finish().status
    }

    public func stop() async -> (status: Int32, output: String, errors: String) {
        process.signal(SIGTERM)
        return await process.finish()
    }
}

public enum ServerProcessError: Error {
    case didNotStart
}
