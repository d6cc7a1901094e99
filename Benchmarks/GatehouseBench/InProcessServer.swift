import GatehouseBase
import GatehousePosix
import GatehouseServer

/// A real Gatehouse server inside the bench process, on a free loopback port with a data
/// directory of its own, for runs without `--connect` (and for `--smoke`). It shares the
/// machine with the load generator, so its figures are indicative.
///
/// Built from a default ``ServerConfiguration`` (production defaults), not from the test
/// support's `TestServer`, whose settings are tuned for tests rather than for speed.
struct InProcessServer: Sendable {
    struct Settings: Sendable {
        /// `--fsync`: a raw value of the configuration's durability policy.
        var fsync = "always"
        var ioThreads: Int?
        /// Where the temporary data directory goes; nil: `$TMPDIR`, else `/tmp`.
        var parentDirectory: String?
    }

    let server: Server
    let dataDirectory: String
    let target: BenchTarget

    static func start(_ settings: Settings) throws(BenchFailure) -> InProcessServer {
        var configuration = ServerConfiguration()
        configuration.fsync = try policy(named: settings.fsync, like: configuration.fsync)
        configuration.listen = HostPort(host: "127.0.0.1", port: 0)
        configuration.http = HostPort(host: "127.0.0.1", port: 0)
        let adminKey = "ak_bench_" + SystemRandomSource().randomToken(alphabet: .base62, length: 32)
        configuration.adminKey = adminKey
        configuration.shutdownGrace = .seconds(2)
        // A failed log write must be reported as a failed run, not end the process with exit 4.
        configuration.exitOnStorageFailure = false
        if let ioThreads = settings.ioThreads { configuration.ioThreads = ioThreads }
        let directory = try ScratchDirectory.make(in: settings.parentDirectory)
        configuration.dataDirectory = directory + "/data"
        // Warnings only: the server's lifecycle lines would interleave with the figures.
        let logger = Logger(label: "bench-server", handler: StreamLogHandler(), logLevel: .warning)
        let server: Server
        do {
            server = try Server(configuration: configuration, logger: logger)
        } catch {
            ScratchDirectory.remove(directory)
            throw BenchFailure("the in-process server did not start: \(error)")
        }
        let label = "in-process, fsync \(settings.fsync), \(configuration.ioThreads) io thread(s)"
        return InProcessServer(
            server: server, dataDirectory: directory,
            target: BenchTarget(address: server.address, httpAddress: server.httpAddress, adminKey: adminKey, label: label,
                                isThrowaway: true)
        )
    }

    func stop() async {
        await server.shutdown()
        ScratchDirectory.remove(dataDirectory)
    }

    /// The policy called `name`. Reached through `RawRepresentable` and `CaseIterable` rather
    /// than by the policy type's name, so this target depends only on what the configuration
    /// exposes, not on which module declares the type.
    private static func policy<Policy: RawRepresentable & CaseIterable>(named name: String, like _: Policy)
        throws(BenchFailure) -> Policy where Policy.RawValue == String
    {
        guard let policy = Policy(rawValue: name) else {
            let names = Policy.allCases.map(\.rawValue).joined(separator: ", ")
            throw .usage("--fsync must be one of \(names), got '\(name)'")
        }
        return policy
    }
}
