import GatehouseBase
import Synchronization

/// One `append` call waiting to be written: its records go into one frame together.
struct PendingAppend {
    var firstLSN: LSN
    var records: PendingRecords
    var bytes: Int
}

/// The records of one `append` call. Most calls append one record (a project's change), which
/// then needs no array of its own: one allocation fewer on every write.
enum PendingRecords: Sequence {
    case one(LogRecord)
    case many([LogRecord])

    struct Iterator: IteratorProtocol {
        fileprivate var one: LogRecord?
        fileprivate var many: IndexingIterator<[LogRecord]>?

        mutating func next() -> LogRecord? {
            if let record = one {
                one = nil
                return record
            }
            return many?.next()
        }
    }

    func makeIterator() -> Iterator {
        switch self {
        case .one(let record): Iterator(one: record, many: nil)
        case .many(let records): Iterator(one: nil, many: records.makeIterator())
        }
    }
}

/// A `whenDurable` callback.
struct DurabilityWaiter {
    var lsn: LSN
    var onDurable: @Sendable () -> Void
    /// Called instead when the log fails first (only `waitDurableOrFailure` sets it).
    var onFailure: (@Sendable (StorageError) -> Void)?
}

/// What appenders, the flusher and readers share, behind ``WALShared/core``.
struct WALCoreState {
    var nextLSN: LSN
    var pending: [PendingAppend] = []
    /// Queued or being written, not yet durable (what backpressure counts).
    var pendingBytes = 0
    var pendingRecords = 0
    var waiters: [DurabilityWaiter] = []
    /// Waiters of records that will never be durable (the log failed). Kept, never called.
    var parked: [DurabilityWaiter] = []
    var durableLSN: LSN
    var syncedLSN: LSN
    /// The flusher is running callbacks; newly durable waiters queue behind them to keep LSN order.
    var delivering = false
    var failure: StorageError?
    var closing = false
    var flusherExited = false
    var closeWaiters: [CheckedContinuation<Void, Never>] = []
    var segments: [SegmentEntry]
    var counters = WALCounters()
}

struct WALCounters: Equatable {
    var framesWritten = 0
    var recordsWritten = 0
    var bytesWritten = 0
    var rawBytesWritten = 0
    var syncs = 0
    var lastSyncDuration: Duration = .zero
    var maxSyncDuration: Duration = .zero
}

/// The housekeeper's inbox: the prepared next segment, segment removals, disk state.
struct HousekeepingState {
    var prepared: OpenFile?
    var wantPrepared = true
    var removals: [String] = []
    /// The last preallocation hit ENOSPC: read-only until a retry succeeds.
    var preallocationFailed = false
    /// `close` was called: a flusher waiting for space on a full disk gives up.
    var closeRequested = false
    var stop = false
    var exited = false
}

/// Everything the log's threads share. Immutable apart from the locked states and atomics.
final class WALShared: Sendable {
    let files: SegmentFiles
    let logger: Logger
    let onFatal: @Sendable (StorageError) -> Void
    let databaseID: DatabaseID
    let core: ConditionLock<WALCoreState>
    let housekeeping = ConditionLock(HousekeepingState())
    /// Every waiter at or below this LSN has been called: `whenDurable` for it runs at once.
    let deliveredLSN: Atomic<UInt64>
    let readOnly = Atomic<Bool>(false)
    let failed = Atomic<Bool>(false)
    /// How long the flusher's fdatasyncs take.
    let syncDurations = DurationHistogram(bounds: DurationHistogram.storageBounds)
    /// Whether `onFatal` was called; it is, at most once.
    private let reported = Atomic<Bool>(false)

    init(files: SegmentFiles, logger: Logger, onFatal: @escaping @Sendable (StorageError) -> Void, databaseID: DatabaseID, core: WALCoreState) {
        self.files = files
        self.logger = logger
        self.onFatal = onFatal
        self.databaseID = databaseID
        self.core = ConditionLock(core)
        self.deliveredLSN = Atomic(core.durableLSN)
    }

