import GatehouseBase
@testable import GatehouseStorage
import GatehouseTesting
import Synchronization
import Testing

/// What `/metrics` reads of the log: the sync histogram agrees with the counters, and reading
/// either never waits for the disk.
@Suite struct WALMetrics {
    @Test func everySyncUnderAlwaysIsObservedInTheSyncHistogramSealsIncluded() async throws {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk)
        let log = opened.log
        #expect(log.syncDurations.snapshot().count == 0)
        // Incompressible records of 20 KB in 64 KiB segments: the log seals a few on the way.
        for lsn in LSN(1)...12 {
            _ = try log.append(testRecord(lsn, size: 20_000))
            await log.waitDurable(lsn)
        }
        let stats = log.stats
        #expect(stats.segments > 2)
        #expect(stats.syncs == 12 + stats.segments - 1, "one per frame and one per seal")
        let histogram = log.syncDurations.snapshot()
        #expect(histogram.count == UInt64(stats.syncs))
        #expect(histogram.bounds == DurationHistogram.storageBounds)
        await log.close()
    }

    @Test func theSyncHistogramCountsTheSyncsOfEveryPolicy() async throws {
        for policy in DurabilityPolicy.allCases {
            let opened = try openLog(FaultyFileSystem(), testOptions(policy))
            try appendTestRecords(opened.log, 1...30)
            await opened.log.waitDurable(30)
            await opened.log.close()
            let syncs = opened.log.stats.syncs
            #expect(syncs >= 1, "close syncs what is written (\(policy))")
            #expect(opened.log.syncDurations.snapshot().count == UInt64(syncs), "\(policy)")
        }
    }

    @Test func readingTheStatsAndTheHistogramNeverWaitsForASyncInProgress() async throws {
        let disk = FaultyFileSystem()
        let opened = try openLog(disk)
        let log = opened.log
        disk.holdSyncs()
        _ = try log.append(testRecord(1))
        #expect(await eventually { disk.syncsWaiting == 1 })
        // Read on a thread of its own, so a read that waited would fail this test, not hang it.
        let read = Mutex<(WALStats, HistogramSnapshot)?>(nil)
        OSThread.detached(named: "scrape") {
            let figures = (log.stats, log.syncDurations.snapshot())
            read.withLock { $0 = figures }
        }
        #expect(await eventually { read.withLock { $0 != nil } }, "the scrape returned while the flusher was inside fdatasync")
        #expect(disk.syncsWaiting == 1, "and the sync was still held")
        if let (stats, histogram) = read.withLock({ $0 }) {
            #expect(stats.recordsWritten == 1 && stats.syncs == 0 && stats.pendingRecords == 1)
            #expect(histogram.count == 0)
        }
        disk.releaseSyncs()
        await log.waitDurable(1)
        #expect(log.syncDurations.snapshot().count == 1)
        await log.close()
    }
}
