/// What ``WriteAheadLog/open(directory:fileSystem:options:replayFrom:logger:onFatal:replay:)`` found and did.
public struct RecoveryReport: Sendable, Equatable {
    /// A torn tail that was cut off at startup.
    public struct TornTail: Sendable, Equatable {
        /// The segment file (full path).
        public var file: String
        /// Where the first bad frame started.
        public var offset: Int
        /// Bytes dropped (from `offset` to the end of the data).
        public var bytes: Int
        /// The copy of the dropped bytes, `<segment>.broken-<unix ms>`.
        public var keptAside: String
        /// The first LSN that was not recovered.
        public var firstDroppedLSN: LSN
        /// The last LSN seen in the dropped bytes, when a frame header there was still readable.
        public var lastDroppedLSN: LSN?
        /// Why the frame at `offset` was bad.
        public var reason: String
    }

    /// Segment files in the log after recovery (before the writer adds its own).
    public var segments: Int
    /// Segments read and checked (those holding LSNs at or after `replayFrom`).
    public var segmentsScanned: Int
    /// Records handed to the replay callback.
    public var recordsReplayed: Int
    /// The first and last LSN still in the log; 0 when it holds none.
    public var firstLSN: LSN
    public var lastLSN: LSN
    public var tornTail: TornTail?
    /// Set when the log ended before `replayFrom` (the unsynced tail of an `everysec` or `none`
    /// log lost in a power failure while the snapshots already covered it): numbering continues
    /// at `replayFrom`, and these LSNs are skipped.
    public var skippedLSNs: ClosedRange<LSN>?
    public var databaseID: DatabaseID
    /// The directory held no log: a new one was created.
    public var created: Bool
}