    var options: WALOptions { files.options }
    var limits: WALLimits { files.limits }
    var fileSystem: any FileSystem { files.fileSystem }
    var directory: String { files.directory }

    /// Fail-stop: nothing pending or later is ever acknowledged, appends throw `failed`, the
    /// threads stop, and `onFatal` runs once (when `fatal`). Never retried.
    func fail(_ error: StorageError, fatal: Bool = true) {
        // Report first, before anyone can observe the failed state: whoever sees an append or a
        // wait fail also finds the failure already reported (and the server already stopping).
        if fatal, reported.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged {
            logger.critical("wal.failed", metadata: ["error": "\(error)"])
            onFatal(error)
        }
        let outcome: (first: Bool, durable: [DurabilityWaiter], failing: [DurabilityWaiter]) = core.withLock { state in
            guard state.failure == nil else { return (false, [], []) }
            state.failure = error
            state.pending = []
            var durable: [DurabilityWaiter] = []
            var failing: [DurabilityWaiter] = []
            for waiter in state.waiters {
                if waiter.lsn <= state.durableLSN {
                    durable.append(waiter)
                } else if waiter.onFailure != nil {
                    failing.append(waiter)
                } else {
                    state.parked.append(waiter)
                }
            }
            state.waiters = []
            return (true, durable, failing)
        }
        core.broadcast()
        housekeeping.withLock { $0.stop = true }
        housekeeping.broadcast()
        guard outcome.first else { return }
        failed.store(true, ordering: .releasing)
        if !fatal { logger.warning("wal.stopped", metadata: ["error": "\(error)"]) }
        for waiter in outcome.durable { waiter.onDurable() }
        for waiter in outcome.failing { waiter.onFailure?(error) }
    }

    /// Marks everything up to `durable` as durable and runs the callbacks waiting for it, in LSN
    /// order, on the calling (flusher) thread.
    func publish(durable: LSN, synced: LSN?, records: Int, bytes: Int) {
        var ready = core.withLock { state in
            state.durableLSN = durable
            if let synced { state.syncedLSN = synced }
            state.pendingRecords -= records
            state.pendingBytes -= bytes
            let ready = Self.takeReady(&state.waiters, upTo: durable)
            if !ready.isEmpty { state.delivering = true }
            return ready
        }
        while !ready.isEmpty {
            for waiter in ready { waiter.onDurable() }
            ready = core.withLock { state in
                let more = Self.takeReady(&state.waiters, upTo: state.durableLSN)
                if more.isEmpty { state.delivering = false }
                return more
            }
        }
        deliveredLSN.store(durable, ordering: .releasing)
    }

    /// Removes and returns the waiters at or below `lsn`, sorted by LSN (ties in arrival order).
    static func takeReady(_ waiters: inout [DurabilityWaiter], upTo lsn: LSN) -> [DurabilityWaiter] {
        guard !waiters.isEmpty else { return [] }
        if waiters.allSatisfy({ $0.lsn <= lsn }) {
            defer { waiters = [] }
            return sortedByLSN(waiters)
        }
        var ready: [DurabilityWaiter] = []
        var rest: [DurabilityWaiter] = []
        for waiter in waiters {
            if waiter.lsn <= lsn { ready.append(waiter) } else { rest.append(waiter) }
        }
        waiters = rest
        return sortedByLSN(ready)
    }

    private static func sortedByLSN(_ waiters: [DurabilityWaiter]) -> [DurabilityWaiter] {
        var sorted = true
        for index in waiters.indices.dropFirst() where waiters[index - 1].lsn > waiters[index].lsn {
            sorted = false
            break
        }
        if sorted { return waiters }
        return waiters.enumerated()
            .sorted { $0.element.lsn != $1.element.lsn ? $0.element.lsn < $1.element.lsn : $0.offset < $1.offset }
            .map(\.element)
    }
}
