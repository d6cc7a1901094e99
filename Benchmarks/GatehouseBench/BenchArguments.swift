import GatehousePosix
import GatehouseServer
import GatehouseStorage
#if canImport(Glibc)
import Glibc
#endif

/// What the command line asked for, checked: anything wrong here is a usage error (exit 2).
enum BenchMode {
    case help(String)
    case durability(DurabilityOptions)
    case load(LoadOptions)
    case micro(iterations: Int)
    case memory(profiles: Int, notifications: Int, merges: Int, grants: Int)
    case watch(WatchOptions)
    case restart(RestartBench.Options)
    case retention(RetentionBench.Options)
    case outbox(owed: Int)
    case smoke
}

struct LoadOptions: Sendable {
    enum ServerChoice: Sendable {
        case inProcess(InProcessServer.Settings)
        /// `http`: its HTTP listener (`--http-connect`), which the `http.` ops need.
        case running(HostPort, http: HostPort?, adminKey: String)
    }

    let server: ServerChoice
    let plan: LoadPlan
    /// Create the project, print its keys and lineload arguments, and stop (keeps the project).
    let setupOnly: Bool
    let json: Bool
}

enum BenchArguments {
    static func parse(_ arguments: [String]) throws(BenchFailure) -> BenchMode {
        if arguments.first == "micro" {
            return try parseMicro(Array(arguments.dropFirst()))
        }
        if arguments.first == "durability" {
            return try parseDurability(Array(arguments.dropFirst()))
        }
        if arguments.first == "memory" {
            let parsed = try parse(Array(arguments.dropFirst()), with: memoryParser)
            if parsed.helpRequested { return .help(memoryParser.helpText()) }
            return .memory(profiles: try integer(parsed, "profiles", default: 1_000_000, in: 1...100_000_000),
                           notifications: try integer(parsed, "notifications", default: 0, in: 0...100_000_000),
                           merges: try integer(parsed, "merges", default: 0, in: 0...100_000_000),
                           grants: try integer(parsed, "grants", default: 0, in: 0...100_000_000))
        }
        if arguments.first == "outbox" {
            let parsed = try parse(Array(arguments.dropFirst()), with: outboxParser)
            if parsed.helpRequested { return .help(outboxParser.helpText()) }
            return .outbox(owed: try integer(parsed, "owed", default: 1_000_000, in: 1...100_000_000))
        }
        if arguments.first == "restart" {
            return try parseRestart(Array(arguments.dropFirst()))
        }
        if arguments.first == "retention" {
            let parsed = try parse(Array(arguments.dropFirst()), with: retentionParser)
            if parsed.helpRequested { return .help(retentionParser.helpText()) }
            var options = RetentionBench.Options()
            options.writesPerWindow = try integer(parsed, "writes", default: options.writesPerWindow, in: 1_000...100_000_000)
            options.profiles = try integer(parsed, "profiles", default: options.profiles, in: 1...1_000_000)
            return .retention(options)
        }
        if arguments.first == "watch" {
            let parsed = try parse(Array(arguments.dropFirst()), with: watchParser)
            if parsed.helpRequested { return .help(watchParser.helpText()) }
            return .watch(try watchOptions(parsed))
        }
        let parsed = try parse(arguments, with: loadParser)
        if parsed.helpRequested { return .help(loadParser.helpText()) }
        if parsed.flag("smoke") {
            guard arguments.count == 1 else { throw .usage("--smoke takes no other options") }
            return .smoke
        }
        return .load(try loadOptions(parsed))
    }

    private static func parseMicro(_ arguments: [String]) throws(BenchFailure) -> BenchMode {
        let parsed = try parse(arguments, with: microParser)
        if parsed.helpRequested { return .help(microParser.helpText()) }
        return .micro(iterations: try integer(parsed, "iterations", default: 200_000, in: 1...1_000_000_000))
    }

