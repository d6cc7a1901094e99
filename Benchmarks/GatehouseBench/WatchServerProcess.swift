import Foundation
import GatehouseBase
import GatehousePosix
import GatehouseServer
import GatehouseStorage
#if canImport(Glibc)
import Glibc
#endif

/// The server of `gatehouse-bench watch` without `--connect`: the same in-process server as the
/// load mode's (production defaults, a temporary data directory), but run in a child process of
/// the bench (`gatehouse-bench watch --serve-child`). Each end of a connection takes a
/// descriptor, so 10,000 watchers and the server's side of them would need 20,000 in one
/// process, over the usual hard limit (`ulimit -Hn`, 20,000 on the reference machine); two
/// processes each need half. It also makes the server's resident memory its own, read from
/// `/proc/<pid>/statm`.
///
/// The child prints `ready <host:port> <admin key>` on stdout, serves until its stdin closes
/// (the parent closes it, or the parent died), then shuts down and removes its data.
final class WatchServerProcess: @unchecked Sendable {
    let target: BenchTarget
    private let process: Process
    private let input: Pipe

    var pid: Int32 { process.processIdentifier }

    private init(target: BenchTarget, process: Process, input: Pipe) {
        self.target = target
        self.process = process
        self.input = input
    }

    static func start(_ settings: InProcessServer.Settings, connections: Int) throws(BenchFailure) -> WatchServerProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath())
        var arguments = ["watch", "--serve-child", "--connections", "\(connections)", "--fsync", settings.fsync]
        if let ioThreads = settings.ioThreads { arguments += ["--io-threads", "\(ioThreads)"] }
        if let parent = settings.parentDirectory { arguments += ["--data-dir", parent] }
        process.arguments = arguments
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            throw BenchFailure("cannot start the server process: \(error)")
        }
        let line = readLine(output.fileHandleForReading.fileDescriptor, timeoutMilliseconds: 60_000)
        let fields = line?.split(separator: " ").map(String.init) ?? []
        guard fields.count == 3, fields[0] == "ready", let address = HostPort(parsing: fields[1]) else {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            throw BenchFailure("the server process did not start (it said: \(line ?? "nothing"))")
        }
        let label = "in a child process, fsync \(settings.fsync), \(settings.ioThreads ?? ServerConfiguration().ioThreads) io thread(s)"
        let target = BenchTarget(address: address, adminKey: fields[2], label: label, isThrowaway: true)
        return WatchServerProcess(target: target, process: process, input: input)
    }

    /// The child's resident set size, from `/proc/<pid>/statm`.
    func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Closes the child's stdin and waits for it to exit (blocking).
    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    // MARK: The child

    /// `watch --serve-child`: runs the server until stdin closes.
    static func serve(_ settings: InProcessServer.Settings, connections: Int) async -> Int32 {
        WatchBench.raiseDescriptorLimit()
        var configuration = ServerConfiguration()
        guard let policy = DurabilityPolicy(rawValue: settings.fsync) else {
            printError("error: unknown fsync policy \(settings.fsync)")
            return BenchExitCode.usage
        }
        configuration.fsync = policy
        configuration.listen = HostPort(host: "127.0.0.1", port: 0)
        configuration.http = HostPort(host: "127.0.0.1", port: 0)
        let adminKey = "ak_bench_" + SystemRandomSource().randomToken(alphabet: .base62, length: 32)
        configuration.adminKey = adminKey
        configuration.shutdownGrace = .seconds(2)
        configuration.exitOnStorageFailure = false
        // The watchers, and the bench's own setup and driver connections.
        configuration.connectionsMax = max(configuration.connectionsMax, connections + WatchBench.extraConnections)
        if let ioThreads = settings.ioThreads { configuration.ioThreads = ioThreads }
        let directory: String
        do {
            directory = try ScratchDirectory.make(in: settings.parentDirectory)
        } catch {
            printError("error: \(error)")
            return error.exitCode
        }
        configuration.dataDirectory = directory + "/data"
        let logger = Logger(label: "bench-server", handler: StreamLogHandler(), logLevel: .warning)
        let server: Server
        do {
            server = try Server(configuration: configuration, logger: logger)
        } catch {
            ScratchDirectory.remove(directory)
            print("failed \(error)")
            fflush(nil)
            return BenchExitCode.failure
        }
        print("ready \(server.address) \(adminKey)")
        fflush(nil)
        await BenchThreads.detached {
            var byte: UInt8 = 0
            while true {
                let count = Glibc.read(0, &byte, 1)
                if count == 0 || (count < 0 && errno != EINTR) { return }
            }
        }
        await server.shutdown()
        ScratchDirectory.remove(directory)
        return BenchExitCode.success
    }

    // MARK: Helpers

    private static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return CommandLine.arguments[0] }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// One line from `descriptor`, or nil at its end or after `timeoutMilliseconds` of silence.
    private static func readLine(_ descriptor: Int32, timeoutMilliseconds: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, timeoutMilliseconds)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return nil }
            let count = Glibc.read(descriptor, &byte, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1 else { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }
}
