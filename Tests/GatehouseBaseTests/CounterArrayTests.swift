import GatehouseBase
import Synchronization
import Testing

/// Counters a server bumps on the request's road from any thread and a scrape reads.
@Suite struct Counters {
    @Test func aCounterStartsAtZeroAndAddsWhatItIsGiven() {
        let counters = CounterArray(count: 3)
        #expect(counters.count == 3)
        #expect((0..<3).map(counters.value) == [0, 0, 0])
        counters.add(1)
        counters.add(1, 41)
        counters.add(2, 7)
        #expect((0..<3).map(counters.value) == [0, 42, 7])
    }

    @Test func addsFromManyThreadsAtOnceAreNeverLost() async {
        let counters = CounterArray(count: 2)
        await onThreads(4) { thread in
            for _ in 0..<20_000 {
                counters.add(0)
                counters.add(1, UInt64(thread + 1))
            }
        }
        #expect(counters.value(0) == 80_000)
        #expect(counters.value(1) == 20_000 * (1 + 2 + 3 + 4))
    }

    @Test func anOwnerAddsWithoutLosingAnyWhileOthersRead() async {
        let counters = CounterArray(count: 1)
        let histograms = HistogramArray(count: 1, bounds: [0.001, 1])
        await onThreads(2) { thread in
            for _ in 0..<20_000 {
                if thread == 0 {
                    counters.addOwned(0)
                    histograms.observeOwned(0, nanoseconds: 2_000_000)
                } else {
                    // A reader never sees a torn or shrinking value.
                    _ = counters.value(0)
                    _ = histograms.snapshot(0)
                }
            }
        }
        #expect(counters.value(0) == 20_000)
        let snapshot = histograms.snapshot(0)
        #expect(snapshot.count == 20_000)
        #expect(snapshot.cumulativeCounts == [0, 20_000])
        #expect(snapshot.sumSeconds == 40)
    }

    @Test func manyObservationsOfOneDurationAtOnceCountAsThatMany() {
        let histograms = HistogramArray(count: 1, bounds: [0.001, 1])
        histograms.observeOwned(0, nanoseconds: 2_000_000, times: 16)
        histograms.observeOwned(0, nanoseconds: 500_000)
        let snapshot = histograms.snapshot(0)
        #expect(snapshot.cumulativeCounts == [1, 17])
        #expect(snapshot.count == 17)
        #expect(abs(snapshot.sumSeconds - 0.0325) < 1e-12)
    }

    @Test func theShardsOfOneSeriesAddUp() {
        let a = HistogramSnapshot(bounds: [1, 2], cumulativeCounts: [1, 3], count: 4, sumSeconds: 5)
        let b = HistogramSnapshot(bounds: [1, 2], cumulativeCounts: [0, 2], count: 2, sumSeconds: 1.5)
        #expect(a.adding(b) == HistogramSnapshot(bounds: [1, 2], cumulativeCounts: [1, 5], count: 6, sumSeconds: 6.5))
    }
}

/// Runs `body` on `count` threads of their own at once (never on the concurrency pool) and
/// returns when all have finished.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let running = Atomic<Int>(count)
        for thread in 0..<count {
            OSThread.detached(named: "metrics-writer") {
                body(thread)
                if running.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { continuation.resume() }
            }
        }
    }
}
