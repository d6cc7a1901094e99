import Synchronization

/// Keeps every record in memory so tests can assert on what was logged, and on what was not
/// (no record at `info` or above carries a token or a request body).
///
/// Copies share one store: hand a copy to a ``Logger`` and keep the original to inspect.
public struct CapturingLogHandler: LogHandler {
    private final class Store: Sendable {
        let records = Mutex<[LogRecord]>([])
    }

    private let store = Store()

    public init() {}

    public func log(_ record: LogRecord) {
        store.records.withLock { $0.append(record) }
    }

    /// Every record so far, oldest first.
    public var records: [LogRecord] {
        store.records.withLock { $0 }
    }

    /// The event names logged so far, oldest first; the usual thing a test compares.
    public var events: [String] {
        records.map(\.event)
    }

    /// Records with the given event name, oldest first.
    public func records(event: String) -> [LogRecord] {
        records.filter { $0.event == event }
    }

    public func removeAll() {
        store.records.withLock { $0.removeAll() }
    }

    /// A logger that writes into this handler, at `trace` unless told otherwise so tests see
    /// everything the code under test emits.
    public func logger(label: String = "test", logLevel: Logger.Level = .trace) -> Logger {
        Logger(label: label, handler: self, logLevel: logLevel)
    }
}
