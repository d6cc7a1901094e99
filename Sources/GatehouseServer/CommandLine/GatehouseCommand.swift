import GatehouseBase
#if canImport(Glibc)
import Glibc
#endif

/// `gatehouse <command> …`: the one executable's entry point, kept in the library so it can be
/// tested. Answers the process exit code.
public enum GatehouseCommand {
    /// Exit codes, documented in docs/operations.md.
    public enum ExitCode {
        public static let success: Int32 = 0
        /// A request answered with an error (`call`, `project`), or the server failed at run time.
        public static let failure: Int32 = 1
        /// The command line was wrong.
        public static let usage: Int32 = 2
        /// The server would not start (data directory, damaged log, address in use), or could not be reached.
        public static let unavailable: Int32 = 3
        /// A write or fsync of the log failed: the server stopped at once (fail-stop); restart it
        /// once the disk is healthy and it recovers from what reached the disk.
        public static let storageFailure: Int32 = 4
    }

    public static func main(_ arguments: [String]) async -> Int32 {
        guard let command = arguments.first else {
            print(overview)
            return ExitCode.usage
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "serve": return await ServeCommand.run(rest)
        case "call": return CallCommand.run(rest)
        case "project": return ProjectCommand.run(rest)
        case "tenant": return await TenantCommand.run(rest)
        case "wal": return WALCommand.run(rest)
        case "-h", "--help", "help":
            print(overview)
            return ExitCode.success
        case "--version", "version":
            print(GatehouseVersion.serverString)
            return ExitCode.success
        default:
            printError("unknown command '\(command)'\n\n\(overview)")
            return ExitCode.usage
        }
    }

    static let overview = """
        gatehouse: a self-hosted server for subscriptions, entitlements and virtual currencies

        usage: gatehouse <command> [options]

        commands:
          serve      run the server (defaults: ./gatehouse-data, 127.0.0.1:7411)
          call       send JSON requests to a server and print the answers
          project    create, list, get, delete projects and rotate their keys
          tenant     snapshot and restore tenants (export one from a stopped server)
          wal        verify, dump or repair the write-ahead log of a stopped server
          version    print the version

        `gatehouse <command> --help` explains each command's options.
        """

    /// What parsing a command's arguments came to: run with them, or exit (help shown, or a
    /// usage error printed).
    enum Parsed {
        case run(ParsedArguments)
        case exit(Int32)
    }

    /// Parses `arguments` with `parser`; prints the help or the usage error itself.
    static func parse(_ parser: ArgumentParser, _ arguments: [String]) -> Parsed {
        do {
            let parsed = try parser.parse(arguments)
            if parsed.helpRequested {
                print(parser.helpText())
                return .exit(ExitCode.success)
            }
            return .run(parsed)
        } catch {
            printError("\(error)\nsee '\(parser.command) --help'")
            return .exit(ExitCode.usage)
        }
    }

    static func printError(_ message: String) {
        var line = "error: " + message + "\n"
        line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}
