import GatehouseAppStore
import GatehouseBase
import GatehouseCore
import GatehouseOutbound
import GatehousePosix
import GatehouseStorage
#if canImport(Glibc)
import Glibc
#endif

/// `gatehouse serve`: parse, configure, run until SIGTERM or SIGINT, drain, exit 0.
enum ServeCommand {
    static let parser = ArgumentParser(
        command: "gatehouse serve",
        summary: "Runs the Gatehouse server in the foreground until SIGTERM or SIGINT.",
        options: [
            .value("data-dir", placeholder: "DIR", help: "where the server keeps its data (default ./gatehouse-data; created with mode 0700)"),
            .value("exports-dir", placeholder: "DIR", help: "the only directory tenant.snapshot writes to and tenant.restore reads from (default <data-dir>/exports; created with mode 0700)"),
            .value("listen", placeholder: "HOST:PORT", help: "address to listen on (default 127.0.0.1:7411; port 0 picks a free one)"),
            .value("http", placeholder: "HOST:PORT", help: "the HTTP listener: store notifications, POST /v1/op, health and metrics (default 127.0.0.1:7412; port 0 picks a free one; off: none)"),
            .value("http-max-body", placeholder: "N", help: "largest HTTP request body taken; more is 413 (default 1048576)"),
            .flag("metrics-public", help: "answer GET /metrics without the admin key (a scrape from a private network)"),
            .value("public-url", placeholder: "URL", help: "the https:// address the world reaches the HTTP listener at, through the TLS proxy"),
            .value("admin-key", placeholder: "KEY", help: "the operator's key (default: $GATEHOUSE_ADMIN_KEY, else <data-dir>/admin.key, generated on first start)"),
            .value("fsync", placeholder: "POLICY", help: "always (default): fsync before answering a write; everysec: about once a second; none: never (benchmarks)"),
            .value("max-line-bytes", placeholder: "N", help: "longest request line accepted (default 1048576)"),
            .value("max-connections", placeholder: "N", help: "connections served at once; more are answered 'overloaded' and closed (default 10000)"),
            .value("idle-timeout", placeholder: "SECONDS", help: "close connections silent this long with nothing in flight; 0 = never (default 300)"),
            .value("hello-timeout", placeholder: "SECONDS", help: "close connections that have not said hello this long after they connected (default 10)"),
            .value("max-buffered-bytes", placeholder: "N", help: "bytes buffered for all connections together; past it the connections holding the most unauthenticated input are closed first (default 268435456)"),
            .value("io-threads", placeholder: "N", help: "event-loop threads serving connections (default 1)"),
            .value("feed-max-events", placeholder: "N", help: "events a project's feed keeps at most, the newest (default 10000000; the feed also forgets events older than 7 days)"),
            .value("history-per-currency", placeholder: "N", help: "history entries a profile keeps per currency, the newest (default 1000)"),
            .value("idempotency-hours", placeholder: "HOURS", help: "how long a currency.transact idempotency key is remembered (default 24)"),
            .flag("test-clock", help: "freeze the server clock at start-up; clock.advance moves it (tests and demos only)"),
            .value("log-level", placeholder: "LEVEL", help: "trace, debug, info (default), notice, warning, error, critical"),
            .value("log-format", placeholder: "FORMAT", help: "text (default) or json, one line per event on stderr"),
            .value("app-store-root", placeholder: "FILE", help: "trust this root certificate (DER, or PEM with one or more certificates) for App Store signed data instead of the built-in Apple Root CA - G3 (sandboxes and tests)", repeatable: true),
            .value("stripe-api-url", placeholder: "URL", help: "make purchase links' Checkout Sessions here instead of https://api.stripe.com (a test double)"),
            .value("app-store-api-url", placeholder: "URL", help: "send App Store Server API requests here instead of Apple's production and sandbox hosts (a proxy or a test double)"),
            .flag("outbound-allow-private", help: "let webhooks and pushes go to http:// and to loopback, private and link-local addresses (tests, private networks)"),
            .value("outbound-timeout", placeholder: "MS", help: "how long one webhook or push attempt may take before it counts as failed (default 30000)"),
            .value("smtp", placeholder: "URL", help: "send redemption links' emails through this server: smtp://host[:587] (STARTTLS required) or smtps://host[:465]; needs --smtp-from and --public-url (default: none, and owed emails wait)"),
            .value("smtp-from", placeholder: "ADDRESS", help: "the address the emails come from, and the envelope sender"),
            .value("smtp-credentials", placeholder: "FILE", help: "log in to the SMTP server with the user name on this file's first line and the password on its second"),
            .flag("smtp-insecure", help: "let smtp:// go on in plain text when the server offers no STARTTLS (a mail server on loopback or a private network only)"),
        ]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        let configuration: ServerConfiguration
        let parsed: ParsedArguments
        switch GatehouseCommand.parse(parser, arguments) {
        case .run(let arguments): parsed = arguments
        case .exit(let code): return code
        }
        do {
            configuration = try makeConfiguration(parsed, environment: currentEnvironment())
        } catch {
            GatehouseCommand.printError("\(error)\nsee 'gatehouse serve --help'")
            return GatehouseCommand.ExitCode.usage
        }
        let handler = StreamLogHandler(format: configuration.logFormat)
        let logger = Logger(label: "gatehouse", handler: handler, logLevel: configuration.logLevel)
        let server: Server
        do {
            server = try Server(configuration: configuration, logger: logger)
        } catch {
            logger.critical("server.start_failed", metadata: ["reason": "\(error)"])
            GatehouseCommand.printError("\(error)")
            return GatehouseCommand.ExitCode.unavailable
        }
        announce(server)
        let watcher = ProcessSignals.onTermination { signal in
            logger.info("server.signal", metadata: ["signal": "\(signal == SIGTERM ? "SIGTERM" : "SIGINT")"])
            Task { await server.shutdown() }
        }
        await server.waitUntilStopped()
        withExtendedLifetime(watcher) {}
        return GatehouseCommand.ExitCode.success
    }

