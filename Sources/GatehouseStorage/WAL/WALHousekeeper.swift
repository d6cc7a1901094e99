import GatehouseBase
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The log's second thread: keeps the next segment preallocated (so rotation never waits for
/// fallocate and disk-full shows up before anything is queued for it), removes segments the
/// runtime no longer needs, and watches free space, switching the log to read-only below the
/// reserve and back when space returns.
///
/// `@unchecked Sendable`: `wasReadOnly` is only touched by the housekeeping thread (and by
/// `open` before that thread starts).
final class WALHousekeeper: @unchecked Sendable {
    private let shared: WALShared
    private var wasReadOnly = false

    init(shared: WALShared) {
        self.shared = shared
    }

    private enum Job {
        case stop
        case work(removals: [String], prepare: Bool)
    }

    func run() {
        while true {
            let job = shared.housekeeping.withLock(
                waitingUntil: { $0.stop || !$0.removals.isEmpty || ($0.wantPrepared && $0.prepared == nil && !$0.preallocationFailed) },
                timeout: shared.options.freeSpaceCheckInterval
            ) { state -> Job in
                if state.stop { return .stop }
                defer { state.removals = [] }
                return .work(removals: state.removals, prepare: state.wantPrepared && state.prepared == nil)
            }
            guard case .work(let removals, let prepare) = job else { break }
            if !removals.isEmpty, !remove(removals) { break }
            if prepare, !prepareSegment() { break }
            checkFreeSpace()
        }
        let leftover = shared.housekeeping.withLock { state in
            defer { state.prepared = nil }
            return state.prepared
        }
        if let leftover {
            shared.fileSystem.close(leftover)
            try? shared.fileSystem.unlink(shared.files.preparedPath)
        }
        shared.housekeeping.withLock { $0.exited = true }
        shared.housekeeping.broadcast()
    }

    /// Unlinks, then fsyncs the directory. A missing file is fine; a failed directory sync is fatal.
    private func remove(_ paths: [String]) -> Bool {
        for path in paths {
            do {
                try shared.fileSystem.unlink(path)
                shared.logger.info("wal.segment.removed", metadata: ["file": "\(path)"])
            } catch where error.errno == ENOENT {
                continue
            } catch {
                shared.logger.warning("wal.segment.remove_failed", metadata: ["file": "\(path)", "error": "\(error)"])
            }
        }
        do {
            try shared.fileSystem.syncDirectory(shared.directory)
            return true
        } catch {
            shared.fail(StorageError(.io, "fsync of \(shared.directory) after removing segments failed: \(error); the log stopped (fail-stop)"))
            return false
        }
    }

    /// Prepares `next.tmp`. ENOSPC makes the log read-only (retried every check interval);
    /// any other error is fatal.
    private func prepareSegment() -> Bool {
        do {
            let file = try shared.files.prepare()
            shared.housekeeping.withLock { state in
                state.prepared = file
                state.wantPrepared = false
                state.preallocationFailed = false
            }
            shared.housekeeping.broadcast()
            return true
        } catch where error.errno == ENOSPC || error.errno == EDQUOT {
            shared.housekeeping.withLock { $0.preallocationFailed = true }
            shared.housekeeping.broadcast()
            return true
        } catch {
            shared.fail(StorageError(.io, "preparing the next segment failed: \(error); the log stopped (fail-stop)"))
            return false
        }
    }

    /// Read-only while free space is under the reserve or the last preallocation hit ENOSPC.
    func checkFreeSpace() {
        var low = false
        var free = -1
        do {
            free = try shared.fileSystem.freeBytes(shared.directory)
            low = free < shared.options.diskReserveBytes
        } catch {
            shared.logger.warning("wal.free_space.unknown", metadata: ["error": "\(error)"])
        }
        let preallocationFailed = shared.housekeeping.withLock { $0.preallocationFailed }
        let readOnly = low || preallocationFailed
        shared.readOnly.store(readOnly, ordering: .releasing)
        guard readOnly != wasReadOnly else { return }
        wasReadOnly = readOnly
        let metadata: Logger.Metadata = [
            "free_bytes": .init(free), "reserve_bytes": .init(shared.options.diskReserveBytes),
            "preallocation_failed": .boolean(preallocationFailed),
        ]
        if readOnly {
            shared.logger.error("wal.read_only.entered", metadata: metadata)
        } else {
            shared.logger.notice("wal.read_only.cleared", metadata: metadata)
        }
    }
}
