/// A log sequence number: one per record, starting at 1, strictly consecutive. 0 means "none".
public typealias LSN = UInt64

/// One record of the write-ahead log: bytes with a kind. The storage layer never looks inside
/// the payload; the runtime decides what kinds mean.
public struct LogRecord: Sendable, Equatable {
    public var kind: UInt16
    public var payload: [UInt8]

    public init(kind: UInt16, payload: [UInt8]) {
        self.kind = kind
        self.payload = payload
    }

    /// Bytes this record takes inside a frame body: `u32 length | u16 kind | payload`.
    public var encodedByteCount: Int { LogRecord.headerBytes + payload.count }

    static let headerBytes = 6
}

/// The same type under a name that cannot clash with GatehouseBase's `LogRecord` (a log line):
/// a module importing both can write `WALRecord` instead of `GatehouseStorage.LogRecord`.
public typealias WALRecord = LogRecord
