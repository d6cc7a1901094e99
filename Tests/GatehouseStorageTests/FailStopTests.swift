import GatehouseBase
@testable import GatehouseStorage
import GatehouseTesting
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A failed write or sync stops the log for good (storage.md C.9; PostgreSQL's fsyncgate
/// lesson): nothing pending is acknowledged, onFatal runs once, later appends throw `failed`,
/// and no sync is ever retried.
@Suite struct FailStop {
    @Test func aFailedFdatasyncStopsTheLogAndAcknowledgesNothingPending() async throws {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk)
        try appendTestRecords(opened.log, 1...5)
        await opened.log.waitDurable(5)

        disk.failNextSync()
        disk.holdSyncs()
        let fired = Mutex<[LSN]>([])
        let lsn = try opened.log.append(testRecord(6))
        #expect(await eventually { disk.syncsWaiting == 1 })
        for next in LSN(7)...20 { #expect(try opened.log.append(testRecord(next)) == next) }
        for waiting in LSN(1)...20 { opened.log.whenDurable(waiting) { fired.withLock { $0.append(waiting) } } }
        #expect(fired.withLock { $0 } == Array(1...5))
        disk.releaseSyncs()
        #expect(await eventually { opened.log.isFailed })
        #expect(await eventually { opened.fatal.count == 1 })
        let syncsAfterFailure = disk.syncCount
        try await Task.sleep(for: .milliseconds(50))
        #expect(fired.withLock { $0 } == Array(1...5), "nothing after the failed sync is acknowledged")
        #expect(opened.fatal.count == 1)
        #expect(opened.fatal.all.first?.message.contains("fdatasync") == true)
        #expect(opened.log.durableLSN == 5)
        #expect(lsn == 6)
        do {
            _ = try opened.log.append(testRecord(21))
            Issue.record("an append after the failure was accepted")
        } catch {
            #expect(error.code == .failed)
        }
        await #expect(throws: StorageError.self) { try await opened.log.waitDurableOrFailure(6) }
        opened.log.whenDurable(3) { fired.withLock { $0.append(3) } }
        #expect(fired.withLock { $0.last } == 3, "what was durable stays durable")
        #expect(opened.log.stats.isFailed)
        await opened.log.close()
        #expect(disk.syncCount == syncsAfterFailure, "no sync is retried after a failure")
        #expect(throws: StorageError.self) { try opened.log.removeSegments(before: 100) }
    }

    @Test func aFailedWriteStopsTheLog() async throws {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk)
        // The housekeeper preallocates the next segment as the log opens: the failure is meant
        // for the frame's write, so it waits until that preparation is done.
        #expect(await eventually { opened.log.nextSegmentIsPrepared })
        disk.writeError = EIO
        let lsn = try opened.log.append(testRecord(1))
        await #expect(throws: StorageError.self) { try await opened.log.waitDurableOrFailure(lsn) }
        #expect(opened.fatal.count == 1)
        #expect(opened.fatal.all.first?.code == .io)
        await opened.log.close()
    }

    @Test func runningOutOfSpaceInsideAPreallocatedSegmentIsFatalNotReadOnly() async throws {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk)
        // The housekeeper preallocates the next segment as the log opens: the failure is meant
        // for the frame's write, so it waits until that preparation is done.
        #expect(await eventually { opened.log.nextSegmentIsPrepared })
        disk.writeError = ENOSPC
        let lsn = try opened.log.append(testRecord(1))
        await #expect(throws: StorageError.self) { try await opened.log.waitDurableOrFailure(lsn) }
        #expect(opened.fatal.count == 1)
        await opened.log.close()
    }

    @Test func aFailedDirectorySyncAtRotationStopsTheLog() async throws {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk)
        disk.failNextDirectorySync()
        var lsn: LSN = 0
        var failed = false
        while !failed, lsn < 1000 {
            do {
                lsn = try opened.log.append(testRecord(lsn + 1, size: 2000))
                try await opened.log.waitDurableOrFailure(lsn)
            } catch {
                failed = true
            }
        }
        #expect(failed)
        #expect(opened.fatal.count == 1)
        #expect(opened.fatal.all.first?.message.contains("rotating") == true)
        await opened.log.close()
        // What was acknowledged before is all there after a restart.
        let reopened = try openLog(disk)
        #expect(LSN(reopened.replayed.count) >= lsn - 1)
        await reopened.log.close()
    }

    @Test func onFatalRunsOnceEvenWhenBothThreadsFail() async throws {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk)
        disk.writeError = EIO
        disk.allocateError = EIO
        _ = try? opened.log.append(testRecord(1))
        _ = try? opened.log.removeSegments(before: 1)
        #expect(await eventually { opened.log.isFailed })
        try await Task.sleep(for: .milliseconds(30))
        #expect(opened.fatal.count == 1)
        await opened.log.close()
    }
}

