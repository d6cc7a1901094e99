import GatehouseBase
@testable import GatehouseStorage
import GatehouseTesting
import Synchronization
import Testing

/// Where each policy acknowledges (DESIGN.md, "Durability and recovery"; storage.md C.5).
@Suite struct DurabilityPolicies {
    @Test func alwaysAcknowledgesOnlyAfterTheSyncReturns() async throws {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk, testOptions(.always))
        disk.holdSyncs()
        let lsn = try opened.log.append(testRecord(1))
        let fired = Mutex(false)
        opened.log.whenDurable(lsn) { fired.withLock { $0 = true } }
        #expect(await eventually { disk.syncsWaiting == 1 })
        try await Task.sleep(for: .milliseconds(30))
        #expect(!fired.withLock { $0 })
        #expect(opened.log.durableLSN == 0)
        disk.releaseSyncs()
        #expect(await eventually { fired.withLock { $0 } })
        #expect(opened.log.stats.syncedLSN == 1)
        await opened.log.close()
    }

    @Test func everysecAcknowledgesAfterTheWriteAndSyncsSoonAfter() async throws {
        let disk = FaultyFileSystem()
        var options = testOptions(.everysec)
        options.everysecInterval = .milliseconds(100)
        let opened = try openLog(disk, options)
        disk.holdSyncs()
        let lsn = try opened.log.append(testRecord(1))
        let fired = Mutex(false)
        opened.log.whenDurable(lsn) { fired.withLock { $0 = true } }
        #expect(await eventually { fired.withLock { $0 } }, "acknowledged without waiting for a sync")
        #expect(opened.log.stats.syncedLSN == 0)
        // What was acknowledged has reached the OS: a process crash keeps it.
        let survivor = disk.crash(seed: 1, .processCrash)
        let afterProcessCrash = try openLog(survivor, options)
        expectReplay(afterProcessCrash, from: 1, through: 1)
        await afterProcessCrash.log.close()
        disk.releaseSyncs()
        await opened.log.close()
    }

    @Test func everysecSyncsAboutOncePerInterval() async throws {
        let disk = FaultyFileSystem()
        var options = testOptions(.everysec)
        options.everysecInterval = .milliseconds(30)
        let opened = try openLog(disk, options)
        let before = opened.log.stats.syncs
        let lsn = try opened.log.append(testRecord(1))
        await opened.log.waitDurable(lsn)
        #expect(await eventually { opened.log.stats.syncedLSN == 1 })
        #expect(opened.log.stats.syncs == before + 1)
        await opened.log.close()
    }

    @Test func everysecSyncsEarlyPastTheUnsyncedBound() async throws {
        let disk = FaultyFileSystem()
        var options = testOptions(.everysec)
        options.everysecInterval = .seconds(3600)
        options.unsyncedBytesMax = 1000
        let opened = try openLog(disk, options)
        var last: LSN = 0
        for lsn in LSN(1)...20 {
            last = try opened.log.append(testRecord(lsn, size: 200))
            await opened.log.waitDurable(last)
        }
        #expect(opened.log.stats.syncs >= 3)
        #expect(opened.log.stats.syncedLSN >= 15)
        await opened.log.close()
    }

    @Test func noneAcknowledgesAfterTheWriteAndNeverSyncsUntilClose() async throws {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk, testOptions(.none))
        try appendTestRecords(opened.log, 1...50)
        await opened.log.waitDurable(50)
        try await Task.sleep(for: .milliseconds(60))
        #expect(opened.log.stats.syncs == 0)
        #expect(opened.log.stats.syncedLSN == 0)
        await opened.log.close()
        #expect(opened.log.stats.syncs == 1, "close syncs what is written")
        #expect(opened.log.stats.syncedLSN == 50)
    }

    @Test func closeWritesAndSyncsEverythingQueuedUnderEveryPolicy() async throws {
        for policy in DurabilityPolicy.allCases {
            let disk = FaultyFileSystem()
            let opened = try openLog(disk, testOptions(policy))
            try appendTestRecords(opened.log, 1...200)
            await opened.log.close()
            #expect(opened.log.durableLSN == 200)
            // Power loss right after a clean close loses nothing.
            let afterPowerLoss = try openLog(disk.crash(seed: 3, .dropUnsynced), testOptions(policy))
            expectReplay(afterPowerLoss, from: 1, through: 200)
            await afterPowerLoss.log.close()
        }
    }
}