    /// What a newcomer needs to see on start: where to connect, and where the admin key is.
    private static func announce(_ server: Server) {
        var lines = ["gatehouse \(GatehouseVersion.current) listening on \(server.address) (fsync \(server.configuration.fsync.rawValue))"]
        if let http = server.httpAddress { lines.append("http on \(http)") }
        switch server.adminKeySource {
        case .given:
            lines.append("admin key: as given")
        case .file(let path, let generated):
            lines.append(generated ? "admin key generated: \(path)" : "admin key: \(path)")
        }
        print(lines.joined(separator: "\n"))
        fflush(nil)
    }

    /// Turns parsed arguments (and the environment, for the admin key) into a configuration.
    static func makeConfiguration(_ parsed: ParsedArguments, environment: [String: String]) throws(UsageError)
        -> ServerConfiguration
    {
        var configuration = ServerConfiguration()
        if let dataDirectory = parsed.value("data-dir") {
            guard !dataDirectory.isEmpty else { throw UsageError("--data-dir must not be empty") }
            configuration.dataDirectory = dataDirectory
        }
        if let exportsDirectory = parsed.value("exports-dir") {
            guard !exportsDirectory.isEmpty else { throw UsageError("--exports-dir must not be empty") }
            configuration.exportsDirectory = exportsDirectory
        }
        if let listen = parsed.value("listen") {
            guard let address = HostPort(parsing: listen) else { throw UsageError("--listen must be HOST:PORT, got '\(listen)'") }
            configuration.listen = address
        }
        try applyHTTP(parsed, to: &configuration)
        configuration.adminKey = parsed.value("admin-key") ?? environment["GATEHOUSE_ADMIN_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        if let key = configuration.adminKey, key.count < 16 {
            throw UsageError("the admin key must be at least 16 characters")
        }
        if let fsync = parsed.value("fsync") {
            guard let policy = DurabilityPolicy(rawValue: fsync) else { throw UsageError("--fsync must be always, everysec or none") }
            configuration.fsync = policy
        }
        configuration.lineBytesMax = try integer(parsed, "max-line-bytes", 64...(256 << 20)) ?? configuration.lineBytesMax
        configuration.connectionsMax = try integer(parsed, "max-connections", 1...1_000_000) ?? configuration.connectionsMax
        configuration.ioThreads = try integer(parsed, "io-threads", 1...64) ?? configuration.ioThreads
        configuration.retention.feedEventsMax = try integer(parsed, "feed-max-events", 1...1_000_000_000)
            ?? configuration.retention.feedEventsMax
        configuration.retention.historyEntriesPerCurrency = try integer(parsed, "history-per-currency", 1...1_000_000)
            ?? configuration.retention.historyEntriesPerCurrency
        if let hours = try integer(parsed, "idempotency-hours", 1...8_760) {
            configuration.retention.idempotencyMs = Int64(hours) * Retention.hourMs
        }
        if let seconds = try integer(parsed, "hello-timeout", 1...3_600) { configuration.helloTimeout = .seconds(seconds) }
        configuration.bufferedBytesMax = try integer(parsed, "max-buffered-bytes", (1 << 20)...(1 << 40)) ?? configuration.bufferedBytesMax
        if let seconds = try integer(parsed, "idle-timeout", 0...31_536_000) {
            configuration.idleTimeout = seconds == 0 ? nil : .seconds(seconds)
        }
        configuration.testClock = parsed.flag("test-clock")
        if let level = parsed.value("log-level") {
            guard let parsedLevel = Logger.Level(rawValue: level) else { throw UsageError("--log-level: unknown level '\(level)'") }
            configuration.logLevel = parsedLevel
        }
        if let format = parsed.value("log-format") {
            guard let parsedFormat = LogFormat(rawValue: format) else { throw UsageError("--log-format must be text or json") }
            configuration.logFormat = parsedFormat
        }
        try applyAppStore(parsed, to: &configuration)
        configuration.outboundAllowPrivate = parsed.flag("outbound-allow-private")
        if let milliseconds = try integer(parsed, "outbound-timeout", 100...300_000) {
            configuration.outboundTimeout = .milliseconds(milliseconds)
        }
        try applySMTP(parsed, to: &configuration)
        return configuration
    }

