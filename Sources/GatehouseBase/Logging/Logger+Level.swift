extension Logger {
    /// The seven swift-log levels, ordered from most to least verbose.
    ///
    /// `info` and above are for lifecycle events and anomalies only; `debug` must be safe to
    /// turn on in production; `trace` may be expensive.
    public enum Level: String, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
        case trace
        case debug
        case info
        case notice
        case warning
        case error
        case critical

        public var description: String { rawValue }

        public static func < (lhs: Level, rhs: Level) -> Bool {
            lhs.severity < rhs.severity
        }

        // Declaration order is the severity order; spelled out so reordering cases cannot
        // silently change which records are dropped.
        private var severity: Int {
            switch self {
            case .trace: 0
            case .debug: 1
            case .info: 2
            case .notice: 3
            case .warning: 4
            case .error: 5
            case .critical: 6
            }
        }
    }
}