/// A full disk refuses writes before they are queued, and the log takes writes again once
/// space returns (DESIGN.md, "Durability and recovery"; storage.md C.9).
@Suite struct DiskFull {
    @Test func freeSpaceUnderTheReserveRefusesAppendsUntilSpaceReturns() async throws {
        let disk = FaultyFileSystem()
        disk.reportedFreeBytes = 1000
        var options = testOptions()
        options.diskReserveBytes = 1 << 20
        let opened = try openLog(disk, options)
        #expect(opened.log.isReadOnly)
        do {
            _ = try opened.log.append(testRecord(1))
            Issue.record("an append was accepted on a full disk")
        } catch {
            #expect(error.code == .readOnly)
        }
        #expect(opened.log.lastLSN == 0, "nothing was queued")
        #expect(opened.log.stats.isReadOnly)
        disk.reportedFreeBytes = 10 << 20
        #expect(await eventually { !opened.log.isReadOnly })
        #expect(try opened.log.append(testRecord(1)) == 1)
        await opened.log.waitDurable(1)
        disk.reportedFreeBytes = 10
        #expect(await eventually { opened.log.isReadOnly })
        await opened.log.close()
    }

    @Test func enospcPreparingTheNextSegmentRefusesAppendsUntilSpaceReturns() async throws {
        let disk = FaultyFileSystem()
        let handler = CapturingLogHandler()
        var replayed: [LSN] = []
        let (log, _) = try WriteAheadLog.open(
            directory: walDirectory, fileSystem: disk, options: testOptions(), replayFrom: 1,
            logger: handler.logger(), onFatal: { _ in }
        ) { lsn, _ in replayed.append(lsn) }
        #expect(await eventually { disk.names(in: walDirectory).contains("next.tmp") })
        disk.allocateError = ENOSPC
        var lsn: LSN = 0
        while !log.isReadOnly, lsn < 500 {
            guard let appended = try? log.append(testRecord(lsn + 1, size: 3000)) else { break }
            lsn = appended
            await log.waitDurable(lsn)
        }
        #expect(log.isReadOnly, "the segment after the prepared one could not be allocated")
        #expect(log.stats.segments == 2)
        #expect(throws: StorageError.self) { try log.append(testRecord(lsn + 1)) }
        #expect(!handler.records(event: "wal.read_only.entered").isEmpty)
        disk.allocateError = nil
        #expect(await eventually { !log.isReadOnly })
        #expect(!handler.records(event: "wal.read_only.cleared").isEmpty)
        let before = log.stats.segments
        while log.stats.segments == before {
            lsn = try log.append(testRecord(lsn + 1, size: 3000))
            await log.waitDurable(lsn)
        }
        await log.close()
        #expect(!log.isFailed)
    }

    @Test func recordsQueuedForASegmentThatCannotBeAllocatedWaitForSpace() async throws {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk)
        #expect(await eventually { disk.names(in: walDirectory).contains("next.tmp") })
        // Records accepted while space looked fine, more than the current segment and the
        // prepared one hold: they queue behind a sync that is held.
        disk.holdSyncs()
        var queued = try opened.log.append(testRecord(1, size: 3000))
        #expect(await eventually { disk.syncsWaiting == 1 })
        for _ in 0..<60 { queued = try opened.log.append(testRecord(queued + 1, size: 3000)) }
        let fired = Mutex(false)
        opened.log.whenDurable(queued) { fired.withLock { $0 = true } }
        // Then the disk fills: the segment after the prepared one cannot be allocated.
        disk.allocateError = ENOSPC
        disk.releaseSyncs()
        #expect(await eventually { opened.log.isReadOnly })
        try await Task.sleep(for: .milliseconds(50))
        #expect(!fired.withLock { $0 }, "records that need an unallocatable segment wait, unacknowledged")
        #expect(!opened.log.isFailed)
        disk.allocateError = nil
        #expect(await eventually { fired.withLock { $0 } })
        #expect(!opened.log.isFailed)
        await opened.log.close()
        let reopened = try openLog(disk)
        #expect(reopened.replayed.count == Int(queued))
        await reopened.log.close()
    }
}

extension WriteAheadLog {
    /// Whether the housekeeper has the next segment preallocated.
    var nextSegmentIsPrepared: Bool { shared.housekeeping.withLock { $0.prepared != nil } }
}
