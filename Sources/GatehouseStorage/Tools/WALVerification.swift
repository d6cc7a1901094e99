/// One thing wrong with a log, as `gatehouse wal verify` prints it.
public struct WALProblem: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// Damage the server cuts off by itself at startup (a torn last write).
        case tornTail = "torn_tail"
        /// Damage the server refuses to start with.
        case corrupt
    }

    public var kind: Kind
    public var file: String
    public var offset: Int
    public var message: String

    public var description: String { "\(kind.rawValue): \(file) at offset \(offset): \(message)" }
}

/// One segment as `verify` saw it.
public struct WALSegmentSummary: Sendable, Equatable {
    public var file: String
    public var firstLSN: LSN
    /// The last LSN of its last valid data frame (nil when it holds none).
    public var lastLSN: LSN?
    public var frames: Int
    public var records: Int
    /// File size, and where its last valid frame ends.
    public var fileBytes: Int
    public var validBytes: Int
    public var sealed: Bool
    public var policy: DurabilityPolicy?
    public var databaseID: DatabaseID?
}

/// What `WALTool.verify` found. Nothing was modified.
public struct WALVerification: Sendable, Equatable {
    /// What the server would do with this log at startup.
    public enum Startup: Sendable, Equatable {
        case starts
        case cutsTornTail(file: String, offset: Int, bytes: Int)
        case refuses(String)
    }

    public var segments: [WALSegmentSummary]
    public var problems: [WALProblem]
    /// Records in valid frames before the first problem.
    public var records: Int
    public var firstLSN: LSN
    /// The last LSN before the first problem (0 when there is none).
    public var lastGoodLSN: LSN
    public var startup: Startup
    /// Leftover temporary files (removed at the next start).
    public var temporaryFiles: [String]

    public var isHealthy: Bool { problems.isEmpty }
}

/// What `WALTool.repair` did.
public struct WALRepairReport: Sendable, Equatable {
    /// Whether anything was changed (false: the log had nothing to repair).
    public var changed: Bool
    /// Where every changed or removed file was copied first (`<dir>/repair-<unix ms>/`).
    public var backupDirectory: String?
    /// The segment cut and the offset it was cut at (zeroed from there).
    public var cutFile: String?
    public var cutOffset: Int?
    /// Segments removed because they came after the cut.
    public var removedFiles: [String]
    /// Bytes of data dropped (zeroed or in removed files).
    public var bytesDropped: Int
    public var lastGoodLSN: LSN
    /// The highest LSN seen in what was dropped, when any frame there was still readable.
    public var lastDroppedLSN: LSN?
    public var problems: [WALProblem]
}
