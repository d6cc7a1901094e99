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
            consume: { seen.append(contentsOf: $0) })
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
                consume: { seen.append(contentsOf: $0) })
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
                consume: { batch in
                    for item in batch {
                        if item == failingAt { throw Failure(at: item) }
                        seen.append(item)
                    }
                })
        }
        #expect(seen.count == failingAt && seen.elementsEqual(0..<failingAt))
        // The producer stopped at a send after the failure: at most the batches it may run
        // ahead, and the one it was filling, were made; never the whole run.
        #expect(produced.count < failingAt + Pipeline.batchItems * (Pipeline.batchesAhead + 3))
    }
}

/// A consumer looking ahead sees every item far, then near, before its turn, and takes every
/// item once, in order.
@Suite struct LookaheadTests {
    enum Step: Equatable {
        case far(Int)
        case near(Int)
        case consumed(Int)
    }

    @Test(arguments: [0, 1, Pipeline.Lookahead.nearItems, Pipeline.Lookahead.farItems + 1, Pipeline.batchItems])
    func everyItemIsSeenFarThenNearBeforeItsTurn(_ count: Int) {
        var steps: [Step] = []
        Pipeline.Lookahead.forEach(Array(0..<count), look: { item, distance in
            steps.append(distance == .far ? .far(item) : .near(item))
        }) { steps.append(.consumed($0)) }
        #expect(steps.compactMap { if case .consumed(let item) = $0 { item } else { nil } } == Array(0..<count))
        for item in 0..<count {
            let far = steps.firstIndex(of: .far(item))
            let near = steps.firstIndex(of: .near(item))
            let consumed = steps.firstIndex(of: .consumed(item))
            #expect(far != nil && near != nil && far! < near! && near! < consumed!, "item \(item)")
            #expect(steps.filter { $0 == .far(item) || $0 == .near(item) }.count == 2, "item \(item) is seen twice")
        }
    }

    @Test func itemsAreSeenTheirDistanceAhead() {
        var seenBefore: [Int: (far: Int, near: Int)] = [:]
        var consumed = 0
        var firstFar: [Int: Int] = [:]
        var firstNear: [Int: Int] = [:]
        let count = Pipeline.Lookahead.farItems * 4
        Pipeline.Lookahead.forEach(Array(0..<count), look: { item, distance in
            if distance == .far { firstFar[item] = consumed } else { firstNear[item] = consumed }
        }) { item in
            consumed += 1
            seenBefore[item] = (firstFar[item]!, firstNear[item]!)
        }
        // Past the first ones, an item is seen when the items `farItems` and `nearItems` before it are next.
        let item = Pipeline.Lookahead.farItems * 2
        #expect(seenBefore[item]?.far == item - Pipeline.Lookahead.farItems)
        #expect(seenBefore[item]?.near == item - Pipeline.Lookahead.nearItems)
    }

    @Test func aFailingTurnEndsTheWalk() {
        var consumed: [Int] = []
        #expect(throws: PipelineTests.Failure(at: 5)) {
            try Pipeline.Lookahead.forEach(Array(0..<20), look: { _, _ in }) { item in
                if item == 5 { throw PipelineTests.Failure(at: 5) }
                consumed.append(item)
            }
        }
        #expect(consumed == [0, 1, 2, 3, 4])
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