    private static func parseRestart(_ arguments: [String]) throws(BenchFailure) -> BenchMode {
        let parsed = try parse(arguments, with: restartParser)
        if parsed.helpRequested { return .help(restartParser.helpText()) }
        var options = RestartBench.Options()
        options.profiles = try integer(parsed, "profiles", default: options.profiles, in: 1...100_000_000)
        options.records = try integer(parsed, "records", default: options.records, in: 1...1_000_000_000)
        options.writers = try integer(parsed, "writers", default: options.writers, in: 1...1_024)
        if let text = parsed.value("fsync") {
            guard let policy = DurabilityPolicy(rawValue: text) else {
                throw .usage("--fsync must be one of \(DurabilityPolicy.allCases.map(\.rawValue).joined(separator: ", ")), got '\(text)'")
            }
            options.fsync = policy
        }
        options.parentDirectory = parsed.value("data-dir")
        return .restart(options)
    }

    private static func watchOptions(_ parsed: ParsedArguments) throws(BenchFailure) -> WatchOptions {
        var server = WatchOptions.Server.child(InProcessServer.Settings())
        if let connect = parsed.value("connect") {
            for name in ["fsync", "io-threads", "data-dir"] where parsed.value(name) != nil {
                throw .usage("--\(name) applies to the bench's own server only; set it on the server you --connect to")
            }
            guard let address = HostPort(parsing: connect) else { throw .usage("--connect must be HOST:PORT, got '\(connect)'") }
            guard let key = parsed.value("key") ?? environment("GATEHOUSE_ADMIN_KEY") else {
                throw .usage("--connect needs the server's admin key: --key KEY or $GATEHOUSE_ADMIN_KEY")
            }
            server = .running(address, adminKey: key)
        } else {
            if parsed.value("key") != nil { throw .usage("--key needs --connect (the bench's own server makes its own keys)") }
            var settings = InProcessServer.Settings()
            if let fsync = parsed.value("fsync") {
                guard DurabilityPolicy(rawValue: fsync) != nil else {
                    throw .usage("--fsync must be one of \(DurabilityPolicy.allCases.map(\.rawValue).joined(separator: ", ")), got '\(fsync)'")
                }
                settings.fsync = fsync
            }
            if parsed.value("io-threads") != nil { settings.ioThreads = try integer(parsed, "io-threads", default: 1, in: 1...64) }
            settings.parentDirectory = parsed.value("data-dir")
            server = .child(settings)
        }
        return WatchOptions(
            server: server,
            connections: try integer(parsed, "connections", default: 10_000, in: 1...100_000),
            changes: try integer(parsed, "changes", default: 2_000, in: 1...10_000_000),
            inFlight: try integer(parsed, "in-flight", default: 1, in: 1...1_024),
            serveChild: parsed.flag("serve-child")
        )
    }

    private static func parseDurability(_ arguments: [String]) throws(BenchFailure) -> BenchMode {
        let parsed = try parse(arguments, with: durabilityParser)
        if parsed.helpRequested { return .help(durabilityParser.helpText()) }
        var options = DurabilityOptions()
        if let text = parsed.value("parts") {
            options.parts = try list(text, "parts") { DurabilityPart(rawValue: $0) }
        }
        if let text = parsed.value("policies") {
            options.policies = try list(text, "policies") { DurabilityPolicy(rawValue: $0) }
        }
        if let text = parsed.value("clients") {
            options.clients = try list(text, "clients") { Int($0).flatMap { (1...10_000).contains($0) ? $0 : nil } }
        }
        options.warmup = try seconds(parsed, "warmup", default: options.warmup.inSeconds, allowZero: true)
        options.duration = try seconds(parsed, "duration", default: options.duration.inSeconds, allowZero: false)
        options.replayRecords = try integer(parsed, "records", default: options.replayRecords, in: 1...1_000_000_000)
        options.snapshotMiB = try integer(parsed, "snapshot-mib", default: options.snapshotMiB, in: 1...16_384)
        options.parentDirectory = parsed.value("data-dir")
        if parsed.value("io-threads") != nil {
            options.ioThreads = try integer(parsed, "io-threads", default: 1, in: 1...64)
        }
        return .durability(options)
    }

