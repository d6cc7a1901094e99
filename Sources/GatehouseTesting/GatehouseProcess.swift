public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The built `gatehouse` binary, run as a child process: for tests that need the real
/// executable (command-line behaviour, signals, SIGKILL).
public final class GatehouseProcess: @unchecked Sendable {
    public let process: Process
    private let output: Pipe
    private let errors: Pipe

    /// The binary SwiftPM built next to the test bundle.
    public static var binaryPath: String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let directory = (executable as NSString).deletingLastPathComponent
        return directory + "/gatehouse"
    }

    /// Starts `gatehouse` with `arguments`; `input`, when given, is written to its standard input,
    /// which is then closed.
    public init(_ arguments: [String], environment: [String: String] = [:], input: String? = nil) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binaryPath)
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        merged["GATEHOUSE_ADMIN_KEY"] = nil
        merged["GATEHOUSE_KEY"] = nil
        for (name, value) in environment { merged[name] = value }
        process.environment = merged
        output = Pipe()
        errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let inputPipe = Pipe()
        process.standardInput = inputPipe
        try process.run()
        if let input {
            inputPipe.fileHandleForWriting.write(Data(input.utf8))
        }
        try inputPipe.fileHandleForWriting.close()
    }

    public var pid: Int32 { process.processIdentifier }

    /// Sends a signal (SIGTERM, SIGKILL…).
    public func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Reads standard output up to and including the first line containing `marker`, or `nil`
    /// when the process closes its output first. For waiting until a server says it listens.
    public func readOutput(until marker: String) -> String? {
        var collected = Data()
        let handle = output.fileHandleForReading
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { return nil }
            collected.append(chunk)
            let text = String(decoding: collected, as: UTF8.self)
            if let range = text.range(of: marker), text[range.upperBound...].contains("\n") { return text }
        }
    }

    /// Waits for the process to exit (off the concurrency pool) and answers its status with
    /// everything it printed. A process still running after `timeoutSeconds` is killed, so a
    /// server that should have refused to start fails its test instead of hanging the suite.
    public func finish(timeoutSeconds: Int = 120) async -> (status: Int32, output: String, errors: String) {
        let process = self.process
        let output = self.output
        let errors = self.errors
        let pid = process.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(timeoutSeconds)) {
            if process.isRunning { kill(pid, SIGKILL) }
        }
        return await offThePool {
            let outputData = output.fileHandleForReading.readDataToEndOfFile()
            let errorData = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: outputData, as: UTF8.self),
                    String(decoding: errorData, as: UTF8.self))
        }
    }
}
