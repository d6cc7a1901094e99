import GatehouseBase
@testable import GatehouseStorage
import GatehouseTesting
import Testing

/// Segments fill, get sealed, and the log moves on (storage.md C.6); old ones are removed only
/// when every record in them is covered.
@Suite struct SegmentRotation {
    @Test func aLogSpanningManyTinySegmentsReplaysWhole() async throws {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk)
        var lsn: LSN = 0
        for batch in 0..<300 {
            let records = (1...4).map { testRecord(lsn + LSN($0), size: 100 + batch % 200) }
            lsn = try opened.log.append(records)
        }
        await opened.log.waitDurable(lsn)
        let stats = opened.log.stats
        #expect(stats.segments >= 3)
        #expect(stats.segments == segmentNames(disk).count)
        await opened.log.close()

        let names = segmentNames(disk)
        #expect(names.first == "0000000000000001.wal")
        let verification = try WALTool.verify(directory: walDirectory, fileSystem: disk)
        #expect(verification.isHealthy, "\(verification)")
        #expect(verification.segments.dropLast().allSatisfy { $0.sealed })
        #expect(verification.records == Int(lsn))

        let reopened = try openLog(disk)
        #expect(reopened.replayed.count == Int(lsn))
        #expect(reopened.replayedLSNs == Array(1...lsn))
        #expect(reopened.report.segmentsScanned == names.count)
        await reopened.log.close()
    }

    @Test func eachRunWritesIntoASegmentOfItsOwn() async throws {
        let disk = FaultyFileSystem()
        for run in LSN(0)..<3 {
            let opened = try openLog(disk)
            try appendTestRecords(opened.log, (run * 10 + 1)...(run * 10 + 10))
            await opened.log.close()
        }
        #expect(segmentNames(disk) == ["0000000000000001.wal", "000000000000000b.wal", "0000000000000015.wal"])
        // An empty segment of the same policy is reused rather than sealed.
        let idle = try openLog(disk)
        await idle.log.close()
        let again = try openLog(disk)
        await again.log.close()
        #expect(segmentNames(disk).count == 4)
        // A policy change starts a new segment, so each header describes its frames (an empty
        // one is replaced under the same name).
        let changed = try openLog(disk, testOptions(.everysec))
        #expect(try changed.log.append(testRecord(31)) == 31)
        await changed.log.close()
        #expect(segmentNames(disk).count == 4)
        let back = try openLog(disk, testOptions(.always))
        expectReplay(back, from: 1, through: 31)
        await back.log.close()
        #expect(segmentNames(disk).count == 5)
        let verification = try WALTool.verify(directory: walDirectory, fileSystem: disk)
        #expect(verification.isHealthy, "\(verification)")
        #expect(verification.segments.map(\.policy) == [.always, .always, .always, .everysec, .always])
    }

    @Test func removeSegmentsDeletesOnlyWhollyCoveredSealedSegments() async throws {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk)
        var lsn: LSN = 0
        while opened.log.stats.segments < 5 {
            lsn = try opened.log.append((1...5).map { testRecord(lsn + LSN($0), size: 400) })
            await opened.log.waitDurable(lsn)
        }
        let verification = try WALTool.verify(directory: walDirectory, fileSystem: disk)
        let firsts = verification.segments.map(\.firstLSN)
        // Keep the segment holding firsts[2] + 1: only the first two are wholly below it.
        let keepFrom = firsts[2] + 1
        #expect(try opened.log.removeSegments(before: keepFrom) == 2)
        #expect(await eventually { segmentNames(disk).count == firsts.count - 2 })
        #expect(opened.log.stats.firstLSNKept == firsts[2])
        // Never the current segment, whatever the LSN.
        let sealed = opened.log.stats.segments - 1
        #expect(try opened.log.removeSegments(before: .max) == sealed)
        #expect(await eventually { segmentNames(disk).count == 1 })
        let current = try #require(segmentNames(disk).first)
        await opened.log.close()

        let reopened = try openLog(disk, replayFrom: lsn)
        #expect(reopened.replayedLSNs == [lsn])
        #expect(reopened.replayed.first?.record == testRecord(lsn, size: 400))
        #expect(segmentNames(disk).first == current)
        await reopened.log.close()
    }
}
