/// The process exit codes of `gatehouse-bench` (its `--help` lists them).
enum BenchExitCode {
    static let success: Int32 = 0
    /// A run failed: error answers, no requests completed, a server that could not be reached.
    static let failure: Int32 = 1
    /// The command line was wrong.
    static let usage: Int32 = 2
}

/// Why a mode could not finish, as a message for people and the exit code it maps to.
struct BenchFailure: Error, Sendable, CustomStringConvertible {
    let message: String
    let exitCode: Int32

    init(_ message: String, exitCode: Int32 = BenchExitCode.failure) {
        self.message = message
        self.exitCode = exitCode
    }

    static func usage(_ message: String) -> BenchFailure {
        BenchFailure(message, exitCode: BenchExitCode.usage)
    }

    var description: String { message }
}
