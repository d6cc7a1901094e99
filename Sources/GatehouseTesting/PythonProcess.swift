import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A `python3` script run as a ``ChildProcess``, for checking what we write against a real
/// reader of the format (Python's `prometheus_client`).
public struct PythonProcess {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `python3 -c script arguments…` and answers its standard output; throws when it
    /// cannot start or exits with anything but 0 (a missing `python3` or module included).
    public static func run(_ script: String, arguments: [String]) async throws -> String {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (status, output, errors) = try await ChildProcess.run(["python3", "-c", script] + arguments, logs: directory + "/python")
        guard status == 0 else {
            // A missing module shows in `errors` as a ModuleNotFoundError; CI installs it
            // (scripts/install-packages.sh: pip's prometheus_client, or Debian's python3-prometheus-client).
            throw Failure(description: "python3 exited with status \(status): \(errors)")
        }
        return output
    }

    public static func temporaryDirectory() throws -> String {
        var template = Array((NSTemporaryDirectory() + "/gh-python-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure(description: "mkdtemp: errno \(errno)") }
        return String(cString: made)
    }
}
