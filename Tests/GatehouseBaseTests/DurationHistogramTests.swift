import GatehouseBase
import Synchronization
import Testing

/// Durations counted into Prometheus's cumulative buckets: an observation counts under every
/// bound it does not exceed, and the count is the `+Inf` bucket.
@Suite struct DurationHistograms {
    @Test func anObservationCountsUnderEveryBoundItDoesNotExceed() {
        let histogram = DurationHistogram(bounds: [0.001, 0.01, 1])
        histogram.observe(nanoseconds: 1_000_000)  // exactly on the first bound: under it (`le`)
        histogram.observe(nanoseconds: 1_000_001)
        histogram.observe(nanoseconds: 0)
        histogram.observe(nanoseconds: 5_000_000_000)  // past every bound: only in +Inf
        let snapshot = histogram.snapshot()
        #expect(snapshot.bounds == [0.001, 0.01, 1])
        #expect(snapshot.cumulativeCounts == [2, 3, 3])
        #expect(snapshot.count == 4)
        #expect(snapshot.sumSeconds == 5.002000001)
    }

    @Test func aHistogramNobodyObservedIsAllZeros() {
        let snapshot = DurationHistogram(bounds: DurationHistogram.storageBounds).snapshot()
        #expect(snapshot == HistogramSnapshot(bounds: DurationHistogram.storageBounds,
                                              cumulativeCounts: Array(repeating: 0, count: DurationHistogram.storageBounds.count),
                                              count: 0, sumSeconds: 0))
    }

    @Test func theStandardBoundsAscend() {
        for bounds in [DurationHistogram.requestBounds, DurationHistogram.storageBounds] {
            #expect(bounds == bounds.sorted())
            #expect(Set(bounds).count == bounds.count)
        }
        #expect(DurationHistogram.requestBounds.first == 0.00001 && DurationHistogram.requestBounds.last == 2.5)
        #expect(DurationHistogram.storageBounds.first == 0.0001 && DurationHistogram.storageBounds.last == 10)
    }

    @Test func aSnapshotTakenWhileOthersObserveNeverShowsABucketAboveTheCount() async {
        let histogram = DurationHistogram(bounds: DurationHistogram.requestBounds)
        let writing = Atomic<Bool>(true)
        let inconsistent = Atomic<Int>(0)
        let snapshots = Atomic<Int>(0)
        await onThreads(3) { thread in
            if thread == 0 {
                // The scrape: reads until the writers are done, and once after.
                repeat {
                    let snapshot = histogram.snapshot()
                    snapshots.add(1, ordering: .relaxed)
                    if snapshot.cumulativeCounts != snapshot.cumulativeCounts.sorted()
                        || snapshot.cumulativeCounts.last! > snapshot.count
                    {
                        inconsistent.add(1, ordering: .relaxed)
                    }
                } while writing.load(ordering: .acquiring)
                return
            }
            for value in 0..<50_000 { histogram.observe(nanoseconds: UInt64(value % 40) * 100_000) }
            if thread == 2 { writing.store(false, ordering: .releasing) }
        }
        #expect(inconsistent.load(ordering: .relaxed) == 0)
        #expect(snapshots.load(ordering: .relaxed) > 0)
    }

    @Test func eachHistogramOfAnArrayKeepsItsOwnObservations() {
        let histograms = HistogramArray(count: 3, bounds: [0.001, 1])
        #expect(histograms.count == 3)
        #expect(!(0..<3).contains(where: histograms.hasObservations))
        histograms.observe(1, nanoseconds: 2_000_000)
        histograms.observe(1, nanoseconds: 500)
        histograms.observe(2, nanoseconds: 0)
        #expect((0..<3).map(histograms.hasObservations) == [false, true, true])
        #expect(histograms.snapshot(0) == HistogramSnapshot(bounds: [0.001, 1], cumulativeCounts: [0, 0], count: 0, sumSeconds: 0))
        #expect(histograms.snapshot(1) == HistogramSnapshot(bounds: [0.001, 1], cumulativeCounts: [1, 2], count: 2, sumSeconds: 0.0020005))
        #expect(histograms.snapshot(2) == HistogramSnapshot(bounds: [0.001, 1], cumulativeCounts: [1, 1], count: 1, sumSeconds: 0))
    }

    @Test func observationsFromManyThreadsAreAllCounted() async {
        let histograms = HistogramArray(count: 2, bounds: DurationHistogram.requestBounds)
        await onThreads(4) { thread in
            for value in 0..<10_000 { histograms.observe(thread % 2, nanoseconds: UInt64(value) * 1_000) }
        }
        for index in 0..<2 {
            let snapshot = histograms.snapshot(index)
            #expect(snapshot.count == 20_000)
            // 0 µs … 9,999 µs, twice: everything at or under 5 ms is 0…5,000 µs.
            #expect(snapshot.cumulativeCounts[DurationHistogram.requestBounds.firstIndex(of: 0.005)!] == 2 * 5_001)
        }
    }
}
