import Dispatch
import Synchronization

/// Two stages of one job on two cores: `produce` runs on a thread of its own and hands items,
/// in order, to `consume` on the caller's thread. Recovery reads, checks, inflates and decodes
/// the log ahead while the caller applies what is already decoded, so a replay costs the slower
/// of the two stages rather than their sum.
///
/// Blocks the caller until both stages are done: call it from a thread you own. `produce` and
/// `consume` may touch whatever they like, as long as nothing is touched by both: the producer
/// is joined before this returns, so nothing it used outlives the call on its thread.
public enum Pipeline {
    /// Items travel in batches, so the hand-off costs a lock per batch rather than per item.
    public static let batchItems = 256
    /// How many batches the producer may run ahead of the consumer (bounds the memory held).
    public static let batchesAhead = 16

    /// Runs `produce`, calling `consume` with the items it emits, in batches of up to
    /// ``batchItems``, in emission order, and answers what `produce` answered. The consumer gets
    /// whole batches so that it can see the items after the one at hand (``Lookahead``), and so
    /// that its loop over them runs in its own, specialized code.
    ///
    /// Errors keep their sequential meaning: if `produce` throws, every item it emitted before
    /// is consumed first and then its error is thrown; if `consume` throws, the producer is
    /// stopped at its next emit (no batch after is consumed) and `consume`'s error is thrown.
    /// On one core both stages simply run in turn on the caller's thread, an item a batch.
    public static func run<Item, Result>(
        produce: (_ emit: (Item) throws -> Void) throws -> Result,
        consume: (_ batch: [Item]) throws -> Void
    ) throws -> Result {
        guard Parallel.cores > 1 else {
            return try withoutActuallyEscaping(consume) { consume in try produce { item in try consume([item]) } }
        }
        return try withoutActuallyEscaping(produce) { produce in
            let channel = Channel<Item>()
            let producer = UncheckedSendable(value: produce)
            let outcome = Mutex<UncheckedSendable<Swift.Result<Result, any Error>>?>(nil)
            let thread = OSThread.start(named: "pipeline") {
                let produce = producer.value
                var batch: [Item] = []
                batch.reserveCapacity(batchItems)
                let result = Swift.Result<Result, any Error> {
                    do {
                        let value = try produce { item in
                            batch.append(item)
                            if batch.count == batchItems {
                                try channel.send(batch)
                                batch = []
                                batch.reserveCapacity(batchItems)
                            }
                        }
                        if !batch.isEmpty { try channel.send(batch) }
                        return value
                    } catch {
                        // What was emitted before the error is still consumed, then the error.
                        if !batch.isEmpty, !(error is Cancelled) { try? channel.send(batch) }
                        throw error
                    }
                }
                outcome.withLock { $0 = UncheckedSendable(value: result) }
                channel.finish()
            }
            var consumeError: (any Error)?
            while consumeError == nil, let batch = channel.receive() {
                do {
                    try consume(batch)
                } catch {
                    consumeError = error
                    channel.cancel()
                }
            }
            thread.join()
            if let consumeError { throw consumeError }
            // The producer stored its outcome before it finished the channel.
            guard let result = outcome.withLock({ $0 }) else { fatalError("the producer ended without an outcome") }
            return try result.value.get()
        }
    }

    /// How far ahead of its turn a consumer looks at an item of its batch: what consuming an
    /// item will read can be asked of memory while the items before it are consumed, so their
    /// cache misses overlap instead of coming one after another. A lookup that must read one
    /// place to learn the next (a hash bucket, then the element it names) asks for the first
    /// `far` ahead and the second `near`, once the first has arrived.
    public enum Lookahead: Sendable {
        /// ``farItems`` items before the item's turn.
        case far
        /// ``nearItems`` items before.
        case near

        public static let farItems = 16
        public static let nearItems = 8

        /// Calls `body` with every item of `items`, in order, having called `look` with each
        /// ``farItems`` and then ``nearItems`` items before its turn (the first ones, which have
        /// too few items before them, before the first turn). `look` must change nothing `body`
        /// reads: it only warms memory. Inlined into the caller, so that nothing is done per
        /// item through generic witnesses.
        @inlinable
        public static func forEach<Item>(_ items: [Item], look: (Item, Lookahead) -> Void, _ body: (Item) throws -> Void)
            rethrows
        {
            // Lent from the buffer: an array's subscript hands out a copy of each item (a retain
            // and a release of what it holds) for every call.
            try items.withUnsafeBufferPointer { items in
                let count = items.count
                for position in 0..<min(farItems, count) { look(items[position], .far) }
                for position in 0..<min(nearItems, count) { look(items[position], .near) }
                for position in 0..<count {
                    if position + farItems < count { look(items[position + farItems], .far) }
                    if position + nearItems < count { look(items[position + nearItems], .near) }
                    try body(items[position])
                }
            }
        }
    }

    /// The producer stops here once the consumer has failed.
    private struct Cancelled: Error {}

    /// A bounded queue of batches between one producer and one consumer.
    private final class Channel<Item>: @unchecked Sendable {
        private struct State {
            var batches: [[Item]] = []
            var head = 0
            var finished = false
            var cancelled = false
        }

        // The items themselves are only ever touched by one side at a time: the producer until
        // it sends a batch, the consumer after it receives it.
        private let state = Mutex(UncheckedSendable(value: State()))
        /// Counts batches (and the finish) waiting for the consumer.
        private let ready = DispatchSemaphore(value: 0)
        /// Counts room for batches the producer may still send. Made at 0 and raised: libdispatch
        /// traps when a semaphore is freed below the value it was made with.
        private let room = DispatchSemaphore(value: 0)

        init() {
            for _ in 0..<Pipeline.batchesAhead { room.signal() }
        }

        func send(_ batch: [Item]) throws {
            room.wait()
            let cancelled = state.withLock { box -> Bool in
                if box.value.cancelled { return true }
                box.value.batches.append(batch)
                return false
            }
            if cancelled { throw Cancelled() }
            ready.signal()
        }

        /// The producer is done (after its last send, or after failing).
        func finish() {
            state.withLock { $0.value.finished = true }
            ready.signal()
        }

        /// The next batch, or `nil` once the producer has finished and everything was received.
        func receive() -> [Item]? {
            ready.wait()
            let batch = state.withLock { box -> [Item]? in
                guard box.value.head < box.value.batches.count else { return nil }
                let batch = box.value.batches[box.value.head]
                box.value.batches[box.value.head] = []
                box.value.head += 1
                if box.value.head >= 64, box.value.head * 2 >= box.value.batches.count {
                    box.value.batches.removeFirst(box.value.head)
                    box.value.head = 0
                }
                return batch
            }
            if batch != nil { room.signal() }
            return batch
        }

        /// The consumer failed: the producer's next send throws, and a send waiting for room wakes.
        func cancel() {
            state.withLock { $0.value.cancelled = true }
            room.signal()
        }
    }
}

/// A value handed to another thread when the caller guarantees only one thread uses it at a time.
private struct UncheckedSendable<Value>: @unchecked Sendable {
    var value: Value
}
