/// One live snapshot the manifest points at.
public struct ManifestEntry: Sendable, Equatable {
    public var streamID: UInt64
    /// The snapshot's file name, relative to the directory the runtime keeps snapshots in.
    public var file: String
    /// The LSN the snapshot covers.
    public var lsn: LSN

    public init(streamID: UInt64, file: String, lsn: LSN) {
        self.streamID = streamID
        self.file = file
        self.lsn = lsn
    }
}

/// The checkpoint (storage.md C.7): where replay starts and which snapshot each stream loads.
/// Published atomically by ``ManifestFile/write(_:directory:fileSystem:)`` before the log
/// segments it makes unnecessary are removed.
public struct Manifest: Sendable, Equatable {
    /// The database the log belongs to; recovery refuses a log with another id.
    public var databaseID: DatabaseID?
    /// Replay starts here (every record below it is covered by the snapshots).
    public var replayFromLSN: LSN
    public var snapshots: [ManifestEntry]
    /// Runtime-defined bytes (policy, limits, retained older snapshots, ...).
    public var runtimeMetadata: [UInt8]

    public init(databaseID: DatabaseID? = nil, replayFromLSN: LSN, snapshots: [ManifestEntry] = [], runtimeMetadata: [UInt8] = []) {
        self.databaseID = databaseID
        self.replayFromLSN = replayFromLSN
        self.snapshots = snapshots
        self.runtimeMetadata = runtimeMetadata
    }
}
