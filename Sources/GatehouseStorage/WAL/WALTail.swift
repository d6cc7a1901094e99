import GatehouseBase

/// Where the writer continues after recovery. Every run of the server writes into a segment
/// of its own: the last segment is sealed (and trimmed) at startup unless it is still empty and
/// was created with the same policy. So each segment's header tells recovery exactly which
/// policy (and torn window) its frames were written under, even when the policy changes
/// between runs.
struct WALTail {
    var segment: OpenSegment
    var segments: [SegmentEntry]
    var databaseID: DatabaseID
    var skipped: ClosedRange<LSN>?

    static func open(files: SegmentFiles, outcome: WALRecovery.Outcome, replayFrom: LSN, logger: Logger) throws(StorageError) -> WALTail {
        let databaseID = outcome.databaseID ?? files.options.databaseID ?? DatabaseID.random(using: files.options.random)
        let start = max(outcome.nextLSN, replayFrom)
        let skipped: ClosedRange<LSN>? = start > outcome.nextLSN ? outcome.nextLSN...(start - 1) : nil
        if let skipped {
            logger.warning(
                "wal.recovery.lsn_skipped",
                metadata: ["log_next_lsn": .init(outcome.nextLSN), "replay_from": .init(replayFrom), "skipped": "\(skipped)"]
            )
        }
        var segments = outcome.segments
        do throws(SystemError) {
            var current: OpenSegment
            if let last = outcome.last, let header = last.header {
                if case .sealed(let nextLSN) = last.end {
                    current = try create(files, firstLSN: nextLSN, databaseID: databaseID, chain: last.chainCRC, into: &segments)
                } else {
                    let file = try files.fileSystem.open(last.file, .readWrite)
                    current = OpenSegment(
                        file: file, path: last.file, header: header, offset: last.validEnd, chainCRC: last.chainCRC,
                        dataFrames: last.dataFrames, nextLSN: last.nextLSN, fileSize: last.fileSize
                    )
                }
                let reusable = current.dataFrames == 0 && current.nextLSN == start && current.header.policy == files.options.policy
                    && current.header.tornWindowBytes == files.limits.tornWindowBytes && current.fileSize == files.limits.segmentBytes
                if !reusable, current.dataFrames == 0, current.nextLSN == start {
                    // Empty but written under other settings: a new segment of the same name
                    // replaces it (the rename is atomic, and it held no records).
                    files.fileSystem.close(current.file)
                    current = try create(files, firstLSN: start, databaseID: databaseID, chain: current.chainCRC, into: &segments)
                } else if !reusable {
                    try files.writeSeal(&current, nextLSN: start)
                    try files.fileSystem.syncData(current.file)
                    try files.trimSealed(&current)
                    files.fileSystem.close(current.file)
                    if let index = segments.firstIndex(where: { $0.path == current.path }) { segments[index].bytes = current.fileSize }
                    logger.info("wal.segment.sealed", metadata: ["file": "\(current.path)", "next_lsn": .init(start), "at": "startup"])
                    current = try create(files, firstLSN: start, databaseID: databaseID, chain: current.chainCRC, into: &segments)
                }
            } else {
                current = try create(files, firstLSN: start, databaseID: databaseID, chain: 0, into: &segments)
            }
            return WALTail(segment: current, segments: segments, databaseID: databaseID, skipped: skipped)
        } catch {
            throw StorageError(error, "cannot prepare the log for writing in \(files.directory)")
        }
    }

    private static func create(
        _ files: SegmentFiles, firstLSN: LSN, databaseID: DatabaseID, chain: UInt32, into segments: inout [SegmentEntry]
    ) throws(SystemError) -> OpenSegment {
        let prepared = try files.prepare()
        do {
            let segment = try files.install(prepared, header: files.newHeader(firstLSN: firstLSN, databaseID: databaseID), previousChainCRC: chain)
            segments.removeAll { $0.path == segment.path }
            segments.append(SegmentEntry(firstLSN: firstLSN, path: segment.path, bytes: segment.fileSize))
            return segment
        } catch {
            files.fileSystem.close(prepared)
            throw error
        }
    }
}
