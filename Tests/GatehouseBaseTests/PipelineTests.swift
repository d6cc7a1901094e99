import GatehouseBase
import Synchronization
import Testing

/// Two stages on two threads keep the meaning of one loop: every item in order, the
/// producer's answer, and errors where a sequential run would have stopped.
@Suite struct PipelineTests {
    struct Failure: Error, Equatable {
        let at: Int
    }

    /// Counts across threads, for what the producer did after the consumer stopped.
    final class Counter: Sendable {
        let value = Atomic<Int>(0)
        func add() { value.add(1, ordering: .relaxed) }
        var count: Int { value.load(ordering: .relaxed) }
    }

    @Test(arguments: [0, 1, Pipeline.batchItems - 1, Pipeline.batchItems, Pipeline.batchItems * Pipeline.batchesAhead * 3 + 7])
    func everyItemArrivesInOrderAndTheProducersAnswerComesBack(_ count: Int) throws {
        var seen: [Int] = []
        let answer = try Pipeline.run(
            produce: { emit in
                for item in 0..<count { try emit(item) }
                return "made \(count)"
            },
            consume: { seen.append($0) })
        #expect(answer == "made \(count)")
        #expect(seen.count == count && seen.elementsEqual(0..<count))
    }

    @Test func theProducerRunsOnAnotherThreadWhenThereAreCores() throws {
        guard Parallel.cores > 1 else { return }
        let consumer = OSThreadIdentity.current
        let producer = try Pipeline.run(produce: { emit in
            try emit(0)
            return OSThreadIdentity.current
        }, consume: { _ in })
        #expect(producer != consumer)
    }

    @Test(arguments: [0, 1, 300, 5_000])
    func aProducerErrorComesAfterEverythingEmittedBeforeIt(_ failingAt: Int) {
        var seen: [Int] = []
        #expect(throws: Failure(at: failingAt)) {
            try Pipeline.run(
                produce: { emit in
                    for item in 0..<failingAt { try emit(item) }
                    throw Failure(at: failingAt)
                },
                consume: { seen.append($0) })
        }
        #expect(seen.count == failingAt && seen.elementsEqual(0..<failingAt))
    }

    @Test(arguments: [0, 299, 4_999])
    func aConsumerErrorStopsTheProducerAndNothingAfterItIsConsumed(_ failingAt: Int) {
        let produced = Counter()
        var seen: [Int] = []
        let total = 100_000
        #expect(throws: Failure(at: failingAt)) {
            try Pipeline.run(
                produce: { emit in
                    for item in 0..<total {
                        try emit(item)
                        produced.add()
                    }
                },
                consume: { item in
                    if item == failingAt { throw Failure(at: item) }
                    seen.append(item)
                })
        }
        #expect(seen.count == failingAt && seen.elementsEqual(0..<failingAt))
        // The producer stopped at a send after the failure: at most the batches it may run
        // ahead, and the one it was filling, were made; never the whole run.
        #expect(produced.count < failingAt + Pipeline.batchItems * (Pipeline.batchesAhead + 3))
    }
}

/// The calling thread, comparable.
private struct OSThreadIdentity: Equatable {
    let raw: UInt
    static var current: OSThreadIdentity { OSThreadIdentity(raw: UInt(pthread_self())) }
}

#if canImport(Glibc)
import Glibc
#endif
