import GatehouseBase
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `Parallel` spreads a snapshot's pieces over the cores, on threads of its own: never on the
/// Swift concurrency pool, which the server's actors need meanwhile.
@Suite struct ParallelWork {
    @Test func noShareRunsOnTheConcurrencyPool() async {
        guard Parallel.cores > 1 else { return }
        let onThePool: [Bool] = await withCheckedContinuation { continuation in
            // Called from a thread of its own, as the snapshot writer calls it.
            OSThread.detached(named: "snapshot-io") {
                let started = Atomic<Int>(0)
                let answers = Parallel.map(2, makeContext: {}) { _, _ -> Bool in
                    // Neither share ends before both have started, so the caller cannot run
                    // both: one runs on another thread, whichever Parallel chose.
                    started.add(1, ordering: .relaxed)
                    while started.load(ordering: .relaxed) < 2 { sched_yield() }
                    return ConcurrencyPool.isCurrentThread
                }
                continuation.resume(returning: answers)
            }
        }
        #expect(onThePool == [false, false])
    }

    @Test func theConcurrencyPoolIsToldFromThreadsOfOurOwn() async {
        #expect(ConcurrencyPool.isCurrentThread, "a test runs as a task on the pool")
        let onAThreadOfItsOwn = await withCheckedContinuation { continuation in
            OSThread.detached(named: "elsewhere") { continuation.resume(returning: ConcurrencyPool.isCurrentThread) }
        }
        #expect(!onAThreadOfItsOwn)
    }
}
