import GatehouseBase

/// The one thread that writes the log (storage.md C.4). It takes everything queued, writes it
/// as frames of at most `syncCycleBytesMax` raw bytes, syncs under `always`, publishes the new
/// durable LSN and runs the callbacks. Pipeline depth 1: the next write starts only after the
/// previous sync returned, while appenders fill the next batch (that is the group commit), so
/// under `always` only the last frame can ever be torn by a crash.
///
/// `@unchecked Sendable`: everything but `shared` is touched only by the flusher thread.
final class WALFlusher: @unchecked Sendable {
    private let shared: WALShared
    private var segment: OpenSegment
    private let encoder = FrameEncoder()
    private var unsyncedBytes = 0
    private var writtenLSN: LSN
    private var lastSyncTime = MonotonicTime.now()
    /// How long the last fdatasync took (``gatherLateAppends(into:)``).
    private var lastSyncNanoseconds: UInt64 = 0

    init(shared: WALShared, segment: OpenSegment) {
        self.shared = shared
        self.segment = segment
        self.writtenLSN = segment.nextLSN - 1
    }

    private var options: WALOptions { shared.options }
    private var fileSystem: any FileSystem { shared.fileSystem }

    private enum Work {
        case write([PendingAppend])
        case tick
        case close
        case stop
    }

    func run() {
        loop: while true {
            let work = shared.core.withLock(
                waitingUntil: { !$0.pending.isEmpty || $0.closing || $0.failure != nil },
                timeout: syncTimeout()
            ) { state -> Work in
                if state.failure != nil { return .stop }
                if !state.pending.isEmpty {
                    defer { state.pending = [] }
                    return .write(state.pending)
                }
                return state.closing ? .close : .tick
            }
            do throws(FlusherError) {
                switch work {
                case .write(var appends):
                    gatherLateAppends(into: &appends)
                    try write(appends)
                case .tick: try syncIfDue()
                case .close:
                    try syncNow()
                    break loop
                case .stop: break loop
                }
            } catch {
                shared.fail(error.storageError, fatal: error.isFatal)
                break loop
            }
        }
        finish()
    }

    /// Under `always`, while writes come back to back, waits a moment for the rest of a burst
    /// before writing: what arrives while a frame syncs is written together at the next, but
    /// the first append after a sync would otherwise start a frame of its own while the others
    /// of its burst (the next loop turn's requests) arrive just behind it, and wait a whole
    /// sync. Waits while appends keep coming (each within ``burstGapNanoseconds`` of the last),
    /// for at most a quarter of the last sync's duration; never when the log was idle for longer
    /// than a sync.
    private func gatherLateAppends(into appends: inout [PendingAppend]) {
        guard options.policy == .always, lastSyncNanoseconds > 0,
            MonotonicTime.now() &- lastSyncTime < lastSyncNanoseconds
        else { return }
        let deadline = MonotonicTime.now() + min(lastSyncNanoseconds / 4, Self.gatherNanosecondsMax)
        while true {
            let now = MonotonicTime.now()
            guard now < deadline else { return }
            let more = shared.core.withLock(
                waitingUntil: { !$0.pending.isEmpty || $0.closing || $0.failure != nil },
                timeout: .nanoseconds(Int64(min(Self.burstGapNanoseconds, deadline - now)))
            ) { state -> [PendingAppend] in
                guard state.failure == nil, !state.closing else { return [] }
                defer { state.pending = [] }
                return state.pending
            }
            guard !more.isEmpty else { return }
            appends.append(contentsOf: more)
        }
    }

    /// The longest ``gatherLateAppends(into:)`` waits, whatever a sync costs.
    private static let gatherNanosecondsMax: UInt64 = 250_000
    /// A pause between appends this long ends a burst.
    private static let burstGapNanoseconds: UInt64 = 30_000

    /// Under `everysec`, wake up when the next sync falls due.
    private func syncTimeout() -> Duration? {
        guard options.policy == .everysec, unsyncedBytes > 0 else { return nil }
        let elapsed = MonotonicTime.now() &- lastSyncTime
        let interval = MonotonicTime.nanoseconds(options.everysecInterval)
        return .nanoseconds(Int64(interval > elapsed ? interval - elapsed : 0))
    }

    private func write(_ appends: [PendingAppend]) throws(FlusherError) {
        var index = 0
        while index < appends.count {
            var end = index
            var bytes = 0
            while end < appends.count {
                let next = appends[end].bytes
                if end > index, bytes + next > shared.limits.syncCycleBytesMax { break }
                bytes += next
                end += 1
            }
            try writeFrame(appends[index..<end], rawBytes: bytes)
            index = end
        }
    }

