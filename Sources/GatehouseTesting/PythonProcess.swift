import Foundation
import GatehouseBase
#if canImport(Glibc)
import Glibc
#endif

/// A `python3` script run as a child process, for checking what we write against a real
/// reader of the format (Python's `prometheus_client`). The spawn and the wait run on a thread
/// of their own, never on the concurrency pool. `posix_spawn` rather than Foundation's
/// `Process`, which on Linux crashes now and then while it lists `/proc/self/fd` (see
/// GatehouseTesting's `GatehouseProcess`).
public struct PythonProcess {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `python3 -c script arguments…` and answers its standard output; throws when it
    /// cannot start or exits with anything but 0 (a missing `python3` or module included).
    public static func run(_ script: String, arguments: [String]) async throws -> String {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (status, output, errors) = try await GatehouseTesting.offThePool {
            try spawnAndWait(["python3", "-c", script] + arguments, output: directory + "/out", errors: directory + "/err")
        }
        guard status == 0 else {
            // A missing module shows in `errors` as a ModuleNotFoundError; CI installs it
            // (`pip install prometheus_client` or Debian's `python3-prometheus-client`).
            throw Failure(description: "python3 exited with status \(status): \(errors)")
        }
        return output
    }

    public static func temporaryDirectory() throws -> String {
        var template = Array((NSTemporaryDirectory() + "/gh-python-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure(description: "mkdtemp: errno \(errno)") }
        return String(cString: made)
    }

    private static func spawnAndWait(_ command: [String], output: String, errors: String) throws -> (Int32, String, String) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let spawned = posix_spawnp(&child, command[0], &actions, nil, argv, environ)
        guard spawned == 0 else { throw Failure(description: "posix_spawnp \(command[0]): errno \(spawned)") }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 {
            guard errno == EINTR else { throw Failure(description: "waitpid: errno \(errno)") }
        }
        let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        return ((status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F), read(output), read(errors))
    }
}