    /// `--smtp`, `--smtp-from`, `--smtp-credentials`, `--smtp-insecure`: checked now (the
    /// credentials file is read), so a mail server the server could never use stops the start,
    /// not the first email.
    private static func applySMTP(_ parsed: ParsedArguments, to configuration: inout ServerConfiguration) throws(UsageError) {
        guard let url = parsed.value("smtp") else {
            for option in ["smtp-from", "smtp-credentials"] where parsed.value(option) != nil {
                throw UsageError("--\(option) needs --smtp")
            }
            if parsed.flag("smtp-insecure") { throw UsageError("--smtp-insecure needs --smtp") }
            return
        }
        guard let from = parsed.value("smtp-from") else {
            throw UsageError("--smtp needs --smtp-from, the address the emails come from")
        }
        guard configuration.publicURL != nil else {
            throw UsageError("--smtp needs --public-url: the email's link is <public url>/pay/r/<token>")
        }
        do throws(SMTPSettingsError) {
            configuration.smtp = try SMTPSettings(url: url, from: from, credentialsFile: parsed.value("smtp-credentials"),
                                                  insecure: parsed.flag("smtp-insecure"))
        } catch {
            let option =
                switch error.code {
                case .from: "--smtp-from"
                case .credentialsUnreadable, .credentialsMalformed: "--smtp-credentials"
                case .scheme, .host, .port, .url: "--smtp"
                }
            throw UsageError("\(option): \(error.message)")
        }
    }

    /// `--app-store-root`, `--app-store-api-url`, `--stripe-api-url`: where the stores are.
    private static func applyAppStore(_ parsed: ParsedArguments, to configuration: inout ServerConfiguration)
        throws(UsageError)
    {
        let rootFiles = parsed.values("app-store-root")
        if !rootFiles.isEmpty { configuration.appStoreRootCertificates = try appStoreRoots(rootFiles) }
        if let url = parsed.value("stripe-api-url") {
            guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
                throw UsageError("--stripe-api-url must be an http:// or https:// address, got '\(url)'")
            }
            configuration.stripeAPIURL = url.hasSuffix("/") ? String(url.dropLast()) : url
        }
        if let url = parsed.value("app-store-api-url") {
            guard isHTTPAddress(url) else {
                throw UsageError("--app-store-api-url must be an http:// or https:// address, got '\(url)'")
            }
            configuration.appStoreAPIBaseURL = url
        }
    }

    /// `http://` or `https://` and something after it.
    private static func isHTTPAddress(_ url: String) -> Bool {
        (url.hasPrefix("https://") && url.count > "https://".count) || (url.hasPrefix("http://") && url.count > "http://".count)
    }

    /// `--http`, `--http-max-body`, `--metrics-public`, `--public-url`.
    private static func applyHTTP(_ parsed: ParsedArguments, to configuration: inout ServerConfiguration) throws(UsageError) {
        if let http = parsed.value("http") {
            if http == "off" {
                configuration.http = nil
            } else {
                guard let address = HostPort(parsing: http) else { throw UsageError("--http must be HOST:PORT or off, got '\(http)'") }
                configuration.http = address
            }
        }
        configuration.httpBodyBytesMax = try integer(parsed, "http-max-body", 1...(256 << 20)) ?? configuration.httpBodyBytesMax
        configuration.metricsPublic = parsed.flag("metrics-public")
        if let url = parsed.value("public-url") {
            guard isHTTPAddress(url) else {
                throw UsageError("--public-url must be an http:// or https:// address, got '\(url)'")
            }
            configuration.publicURL = url
        }
    }

    /// The certificates of every `--app-store-root` file, in order.
    private static func appStoreRoots(_ paths: [String]) throws(UsageError) -> [[UInt8]] {
        var roots: [[UInt8]] = []
        for path in paths {
            let bytes: [UInt8]
            do {
                bytes = try NativeFileSystem().readFile(path)
            } catch {
                throw UsageError("--app-store-root: cannot read '\(path)': \(error)")
            }
            do {
                roots.append(contentsOf: try AppStoreVerifier.certificates(fromFileBytes: bytes))
            } catch {
                throw UsageError("--app-store-root: '\(path)' holds no usable certificate: \(error)")
            }
        }
        return roots
    }

    private static func integer(_ parsed: ParsedArguments, _ name: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = parsed.value(name) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError("--\(name) must be a whole number in \(range.lowerBound)…\(range.upperBound), got '\(text)'")
        }
        return value
    }
}

/// A command line that parses but makes no sense.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The process environment as a dictionary.
func currentEnvironment() -> [String: String] {
    var result: [String: String] = [:]
    var pointer = environ
    while let entry = pointer.pointee {
        let text = String(cString: entry)
        if let equals = text.firstIndex(of: "=") {
            result[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        pointer += 1
    }
    return result
}