    /// One sync cycle: one frame, then (under `always`) fdatasync, then publish.
    private func writeFrame(_ appends: ArraySlice<PendingAppend>, rawBytes: Int) throws(FlusherError) {
        let firstLSN = appends[appends.startIndex].firstLSN
        precondition(firstLSN == segment.nextLSN, "LSNs must reach the flusher in order: got \(firstLSN), expected \(segment.nextLSN)")
        var frame = encoder.encodeData(appends.lazy.map(\.records), firstLSN: firstLSN, salt: segment.header.salt, previousBodyCRC: segment.chainCRC)
        if !segment.fits(frame.header.footprint) {
            try rotate(nextLSN: firstLSN)
            frame = encoder.encodeData(appends.lazy.map(\.records), firstLSN: firstLSN, salt: segment.header.salt, previousBodyCRC: segment.chainCRC)
        }
        do {
            try fileSystem.writeAll(segment.file, at: segment.offset, frame.bytes)
        } catch {
            throw FlusherError.io(error, "writing a frame to \(segment.path) at offset \(segment.offset)")
        }
        segment.offset += frame.header.footprint
        segment.chainCRC = frame.header.bodyCRC
        segment.dataFrames += 1
        segment.nextLSN = frame.header.lastLSN + 1
        writtenLSN = frame.header.lastLSN
        unsyncedBytes += frame.header.footprint
        let records = Int(frame.header.recordCount)
        shared.core.withLock { state in
            state.counters.framesWritten += 1
            state.counters.recordsWritten += records
            state.counters.bytesWritten += frame.header.footprint
            state.counters.rawBytesWritten += rawBytes
        }
        switch options.policy {
        case .always:
            try syncNow()
            shared.publish(durable: writtenLSN, synced: writtenLSN, records: records, bytes: rawBytes)
        case .everysec:
            shared.publish(durable: writtenLSN, synced: nil, records: records, bytes: rawBytes)
            if unsyncedBytes >= options.unsyncedBytesMax { try syncNow() } else { try syncIfDue() }
        case .none:
            shared.publish(durable: writtenLSN, synced: nil, records: records, bytes: rawBytes)
        }
    }

    private func syncIfDue() throws(FlusherError) {
        guard options.policy == .everysec, unsyncedBytes > 0 else { return }
        if MonotonicTime.now() &- lastSyncTime >= MonotonicTime.nanoseconds(options.everysecInterval) {
            try syncNow()
        }
    }

    /// fdatasync of the current segment. Never retried: a failure is fatal (fsyncgate).
    private func syncNow() throws(FlusherError) {
        guard unsyncedBytes > 0 else { return }
        do {
            try syncSegment()
        } catch {
            throw FlusherError.io(error, "fdatasync of \(segment.path)")
        }
    }

    /// Every fdatasync the flusher makes (a frame's, a seal's), timed and counted.
    private func syncSegment() throws(SystemError) {
        let started = MonotonicTime.now()
        try fileSystem.syncData(segment.file)
        let finished = MonotonicTime.now()
        lastSyncTime = finished
        lastSyncNanoseconds = finished &- started
        unsyncedBytes = 0
        shared.syncDurations.observe(nanoseconds: lastSyncNanoseconds)
        let took = Duration.nanoseconds(Int64(lastSyncNanoseconds))
        let synced = writtenLSN
        shared.core.withLock { state in
            state.counters.syncs += 1
            state.counters.lastSyncDuration = took
            state.counters.maxSyncDuration = max(state.counters.maxSyncDuration, took)
            state.syncedLSN = max(state.syncedLSN, synced)
        }
        if took > .seconds(1) {
            shared.logger.warning("wal.sync.slow", metadata: ["file": "\(segment.path)", "took_ms": .init(took.wholeMilliseconds)])
        }
    }

    /// Seal the current segment, switch to the prepared one (storage.md C.6).
    private func rotate(nextLSN: LSN) throws(FlusherError) {
        let prepared = try takePreparedSegment()
        let files = shared.files
        do {
            try files.writeSeal(&segment, nextLSN: nextLSN)
            try syncSegment()
            fileSystem.close(segment.file)
            let sealedPath = segment.path
            let header = files.newHeader(firstLSN: nextLSN, databaseID: shared.databaseID)
            segment = try files.install(prepared, header: header, previousChainCRC: segment.chainCRC)
            let entry = SegmentEntry(firstLSN: nextLSN, path: segment.path, bytes: segment.fileSize)
            shared.core.withLock { $0.segments.append(entry) }
            shared.logger.info("wal.segment.sealed", metadata: ["file": "\(sealedPath)", "next_lsn": .init(nextLSN)])
        } catch {
            fileSystem.close(prepared)
            throw FlusherError.io(error, "rotating from \(segment.path) to a new segment at LSN \(nextLSN)")
        }
        shared.housekeeping.withLock { $0.wantPrepared = true }
        shared.housekeeping.broadcast()
    }

    /// Waits for the housekeeper's prepared segment. While the disk is full that can take a
    /// while: appends are refused meanwhile (read-only), and what is already queued waits.
    private func takePreparedSegment() throws(FlusherError) -> OpenFile {
        let prepared: OpenFile? = shared.housekeeping.withLock(
            waitingUntil: { $0.prepared != nil || $0.stop || ($0.closeRequested && $0.preallocationFailed) },
            timeout: nil
        ) { state in
            defer { state.prepared = nil }
            return state.prepared
        }
        guard let prepared else { throw FlusherError.gaveUp }
        return prepared
    }

    /// Stops the housekeeper, waits for it, closes the segment, and lets `close` return.
    private func finish() {
        shared.housekeeping.withLock { $0.stop = true }
        shared.housekeeping.broadcast()
        shared.housekeeping.withLock(waitingUntil: { $0.exited }, timeout: nil) { _ in }
        fileSystem.close(segment.file)
        let waiters = shared.core.withLock { state in
            state.flusherExited = true
            defer { state.closeWaiters = [] }
            return state.closeWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// Why the flusher stopped.
enum FlusherError: Error {
    case io(SystemError, String)
    /// Closed while the disk was too full to start the next segment.
    case gaveUp

    var storageError: StorageError {
        switch self {
        case .io(let error, let context):
            StorageError(.io, "\(context) failed: \(error); the log stopped (fail-stop) and acknowledges nothing more")
        case .gaveUp:
            StorageError(.readOnly, "the log was closed while the disk was too full to start a new segment; queued records were not written")
        }
    }

    var isFatal: Bool {
        if case .gaveUp = self { return false }
        return true
    }
}
