import GatehouseBase
@testable import GatehouseStorage
import GatehouseTesting
import Testing

/// What is appended comes back, in order, at the next open (storage.md C.1-2: the recovered
/// state is a prefix, here all of it after a clean close).
@Suite struct AppendAndReplay {
    @Test(arguments: DurabilityPolicy.allCases)
    func everyRecordAppendedIsReplayedInOrderAfterReopen(policy: DurabilityPolicy) async throws {
        let disk = FaultyFileSystem()
        let first = try openLog(disk, testOptions(policy))
        #expect(first.report.created)
        #expect(first.replayed.isEmpty)
        try appendTestRecords(first.log, 1...300)
        await first.log.close()

        let second = try openLog(disk, testOptions(policy))
        expectReplay(second, from: 1, through: 300)
        #expect(second.report.recordsReplayed == 300)
        #expect(second.report.lastLSN == 300)
        #expect(second.report.tornTail == nil)
        #expect(!second.report.created)
        #expect(second.log.lastLSN == 300)
        #expect(try second.log.append(testRecord(301)) == 301)
        await second.log.close()

        let third = try openLog(disk, testOptions(policy))
        expectReplay(third, from: 1, through: 301)
        await third.log.close()
    }

    @Test func lsnsStartAtOneAndAreConsecutiveAcrossBatches() async throws {
        let opened = try openLog(FaultyFileSystem())
        #expect(opened.log.lastLSN == 0)
        #expect(try opened.log.append(testRecord(1)) == 1)
        #expect(try opened.log.append([testRecord(2), testRecord(3), testRecord(4)]) == 4)
        #expect(try opened.log.append([]) == 4)
        #expect(try opened.log.append(testRecord(5)) == 5)
        #expect(opened.log.lastLSN == 5)
        await opened.log.waitDurable(5)
        #expect(opened.log.durableLSN == 5)
        await opened.log.close()
    }

