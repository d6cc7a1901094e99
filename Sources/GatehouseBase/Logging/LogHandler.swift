/// Where log records go. Handlers are shared across threads and tasks, so `log` must be safe
/// to call concurrently and should not block for long: it runs on the caller's thread.
public protocol LogHandler: Sendable {
    func log(_ record: LogRecord)
}

/// One emitted log line before formatting.
public struct LogRecord: Sendable, Hashable {
    /// Wall-clock time since the Unix epoch (1970-01-01T00:00:00Z).
    public var timestamp: Duration
    public var level: Logger.Level
    public var label: String
    /// A static dotted event name such as `server.listening`.
    public var event: String
    /// The logger's context merged with the call-site metadata.
    public var metadata: Logger.Metadata

    public init(
        timestamp: Duration,
        level: Logger.Level,
        label: String,
        event: String,
        metadata: Logger.Metadata = [:]
    ) {
        self.timestamp = timestamp
        self.level = level
        self.label = label
        self.event = event
        self.metadata = metadata
    }
}

/// Drops every record; backs ``Logger/disabled``.
public struct DiscardingLogHandler: LogHandler {
    public init() {}

    public func log(_ record: LogRecord) {}
}
