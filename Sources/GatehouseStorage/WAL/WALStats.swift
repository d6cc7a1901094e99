/// Counters for `server.stats` and monitoring.
public struct WALStats: Sendable, Equatable {
    public var policy: DurabilityPolicy
    public var segments: Int
    /// Size of the segment files (preallocated space included).
    public var bytesOnDisk: Int
    public var framesWritten: Int
    public var recordsWritten: Int
    /// Frame bytes written (compressed), and the raw record bytes they hold.
    public var bytesWritten: Int
    public var rawBytesWritten: Int
    /// fdatasyncs of the segment being written: a frame's (under `always`, on `everysec`'s
    /// schedule, at close) and a segment's seal.
    public var syncs: Int
    public var lastSyncDuration: Duration
    public var maxSyncDuration: Duration
    /// The oldest LSN still on disk (the first LSN of the oldest segment).
    public var firstLSNKept: LSN
    public var lastLSN: LSN
    public var durableLSN: LSN
    /// Last LSN known to be fdatasync'd (equals `durableLSN` under `always`).
    public var syncedLSN: LSN
    public var pendingRecords: Int
    public var pendingBytes: Int
    public var isReadOnly: Bool
    public var isFailed: Bool
}
