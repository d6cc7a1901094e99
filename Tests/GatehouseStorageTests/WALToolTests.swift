import GatehouseBase
@testable import GatehouseStorage
import GatehouseTesting
import Testing

/// `gatehouse wal verify | dump | repair` (storage.md C.8, operator tool).
@Suite struct WALTools {
    @Test func verifyReportsAHealthyLogAsHealthy() async throws {
        let (disk, last) = try await CorruptionRefusal.multiSegmentLog()
        let verification = try WALTool.verify(directory: walDirectory, fileSystem: disk)
        #expect(verification.isHealthy)
        #expect(verification.startup == .starts)
        #expect(verification.records == Int(last))
        #expect(verification.lastGoodLSN == last)
        #expect(verification.firstLSN == 1)
        #expect(verification.description.contains("ok:"))
    }

    @Test func verifyReportsATornTailAsSomethingStartupCuts() async throws {
        var (bytes, last) = try await TornTails.threeFrameLog()
        bytes[last.offset + 60] ^= 1
        let disk = TornTails.disk(with: bytes)
        let verification = try WALTool.verify(directory: walDirectory, fileSystem: disk)
        #expect(verification.problems.map(\.kind) == [.tornTail])
        #expect(verification.problems.first?.offset == last.offset)
        #expect(verification.startup == .cutsTornTail(file: walDirectory + "/0000000000000001.wal", offset: last.offset, bytes: last.header.footprint))
        #expect(verification.lastGoodLSN == 2)
        #expect(disk.contents(of: walDirectory + "/0000000000000001.wal") == bytes, "verify modifies nothing")
    }

    @Test func verifyReportsEveryProblemAndThatStartupRefuses() async throws {
        let (disk, _) = try await CorruptionRefusal.multiSegmentLog()
        let names = segmentNames(disk)
        try disk.unlink(walDirectory + "/" + names[1])
        disk.flipBit(path: walDirectory + "/" + names[2], offset: 4096 + 100)
        let verification = try WALTool.verify(directory: walDirectory, fileSystem: disk)
        #expect(!verification.isHealthy)
        #expect(verification.problems.count == 2, "\(verification)")
        #expect(verification.problems.allSatisfy { $0.kind == .corrupt })
        #expect(verification.problems.contains { $0.file.hasSuffix(names[2]) && $0.offset == 4096 && $0.message.contains("checksum") })
        #expect(verification.problems.contains { $0.file.hasSuffix(names[2]) && $0.offset == 0 && $0.message.contains("a segment is missing") })
        guard case .refuses(let reason) = verification.startup else {
            Issue.record("expected startup to refuse")
            return
        }
        #expect(reason.contains(names[2]))
        #expect(verification.description.contains("damaged"))
    }

    @Test func dumpPrintsEverySegmentFrameAndRecord() async throws {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk)
        _ = try opened.log.append([testRecord(1), testRecord(2)])
        await opened.log.waitDurable(2)
        _ = try opened.log.append(testRecord(3, size: 1000))
        await opened.log.close()
        var lines: [String] = []
        try WALTool.dump(directory: walDirectory, fileSystem: disk) { lines.append($0) }
        #expect(lines.first?.hasPrefix("segment 0000000000000001.wal first_lsn=1 database=") == true)
        #expect(lines.contains { $0.hasPrefix("frame 0000000000000001.wal offset=4096 lsn=1-2 records=2 codec=stored") })
        #expect(lines.contains("record lsn=1 kind=1 bytes=\(testRecord(1).payload.count)"))
        #expect(lines.contains("record lsn=3 kind=3 bytes=1000"))
        #expect(lines.last == "summary segments=1 records=3 last_good_lsn=3 problems=0")
    }

    @Test func repairBacksUpCutsAtTheFirstBadFrameAndTheLogThenOpens() async throws {
        let (disk, _) = try await CorruptionRefusal.multiSegmentLog()
        let names = segmentNames(disk)
        let firstPath = walDirectory + "/" + names[0]
        let originals = names.map { disk.contents(of: walDirectory + "/" + $0)! }
        var frames: [ScannedFrame] = []
        _ = SegmentScanner().scan(file: firstPath, bytes: originals[0], previousBodyCRC: nil) { frame, _ in frames.append(frame) }
        let damagedFrame = frames[1]
        disk.flipBit(path: firstPath, offset: damagedFrame.offset + 70)
        let damagedFirst = disk.contents(of: firstPath)!
        #expect(throws: StorageError.self) { _ = try openLog(disk) }

        let report = try WALTool.repair(directory: walDirectory, fileSystem: disk)
        #expect(report.changed)
        #expect(report.cutFile == firstPath)
        #expect(report.cutOffset == damagedFrame.offset)
        #expect(report.removedFiles == names.dropFirst().map { walDirectory + "/" + $0 })
        #expect(report.lastGoodLSN == frames[0].header.lastLSN)
        #expect(report.lastDroppedLSN != nil)
        #expect(report.description.contains("backup"))
        // Every file it changed or removed was copied first, as it was.
        let backup = try #require(report.backupDirectory)
        #expect(disk.contents(of: backup + "/" + names[0]) == damagedFirst)
        for (index, name) in names.enumerated().dropFirst() {
            #expect(disk.contents(of: backup + "/" + name) == originals[index])
        }
        // The log opens with the records before the damage.
        let reopened = try openLog(disk)
        #expect(reopened.replayedLSNs == Array(1...frames[0].header.lastLSN))
        await reopened.log.close()
        #expect(try WALTool.verify(directory: walDirectory, fileSystem: disk).isHealthy)
        #expect(try WALTool.repair(directory: walDirectory, fileSystem: disk).changed == false)
    }

    @Test func repairOfAMissingSegmentRemovesWhatFollowsTheGap() async throws {
        let (disk, _) = try await CorruptionRefusal.multiSegmentLog()
        let names = segmentNames(disk)
        try disk.unlink(walDirectory + "/" + names[1])
        let report = try WALTool.repair(directory: walDirectory, fileSystem: disk)
        #expect(report.cutFile == nil)
        #expect(report.removedFiles == names.dropFirst(2).map { walDirectory + "/" + $0 })
        let reopened = try openLog(disk)
        #expect(!reopened.replayed.isEmpty)
        await reopened.log.close()
    }
}
