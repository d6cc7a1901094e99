import CGatehouseLinux
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The built `gatehouse` binary, run as a child process: for tests that need the real
/// executable (command-line behaviour, signals, SIGKILL). Everything that waits on the child
/// (its start, its output, its exit) runs off the Swift concurrency pool.
///
/// Started with `posix_spawn` rather than Foundation's `Process`: on Linux, `Process.run()`
/// reads past a buffer while it lists `/proc/self/fd` (swift-corelibs-foundation#5472) and
/// crashed the suite now and then, more often the more descriptors the test process has open.
public final class GatehouseProcess: Sendable {
    public let pid: Int32
    /// The parent's ends of the child's standard output and error.
    private let output: Int32
    private let errors: Int32
    /// The exit status once reaped (``finish(timeoutSeconds:)``), nil while running.
    private let exitStatus = Mutex<Int32?>(nil)

    /// The binary SwiftPM built next to the test bundle.
    public static var binaryPath: String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let directory = (executable as NSString).deletingLastPathComponent
        return directory + "/gatehouse"
    }

    /// Starts `gatehouse` with `arguments` and this process's environment (without the admin and
    /// project keys) updated with `environment`; `input`, when given, is written to its standard
    /// input, which is then closed. The spawn waits for the child to exec, and the input for
    /// the child to read it: both on a thread of their own.
    /// `descriptorLimit`: the child's `RLIMIT_NOFILE` (through util-linux's `prlimit`, which
    /// sets it and then becomes the binary), for tests of a server out of descriptors.
    public static func start(_ arguments: [String], environment: [String: String] = [:], input: String? = nil,
                             descriptorLimit: Int? = nil) async throws -> GatehouseProcess
    {
        try await offThePool {
            try GatehouseProcess(arguments, environment: environment, input: input, descriptorLimit: descriptorLimit)
        }
    }

    private init(_ arguments: [String], environment: [String: String], input: String?, descriptorLimit: Int?) throws {
        var merged = ProcessInfo.processInfo.environment
        merged["GATEHOUSE_ADMIN_KEY"] = nil
        merged["GATEHOUSE_KEY"] = nil
        for (name, value) in environment { merged[name] = value }

        let standardInput = try Self.pipe()
        let standardOutput = try Self.pipe()
        let standardError = try Self.pipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The child's ends become 0, 1 and 2; every pipe end is close-on-exec, so nothing else leaks.
        posix_spawn_file_actions_adddup2(&actions, standardInput.read, 0)
        posix_spawn_file_actions_adddup2(&actions, standardOutput.write, 1)
        posix_spawn_file_actions_adddup2(&actions, standardError.write, 2)

        // The child starts with no signal blocked and every signal's default action, whatever
        // the spawning thread had (a pool thread may block some; the test process ignores
        // SIGPIPE): as Foundation's `Process` does, so SIGTERM reaches a server under test.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var path = Self.binaryPath
        var command = [path] + arguments
        if let descriptorLimit {
            command = ["prlimit", "--nofile=\(descriptorLimit)", "--"] + command
            path = "/usr/bin/prlimit"
        }
        let argv = command.map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var child: pid_t = 0
        let status = posix_spawn(&child, path, &actions, &attributes, argv, envp)
        for descriptor in [standardInput.read, standardOutput.write, standardError.write] { Glibc.close(descriptor) }
        guard status == 0 else {
            for descriptor in [standardInput.write, standardOutput.read, standardError.read] { Glibc.close(descriptor) }
            throw SpawnError(message: "posix_spawn \(path): errno \(status)")
        }
        pid = child
        output = standardOutput.read
        errors = standardError.read
        if let input { Self.writeAll(Array(input.utf8), to: standardInput.write) }
        Glibc.close(standardInput.write)
    }

    deinit {
        Glibc.close(output)
        Glibc.close(errors)
    }

    /// Sends a signal (SIGTERM, SIGKILL…).
    public func signal(_ number: Int32) {
        kill(pid, number)
    }

    /// Reads standard output up to and including the first line containing `marker`, or `nil`
    /// when the process closes its output first. For waiting until a server says it listens,
    /// which takes as long as its start.
    public func readOutput(until marker: String) async -> String? {
        await offThePool { [self] in
            var collected: [UInt8] = []
            while true {
                let chunk = Self.read(output)
                if chunk.isEmpty { return nil }
                collected.append(contentsOf: chunk)
                let text = String(decoding: collected, as: UTF8.self)
                if let range = text.range(of: marker), text[range.upperBound...].contains("\n") { return text }
            }
        }
    }

    /// Waits for the process to exit (off the concurrency pool) and answers its status (the
    /// exit code, or the number of the signal that ended it) with everything it printed. A
    /// process still running after `timeoutSeconds` is killed, so a server that should have
    /// refused to start fails its test instead of hanging the suite.
    public func finish(timeoutSeconds: Int = 120) async -> (status: Int32, output: String, errors: String) {
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(timeoutSeconds)) { [self] in
            if exitStatus.withLock({ $0 == nil }) { kill(pid, SIGKILL) }
        }
        return await offThePool { [self] in
            let outputBytes = Self.readToEnd(output)
            let errorBytes = Self.readToEnd(errors)
            let status = Self.wait(for: pid)
            exitStatus.withLock { $0 = status }
            return (status, String(decoding: outputBytes, as: UTF8.self), String(decoding: errorBytes, as: UTF8.self))
        }
    }

    // MARK: System calls, retried when a signal interrupts them

    private static func pipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        guard cgh_pipe_cloexec(&ends) == 0 else { throw SpawnError(message: "pipe2: errno \(errno)") }
        return (ends[0], ends[1])
    }

    /// One read of up to 64 KiB; empty at the end of the stream (or on an error).
    private static func read(_ descriptor: Int32) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            return count > 0 ? Array(buffer[..<count]) : []
        }
    }

    private static func readToEnd(_ descriptor: Int32) -> [UInt8] {
        var collected: [UInt8] = []
        while true {
            let chunk = read(descriptor)
            if chunk.isEmpty { return collected }
            collected.append(contentsOf: chunk)
        }
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            offset += count
        }
    }

    /// Reaps the child: its exit code, or the signal that ended it (as Foundation's `Process` answers).
    private static func wait(for pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return -1 }
        }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : signal
    }
}

/// `posix_spawn` or a pipe could not be made.
public struct SpawnError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
