public import GatehouseBase
import Synchronization

/// The write-ahead log: one shared, segmented log for every project (storage.md Part C).
///
/// `append` is synchronous and cheap: it assigns LSNs under a lock and queues the records, so a
/// project actor can append with no `await` between its state change and the append, and
/// per-caller order is log order. A dedicated flusher thread takes everything queued, writes it
/// as one checksummed, compressed frame, syncs under `always`, and then runs the `whenDurable`
/// callbacks (group commit). Any write or sync error stops the log for good (fail-stop).
public final class WriteAheadLog: Sendable {
    let shared: WALShared
    /// How long each fdatasync of the log takes (a frame's, a segment seal's): read from any
    /// thread without a lock.
    public let syncDurations: DurationHistogram

    init(shared: WALShared) {
        self.shared = shared
        syncDurations = shared.syncDurations
    }

    /// Opens (creating if empty) the log in `directory`, runs recovery, and calls `replay` for
    /// every record at or after `replayFrom`, in order, before returning. Blocking: call it at
    /// startup or from a thread you own.
    ///
    /// Throws ``StorageError`` (`corrupt`, `tornTail`, `unsupportedVersion`, `io`, ...) or
    /// whatever `replay` throws.
    public static func open(
        directory: String,
        fileSystem: any FileSystem,
        options: WALOptions,
        replayFrom: LSN,
        logger: Logger,
        onFatal: @escaping @Sendable (StorageError) -> Void,
        replay: (LSN, LogRecord) throws -> Void
    ) throws -> (WriteAheadLog, RecoveryReport) {
        try open(directory: directory, fileSystem: fileSystem, options: options, replayFrom: replayFrom, logger: logger,
                 onFatal: onFatal, prepare: { _, record in record }) { records in
            for (lsn, record) in records { try replay(lsn, record) }
        }
    }

    /// Like ``open(directory:fileSystem:options:replayFrom:logger:onFatal:replay:)``, with the
    /// replay in two stages on two cores: `prepare` runs on a thread of its own as the log is
    /// read (decoding, which needs nothing applied before it), `replay` on the caller's thread
    /// with the prepared records in order, a batch at a time (so it can look at the records
    /// after the one it applies: ``Pipeline/Lookahead``). `prepare` must not touch what `replay`
    /// touches; if `replay` throws, it is given no record after the batch it threw in.
    public static func open<Prepared>(
        directory: String,
        fileSystem: any FileSystem,
        options: WALOptions,
        replayFrom: LSN,
        logger: Logger,
        onFatal: @escaping @Sendable (StorageError) -> Void,
        prepare: (LSN, LogRecord) throws -> Prepared,
        replay: ([(lsn: LSN, record: Prepared)]) throws -> Void
    ) throws -> (WriteAheadLog, RecoveryReport) {
        let files = SegmentFiles(directory: directory, fileSystem: fileSystem, options: options, limits: try WALLimits(options))
        let start = max(replayFrom, 1)
        let recovery = WALRecovery(files: files, logger: logger)
        let outcome = try recovery.run(replayFrom: start, prepare: prepare, apply: replay)
        let tail = try WALTail.open(files: files, outcome: outcome, replayFrom: start, logger: logger)
        var report = outcome.report
        report.databaseID = tail.databaseID
        report.skippedLSNs = tail.skipped
        let core = WALCoreState(
            nextLSN: tail.segment.nextLSN, durableLSN: tail.segment.nextLSN - 1, syncedLSN: tail.segment.nextLSN - 1,
            segments: tail.segments
        )
        let shared = WALShared(files: files, logger: logger, onFatal: onFatal, databaseID: tail.databaseID, core: core)
        let housekeeper = WALHousekeeper(shared: shared)
        housekeeper.checkFreeSpace()
        OSThread.detached(named: "wal-housekeeper") { housekeeper.run() }
        let flusher = WALFlusher(shared: shared, segment: tail.segment)
        OSThread.detached(named: "wal-flusher") { flusher.run() }
        logger.info(
            "wal.opened",
            metadata: [
                "directory": "\(directory)", "policy": "\(options.policy)", "segments": .init(tail.segments.count),
                "records_replayed": .init(report.recordsReplayed), "last_lsn": .init(tail.segment.nextLSN - 1),
                "torn_tail": .boolean(report.tornTail != nil),
            ]
        )
        return (WriteAheadLog(shared: shared), report)
    }

