/// What a snapshot file says about itself. The storage layer fills in nothing but the format:
/// the runtime decides what `streamID` and `metadata` mean.
public struct SnapshotHeader: Sendable, Equatable {
    /// The runtime's stream (a project incarnation).
    public var streamID: UInt64
    /// The log position the snapshot covers: replay continues after it.
    public var lsn: LSN
    /// Creation time, Unix milliseconds.
    public var createdMs: Int64
    /// Small, runtime-defined bytes (at most ``SnapshotFile/metadataBytesMax``).
    public var metadata: [UInt8]

    public init(streamID: UInt64, lsn: LSN, createdMs: Int64, metadata: [UInt8] = []) {
        self.streamID = streamID
        self.lsn = lsn
        self.createdMs = createdMs
        self.metadata = metadata
    }
}

/// What ``SnapshotFile/write(path:header:body:fileSystem:)`` wrote.
public struct SnapshotWriteResult: Sendable, Equatable {
    public var path: String
    /// Size of the file.
    public var bytes: Int
    /// Size of the body it holds, before compression.
    public var bodyBytes: Int
    /// SHA-256 of the whole file as 64 lowercase hex digits, for the manifest, exports and operators.
    public var sha256: String
}
