public import GatehouseBase

/// When an append counts as durable (DESIGN.md, "Durability and recovery").
public enum DurabilityPolicy: String, Sendable, CaseIterable {
    /// Acknowledged after fdatasync; group commit shares one sync among every waiting append.
    case always
    /// Acknowledged after write(2); fdatasync about once a second (and whenever
    /// `unsyncedBytesMax` is passed). A process crash loses nothing acknowledged; power loss
    /// about a second.
    case everysec
    /// Acknowledged after write(2); never synced except at segment rotation. Benchmarks only.
    case none
}

/// The log's settings. Sizes are bytes; the defaults are storage.md C.12's.
public struct WALOptions: Sendable {
    public var policy: DurabilityPolicy
    /// Size of each preallocated segment file.
    public var segmentBytes = 64 << 20
    /// Largest frame body before compression; one append larger than this is `recordTooLarge`.
    /// Capped so that a frame always fits an empty segment.
    public var frameBytesMax = 4 << 20
    /// Raw bytes the flusher packs into one frame (one write, one sync): the torn window under `always`.
    public var syncCycleBytesMax = 4 << 20
    /// `everysec`: time between syncs.
    public var everysecInterval: Duration = .seconds(1)
    /// `everysec`: bytes written but not synced before the flusher syncs early.
    public var unsyncedBytesMax = 16 << 20
    /// Queued, unwritten bytes past which appends throw `busy` (backpressure).
    public var pendingBytesMax = 64 << 20
    /// Free space under which appends throw `readOnly`. Defaults to twice the segment size.
    public var diskReserveBytes: Int {
        get { explicitDiskReserveBytes ?? 2 * segmentBytes }
        set { explicitDiskReserveBytes = newValue }
    }
    private var explicitDiskReserveBytes: Int?
    /// How often free space is checked (and how often a read-only log retries preallocation).
    public var freeSpaceCheckInterval: Duration = .seconds(1)
    /// Cut a torn tail at startup (Redis `aof-load-truncated`). Off: report it and refuse to start.
    public var allowTornTail = true
    /// Zero-fill new segments (slower to prepare, faster to sync into) rather than only `fallocate` them.
    public var zeroFillSegments = true
    /// The database this log must belong to. A new log is created with it; an existing log with
    /// another id is refused. nil: accept the log's own id (a new log gets a random one).
    public var databaseID: DatabaseID?
    /// Salts and new database ids come from here.
    public var random: any RandomSource = SystemRandomSource()

    public init(policy: DurabilityPolicy = .always) {
        self.policy = policy
    }
}