    /// Queues one record; returns its LSN. `wakingFlusher: false` leaves the flusher asleep
    /// until ``wakeFlusher()`` (or another append) wakes it: a caller appending a run of records
    /// lets them start their write together rather than the first one alone.
    public func append(_ record: LogRecord, wakingFlusher: Bool = true) throws(StorageError) -> LSN {
        try append(.one(record), count: 1, bytes: record.encodedByteCount, wakingFlusher: wakingFlusher)
    }

    /// Wakes the flusher for what was appended with `wakingFlusher: false`.
    public func wakeFlusher() {
        shared.core.broadcast()
    }

    /// Queues records that must be atomic together: they go into one frame. Returns the last
    /// LSN (the first is that minus `records.count - 1`). An empty array queues nothing and
    /// returns ``lastLSN``.
    ///
    /// Throws before queuing anything: `readOnly` when free space is under the reserve,
    /// `failed` after a fatal error, `closed` after `close`, `recordTooLarge` when the records
    /// exceed `frameBytesMax`, `busy` when more than `pendingBytesMax` is waiting for the disk.
    public func append(_ records: [LogRecord], wakingFlusher: Bool = true) throws(StorageError) -> LSN {
        if records.isEmpty { return lastLSN }
        var bytes = 0
        for record in records { bytes += record.encodedByteCount }
        return try append(.many(records), count: records.count, bytes: bytes, wakingFlusher: wakingFlusher)
    }

    private func append(_ records: PendingRecords, count: Int, bytes: Int, wakingFlusher: Bool) throws(StorageError) -> LSN {
        guard bytes <= shared.limits.frameBytesMax else {
            throw StorageError(.recordTooLarge, "\(count) record(s) of \(bytes) bytes exceed the \(shared.limits.frameBytesMax)-byte frame limit")
        }
        if shared.readOnly.load(ordering: .acquiring) {
            throw StorageError(.readOnly, "the disk holding the log is (nearly) full; writes resume when space is freed")
        }
        let pendingBytesMax = shared.options.pendingBytesMax
        let lastLSN = try shared.core.withLock { (state) throws(StorageError) -> LSN in
            if let failure = state.failure { throw StorageError(.failed, "the log stopped after an earlier error: \(failure.message)") }
            if state.closing { throw StorageError(.closed, "the log is closed") }
            if state.pendingBytes > 0, state.pendingBytes + bytes > pendingBytesMax {
                throw StorageError(.busy, "\(state.pendingBytes) bytes are already waiting for the disk")
            }
            let first = state.nextLSN
            state.nextLSN += LSN(count)
            state.pending.append(PendingAppend(firstLSN: first, records: records, bytes: bytes))
            state.pendingBytes += bytes
            state.pendingRecords += count
            return state.nextLSN - 1
        }
        if wakingFlusher { shared.core.broadcast() }
        return lastLSN
    }

    /// Calls `body` once `lsn` is durable under the policy (`always`: fdatasync'd; `everysec`
    /// and `none`: written with write(2)). If it already is, `body` runs at once on the caller's
    /// thread; otherwise on the flusher thread, in LSN order, so it must be cheap. Never called
    /// for a record that was not made durable (the log failed first).
    public func whenDurable(_ lsn: LSN, _ body: @escaping @Sendable () -> Void) {
        register(DurabilityWaiter(lsn: lsn, onDurable: body, onFailure: nil))
    }

