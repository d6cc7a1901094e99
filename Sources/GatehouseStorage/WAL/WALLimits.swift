/// The options after validation, with the derived sizes the writer and recovery use.
struct WALLimits: Sendable {
    var segmentBytes: Int
    /// `frameBytesMax`, capped so that one frame plus a seal always fits an empty segment.
    var frameBytesMax: Int
    var syncCycleBytesMax: Int
    /// Written into each new segment's header (see ``SegmentHeader/tornWindowBytes``).
    var tornWindowBytes: UInt64

    init(_ options: WALOptions) throws(StorageError) {
        let smallest = WALFormat.firstFrameOffset + 2 * WALFormat.frameHeaderBytes + WALFormat.sealFrameBytes + 1024
        guard options.segmentBytes >= smallest, options.segmentBytes <= 1 << 40 else {
            throw StorageError(.invalidArgument, "segmentBytes must be between \(smallest) and 2^40, not \(options.segmentBytes)")
        }
        guard options.frameBytesMax >= 64, options.frameBytesMax <= WALFormat.rawFrameBytesLimit else {
            throw StorageError(.invalidArgument, "frameBytesMax must be between 64 and \(WALFormat.rawFrameBytesLimit), not \(options.frameBytesMax)")
        }
        guard options.syncCycleBytesMax >= 1, options.pendingBytesMax >= 1, options.unsyncedBytesMax >= 1, options.diskReserveBytes >= 0 else {
            throw StorageError(.invalidArgument, "syncCycleBytesMax, pendingBytesMax and unsyncedBytesMax must be positive, diskReserveBytes not negative")
        }
        segmentBytes = options.segmentBytes
        let room = options.segmentBytes - WALFormat.firstFrameOffset - WALFormat.frameHeaderBytes - WALFormat.sealFrameBytes - WALFormat.alignment
        frameBytesMax = min(options.frameBytesMax, room)
        syncCycleBytesMax = min(options.syncCycleBytesMax, frameBytesMax)
        let oneFrame = WALFormat.frameHeaderBytes + WALFormat.aligned(frameBytesMax)
        switch options.policy {
        case .always: tornWindowBytes = UInt64(oneFrame)
        case .everysec: tornWindowBytes = UInt64(options.unsyncedBytesMax + oneFrame)
        case .none: tornWindowBytes = 0
        }
    }
}
