/// A structured logger shaped like swift-log's, without the dependency.
///
/// A `Logger` is a cheap value: copy it, add context with ``subscript(metadataKey:)``, and
/// pass it down explicitly (there is no global bootstrap). Messages are static dotted event
/// names (`server.listening`, `wal.segment.sealed`); everything that varies goes in metadata,
/// so log lines stay greppable and parseable. Never put keys, tokens or request bodies in
/// either.
public struct Logger: Sendable {
    public let label: String
    /// Records below this level are dropped before their message or metadata is built.
    public var logLevel: Level
    /// Context attached to every record this logger emits (`conn`, `project`, ...).
    public var metadata: Metadata
    public let handler: any LogHandler

    public init(label: String, handler: any LogHandler, logLevel: Level = .info, metadata: Metadata = [:]) {
        self.label = label
        self.handler = handler
        self.logLevel = logLevel
        self.metadata = metadata
    }

    /// Reads or sets one key of this logger's context metadata.
    public subscript(metadataKey key: String) -> MetadataValue? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Whether a record at `level` would reach the handler; use it to guard work that the
    /// autoclosures cannot defer, such as measuring something only to log it.
    public func isEnabled(_ level: Level) -> Bool {
        level >= logLevel
    }

    /// Emits one record if `level` is enabled. Call-site metadata wins over the logger's own
    /// on a key clash, because it is the more specific of the two.
    public func log(
        level: Level,
        _ event: @autoclosure () -> String,
        metadata extra: @autoclosure () -> Metadata = [:]
    ) {
        guard isEnabled(level) else { return }
        let callMetadata = extra()
        let merged = callMetadata.isEmpty ? metadata : metadata.merging(callMetadata) { _, call in call }
        handler.log(
            LogRecord(timestamp: WallClock.now(), level: level, label: label, event: event(), metadata: merged)
        )
    }

    /// A logger that drops everything, for code paths and tests that need one but not its output.
    public static var disabled: Logger {
        Logger(label: "disabled", handler: DiscardingLogHandler(), logLevel: .critical)
    }
}

// One method per level, as in swift-log, so call sites read `logger.info("server.listening")`.
extension Logger {
    public func trace(_ event: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(level: .trace, event(), metadata: metadata())
    }

    public func debug(_ event: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(level: .debug, event(), metadata: metadata())
    }

    public func info(_ event: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(level: .info, event(), metadata: metadata())
    }

    public func notice(_ event: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(level: .notice, event(), metadata: metadata())
    }

    public func warning(_ event: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(level: .warning, event(), metadata: metadata())
    }

    public func error(_ event: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(level: .error, event(), metadata: metadata())
    }

    public func critical(_ event: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(level: .critical, event(), metadata: metadata())
    }
}