    /// Returns once `lsn` is durable. If the log fails first it never returns (the server is
    /// expected to exit); use ``waitDurableOrFailure(_:)`` to be told instead.
    public func waitDurable(_ lsn: LSN) async {
        if lsn <= shared.deliveredLSN.load(ordering: .acquiring) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            whenDurable(lsn) { continuation.resume() }
        }
    }

    /// Returns once `lsn` is durable, or throws `failed` if the log fails before it is.
    public func waitDurableOrFailure(_ lsn: LSN) async throws(StorageError) {
        if lsn <= shared.deliveredLSN.load(ordering: .acquiring) { return }
        let result: Result<Void, StorageError> = await withCheckedContinuation { continuation in
            register(
                DurabilityWaiter(
                    lsn: lsn,
                    onDurable: { continuation.resume(returning: .success(())) },
                    onFailure: { error in continuation.resume(returning: .failure(StorageError(.failed, error.message))) }
                )
            )
        }
        try result.get()
    }

    private func register(_ waiter: DurabilityWaiter) {
        if waiter.lsn <= shared.deliveredLSN.load(ordering: .acquiring) {
            waiter.onDurable()
            return
        }
        enum Action { case runNow, queued, failNow(StorageError) }
        let action: Action = shared.core.withLock { state in
            if waiter.lsn <= state.durableLSN, !state.delivering { return .runNow }
            if let failure = state.failure, waiter.lsn > state.durableLSN {
                if waiter.onFailure != nil { return .failNow(failure) }
                state.parked.append(waiter)
                return .queued
            }
            state.waiters.append(waiter)
            return .queued
        }
        switch action {
        case .runNow: waiter.onDurable()
        case .queued: break
        case .failNow(let failure): waiter.onFailure?(failure)
        }
    }

    /// The last LSN assigned by `append`.
    public var lastLSN: LSN {
        shared.core.withLock { $0.nextLSN - 1 }
    }

    /// The last LSN durable under the policy.
    public var durableLSN: LSN {
        shared.core.withLock { $0.durableLSN }
    }

    /// Whether appends are refused because the disk is (nearly) full. Clears itself when space
    /// returns (checked every `freeSpaceCheckInterval`).
    public var isReadOnly: Bool {
        shared.readOnly.load(ordering: .acquiring)
    }

    /// Whether the log stopped after a write or sync error.
    public var isFailed: Bool {
        shared.failed.load(ordering: .acquiring)
    }

    /// The database this log belongs to (fixed when it was created; in every segment header).
    public var databaseID: DatabaseID { shared.databaseID }

    public var policy: DurabilityPolicy { shared.options.policy }

    public var stats: WALStats {
        let readOnly = isReadOnly
        return shared.core.withLock { state in
            WALStats(
                policy: shared.options.policy,
                segments: state.segments.count,
                bytesOnDisk: state.segments.reduce(0) { $0 + $1.bytes },
                framesWritten: state.counters.framesWritten,
                recordsWritten: state.counters.recordsWritten,
                bytesWritten: state.counters.bytesWritten,
                rawBytesWritten: state.counters.rawBytesWritten,
                syncs: state.counters.syncs,
                lastSyncDuration: state.counters.lastSyncDuration,
                maxSyncDuration: state.counters.maxSyncDuration,
                firstLSNKept: state.segments.first?.firstLSN ?? state.nextLSN,
                lastLSN: state.nextLSN - 1,
                durableLSN: state.durableLSN,
                syncedLSN: state.syncedLSN,
                pendingRecords: state.pendingRecords,
                pendingBytes: state.pendingBytes,
                isReadOnly: readOnly,
                isFailed: state.failure != nil
            )
        }
    }

    /// Deletes whole segments whose records are all below `lsn` (the runtime computes it from its
    /// snapshots, after publishing the manifest that no longer needs them). Sealed segments only,
    /// never the current one. The files are removed (and the directory synced) by the log's
    /// housekeeping thread shortly after; returns how many segments were scheduled.
    @discardableResult
    public func removeSegments(before lsn: LSN) throws(StorageError) -> Int {
        let removed = try shared.core.withLock { (state) throws(StorageError) -> [SegmentEntry] in
            if let failure = state.failure { throw StorageError(.failed, "the log stopped after an earlier error: \(failure.message)") }
            var count = 0
            while count + 1 < state.segments.count, state.segments[count + 1].firstLSN <= lsn { count += 1 }
            defer { state.segments.removeFirst(count) }
            return Array(state.segments.prefix(count))
        }
        guard !removed.isEmpty else { return 0 }
        shared.housekeeping.withLock { $0.removals.append(contentsOf: removed.map(\.path)) }
        shared.housekeeping.broadcast()
        shared.logger.info(
            "wal.segments.removing",
            metadata: ["count": .init(removed.count), "below_lsn": .init(lsn)]
        )
        return removed.count
    }

    /// Writes and syncs everything queued, then stops the log's threads (clean shutdown).
    /// Appends afterwards throw `closed`. Safe to call more than once.
    public func close() async {
        shared.core.withLock { $0.closing = true }
        shared.core.broadcast()
        shared.housekeeping.withLock { $0.closeRequested = true }
        shared.housekeeping.broadcast()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let exited = shared.core.withLock { state in
                if state.flusherExited { return true }
                state.closeWaiters.append(continuation)
                return false
            }
            if exited { continuation.resume() }
        }
    }
}
