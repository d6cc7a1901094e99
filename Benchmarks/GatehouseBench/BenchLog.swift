import Dispatch
import GatehouseBase
import GatehouseStorage
import Synchronization

/// Opening, waiting on and closing a ``WriteAheadLog`` from the bench's own blocking threads,
/// exactly as the server's runtime opens it (real disk, `NativeFileSystem`, default options
/// but for the policy).
enum BenchLog {
    /// The first fatal error the log reported, if any (``WriteAheadLog`` stops for good after one).
    final class FatalError: Sendable {
        private let message = Mutex<String?>(nil)

        func record(_ error: StorageError) {
            message.withLock { if $0 == nil { $0 = "\(error)" } }
        }

        var failure: BenchFailure? {
            message.withLock { $0 }.map { BenchFailure("the log failed: \($0)") }
        }
    }

    static let recordKind: UInt16 = 0xBE

    /// Opens (creating) the log in `directory`; `replay` sees every record already there.
    static func open(
        _ directory: String, policy: DurabilityPolicy, fatal: FatalError,
        replay: (LSN, WALRecord) throws -> Void = { _, _ in }
    ) throws(BenchFailure) -> (WriteAheadLog, RecoveryReport) {
        // Warnings only: "wal.opened" and the like would interleave with the figures.
        let logger = Logger(label: "bench-wal", handler: StreamLogHandler(), logLevel: .warning)
        do {
            return try WriteAheadLog.open(
                directory: directory, fileSystem: NativeFileSystem(), options: WALOptions(policy: policy),
                replayFrom: 1, logger: logger, onFatal: { fatal.record($0) }, replay: replay
            )
        } catch {
            throw BenchFailure("cannot open a log in \(directory): \(error)")
        }
    }

    /// Blocks this (non-pool) thread until `lsn` is durable under the log's policy; false if
    /// the log failed first. `semaphore` is the calling thread's own, reused for every wait.
    static func waitDurable(_ log: WriteAheadLog, _ lsn: LSN, semaphore: DispatchSemaphore) -> Bool {
        log.whenDurable(lsn) { semaphore.signal() }
        while semaphore.wait(timeout: .now() + .milliseconds(500)) == .timedOut {
            if log.isFailed { return false }
        }
        return true
    }

    /// Flushes and stops the log, blocking this (non-pool) thread meanwhile.
    static func close(_ log: WriteAheadLog) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await log.close()
            done.signal()
        }
        done.wait()
    }
}
