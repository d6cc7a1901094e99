import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A program other than `gatehouse` (haproxy, curl, openssl, python3) as a child process, found on the
/// PATH, with its standard input read from a file and its output written to files (GatehouseProcess
/// starts only the built binary). `posix_spawnp` rather than Foundation's `Process`, for the
/// reason GatehouseProcess gives; every wait runs off the concurrency pool.
public final class ChildProcess: Sendable {
    public let pid: Int32
    private let outputPath: String
    private let errorsPath: String
    /// The exit status once reaped.
    private let exitStatus = Mutex<Int32?>(nil)

    private init(pid: Int32, outputPath: String, errorsPath: String) {
        self.pid = pid
        self.outputPath = outputPath
        self.errorsPath = errorsPath
    }

    /// Starts `command`; its output goes to `<logs>.out` and `<logs>.err`.
    public static func start(_ command: [String], input: String = "/dev/null", logs: String) async throws -> ChildProcess {
        try await offThePool { try spawn(command, input: input, logs: logs) }
    }

    /// Starts `command` and waits for it to exit.
    public static func run(_ command: [String], input: String = "/dev/null", logs: String) async throws
        -> (status: Int32, output: String, errors: String)
    {
        try await start(command, input: input, logs: logs).finish()
    }

    public func signal(_ number: Int32) {
        kill(pid, number)
    }

    /// Whether the process has exited; reaps it if so.
    public func hasExited() -> Bool {
        exitStatus.withLock { status in
            if status != nil { return true }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return false }
            status = Self.exitCode(raw)
            return true
        }
    }

    /// Waits for the process to exit and answers its status with what it wrote.
    public func finish() async -> (status: Int32, output: String, errors: String) {
        await offThePool { [self] in
            let status = exitStatus.withLock { $0 } ?? Self.reap(pid)
            exitStatus.withLock { $0 = status }
            let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
            return (status, read(outputPath), read(errorsPath))
        }
    }

    private static func spawn(_ command: [String], input: String, logs: String) throws -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logs + ".out", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, logs + ".err", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // No signal blocked and every one at its default, whatever the spawning thread had, so
        // that SIGTERM stops HAProxy.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let status = posix_spawnp(&child, command[0], &actions, &attributes, argv, environ)
        guard status == 0 else { throw ChildProcessError(description: "cannot start \(command[0]): errno \(status)") }
        return ChildProcess(pid: child, outputPath: logs + ".out", errorsPath: logs + ".err")
    }

    private static func reap(_ pid: pid_t) -> Int32 {
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 {
            guard errno == EINTR else { return -1 }
        }
        return exitCode(raw)
    }

    /// The exit code, or 128 plus the signal that ended it, as a shell reports it.
    private static func exitCode(_ raw: Int32) -> Int32 {
        raw & 0x7F == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
    }
}

public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
}