    @Test func aBatchIsWrittenInOneFrame() async throws {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk)
        let last = try opened.log.append((1...50).map { testRecord($0) })
        await opened.log.waitDurable(last)
        #expect(opened.log.stats.framesWritten == 1)
        await opened.log.close()
        var frames: [String] = []
        try WALTool.dump(directory: walDirectory, fileSystem: disk) { line in
            if line.hasPrefix("frame ") { frames.append(line) }
        }
        #expect(frames.count == 1)
    }

    @Test func replayStartsAtReplayFrom() async throws {
        let disk = FaultyFileSystem()
        let first = try openLog(disk)
        try appendTestRecords(first.log, 1...40)
        await first.log.close()
        let second = try openLog(disk, replayFrom: 25)
        expectReplay(second, from: 25, through: 40)
        await second.log.close()
    }

    @Test func anAppendLargerThanTheFrameLimitIsRefusedAndNothingIsQueued() async throws {
        var options = testOptions()
        options.frameBytesMax = 1024
        let opened = try openLog(FaultyFileSystem(), options)
        #expect(throws: StorageError.self) { try opened.log.append(WALRecord(kind: 1, payload: [UInt8](repeating: 7, count: 1020))) }
        do {
            _ = try opened.log.append([testRecord(1, size: 600), testRecord(2, size: 600)])
            Issue.record("expected recordTooLarge")
        } catch {
            #expect(error.code == .recordTooLarge)
        }
        #expect(opened.log.lastLSN == 0)
        #expect(try opened.log.append(WALRecord(kind: 1, payload: [UInt8](repeating: 7, count: 1018))) == 1)
        await opened.log.close()
    }

    @Test func appendsAfterCloseThrowClosed() async throws {
        let opened = try openLog(FaultyFileSystem())
        try appendTestRecords(opened.log, 1...3)
        await opened.log.close()
        await opened.log.close()
        do {
            _ = try opened.log.append(testRecord(4))
            Issue.record("expected closed")
        } catch {
            #expect(error.code == .closed)
        }
        #expect(opened.log.durableLSN == 3)
    }

    @Test func aLogOnTheRealDiskReopens() async throws {
        try await withTemporaryDirectory(prefix: "gatehouse-wal") { directory in
            let path = directory.appending("data/wal")
            let first = try await openLogOnTheRealDisk(directory: path)
            try appendTestRecords(first.log, 1...500)
            await first.log.waitDurable(500)
            await first.log.close()
            let second = try await openLogOnTheRealDisk(directory: path)
            expectReplay(second, from: 1, through: 500)
            #expect(try second.log.append(testRecord(501)) == 501)
            await second.log.close()
            let third = try await openLogOnTheRealDisk(directory: path)
            expectReplay(third, from: 1, through: 501)
            await third.log.close()
        }
    }

    @Test func theLogRemembersItsDatabaseIDAndRefusesAnother() async throws {
        let disk = FaultyFileSystem()
        let first = try openLog(disk)
        let id = first.log.databaseID
        #expect(first.report.databaseID == id)
        try appendTestRecords(first.log, 1...3)
        await first.log.close()

        var same = testOptions()
        same.databaseID = id
        let second = try openLog(disk, same)
        #expect(second.log.databaseID == id)
        await second.log.close()

        var other = testOptions()
        other.databaseID = DatabaseID(bytes: [UInt8](repeating: 9, count: 16))
        #expect {
            _ = try openLog(disk, other)
        } throws: { error in
            guard let error = error as? StorageError else { return false }
            return error.code == .corrupt && error.message.contains("belongs to database") && error.message.contains("0000000000000001.wal")
        }
    }

    @Test func aNewLogIsCreatedWithTheExpectedDatabaseID() async throws {
        var options = testOptions()
        let id = DatabaseID(bytes: Array(1...16))!
        options.databaseID = id
        let opened = try openLog(FaultyFileSystem(), options)
        #expect(opened.log.databaseID == id)
        await opened.log.close()
    }

    @Test func numberingContinuesAtReplayFromWhenTheLogEndsBeforeIt() async throws {
        let disk = FaultyFileSystem()
        let first = try openLog(disk)
        try appendTestRecords(first.log, 1...10)
        await first.log.close()
        // The snapshots cover up to 19 (an everysec log lost its unsynced tail, say).
        let second = try openLog(disk, replayFrom: 20)
        #expect(second.replayed.isEmpty)
        #expect(second.report.skippedLSNs == 11...19)
        #expect(try second.log.append(testRecord(20)) == 20)
        await second.log.close()
        let third = try openLog(disk, replayFrom: 1)
        #expect(third.replayedLSNs == Array(1...10) + [20])
        await third.log.close()
    }

    @Test func aLogStartingAfterReplayFromIsRefused() async throws {
        let disk = FaultyFileSystem()
        let first = try openLog(disk, replayFrom: 100)
        #expect(try first.log.append(testRecord(100)) == 100)
        await first.log.close()
        #expect(throws: StorageError.self) { _ = try openLog(disk, replayFrom: 50) }
    }

    @Test func aNewLogSurvivesPowerLossEvenInADirectoryCreatedWithoutSync() async throws {
        let disk = FaultyFileSystem()
        try disk.makeDirectoriesDurably("/data")
        try disk.makeDirectory(walDirectory)
        let opened = try openLog(disk)
        try appendTestRecords(opened.log, 1...5)
        await opened.log.waitDurable(5)
        let afterPowerLoss = try openLog(disk.crash(seed: 1, .dropUnsynced))
        expectReplay(afterPowerLoss, from: 1, through: 5)
        await afterPowerLoss.log.close()
        await opened.log.close()
    }

    @Test func leftoverTemporaryFilesAreRemovedAtOpen() async throws {
        let disk = FaultyFileSystem()
        disk.setContents([1, 2, 3], of: walDirectory + "/next.tmp")
        disk.setContents([4], of: walDirectory + "/whatever.tmp")
        let opened = try openLog(disk)
        await opened.log.close()
        #expect(!disk.names(in: walDirectory).contains("whatever.tmp"))
        #expect(!disk.names(in: walDirectory).contains("next.tmp"))
    }
}