    /// A comma-separated list whose every item `item` accepts.
    private static func list<T>(_ text: String, _ name: String, _ item: (String) -> T?) throws(BenchFailure) -> [T] {
        var values: [T] = []
        for piece in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let value = item(String(piece)) else {
                throw .usage("--\(name): '\(piece)' is not a valid item (see --help)")
            }
            values.append(value)
        }
        guard !values.isEmpty else { throw .usage("--\(name) needs at least one item") }
        return values
    }

    private static func loadOptions(_ parsed: ParsedArguments) throws(BenchFailure) -> LoadOptions {
        let opName = parsed.value("op") ?? "ping"
        guard let op = BenchOp.named(opName) else {
            throw .usage("unknown op '\(opName)'; one of: \(BenchOp.all.map(\.name).joined(separator: ", "))")
        }
        let plan = LoadPlan(
            op: op,
            // The server's default connection limit.
            connections: try integer(parsed, "connections", default: 50, in: 1...10_000),
            // lineload's limit, and the server's default in-flight limit per connection.
            pipeline: try integer(parsed, "pipeline", default: 1, in: 1...1_024),
            warmup: try seconds(parsed, "warmup", default: 1, allowZero: true),
            duration: try seconds(parsed, "duration", default: 5, allowZero: false),
            threads: try integer(parsed, "threads", default: 1, in: 1...64)
        )
        return LoadOptions(
            server: try serverChoice(parsed, op: op), plan: plan,
            setupOnly: parsed.flag("setup-only"), json: parsed.flag("json")
        )
    }

    private static func serverChoice(_ parsed: ParsedArguments, op: BenchOp) throws(BenchFailure) -> LoadOptions.ServerChoice {
        guard let connect = parsed.value("connect") else {
            if parsed.value("key") != nil {
                throw .usage("--key needs --connect (the in-process server makes its own keys)")
            }
            if parsed.value("http-connect") != nil {
                throw .usage("--http-connect needs --connect (the in-process server's HTTP listener is its own)")
            }
            if parsed.flag("setup-only") {
                throw .usage("--setup-only needs --connect (an in-process server ends with the process)")
            }
            var settings = InProcessServer.Settings()
            if let fsync = parsed.value("fsync") { settings.fsync = fsync }
            if parsed.value("io-threads") != nil {
                settings.ioThreads = try integer(parsed, "io-threads", default: 1, in: 1...64)
            }
            settings.parentDirectory = parsed.value("data-dir")
            return .inProcess(settings)
        }
        for name in ["fsync", "io-threads", "data-dir"] where parsed.value(name) != nil {
            throw .usage("--\(name) applies to the in-process server only; set it on the server you --connect to")
        }
        guard let address = HostPort(parsing: connect) else {
            throw .usage("--connect must be HOST:PORT, got '\(connect)'")
        }
        guard let key = parsed.value("key") ?? environment("GATEHOUSE_ADMIN_KEY") else {
            throw .usage("--connect needs the server's admin key: --key KEY or $GATEHOUSE_ADMIN_KEY")
        }
        return .running(address, http: try httpAddress(parsed, op: op), adminKey: key)
    }

    /// `--http-connect`, which an HTTP op needs with `--connect`: the line listener's address
    /// does not tell where the server's `--http` listens.
    private static func httpAddress(_ parsed: ParsedArguments, op: BenchOp) throws(BenchFailure) -> HostPort? {
        guard let text = parsed.value("http-connect") else {
            if op.transport.isHTTP {
                throw .usage("--op \(op.name) with --connect needs --http-connect HOST:PORT (the server's --http address)")
            }
            return nil
        }
        guard let address = HostPort(parsing: text) else {
            throw .usage("--http-connect must be HOST:PORT, got '\(text)'")
        }
        return address
    }

    // MARK: Values

    private static func parse(_ arguments: [String], with parser: ArgumentParser) throws(BenchFailure) -> ParsedArguments {
        do {
            return try parser.parse(arguments)
        } catch {
            throw .usage("\(error)\n\(error.hint)")
        }
    }

    private static func integer(_ parsed: ParsedArguments, _ name: String, default value: Int, in range: ClosedRange<Int>)
        throws(BenchFailure) -> Int
    {
        guard let text = parsed.value(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw .usage("--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
        }
        return number
    }

    private static func seconds(_ parsed: ParsedArguments, _ name: String, default value: Double, allowZero: Bool)
        throws(BenchFailure) -> Duration
    {
        let text = parsed.value(name)
        let number = text.map { Double($0) } ?? value
        guard let number, number.isFinite, allowZero ? number >= 0 : number > 0, number <= 86_400 else {
            throw .usage("--\(name) must be a number of seconds\(allowZero ? "" : " above 0") up to 86400, got '\(text ?? "")'")
        }
        return .nanoseconds(Int64((number * 1e9).rounded()))
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }
}
