#if canImport(Glibc)
import Glibc
#endif

/// Work split over the machine's cores, for the big independent pieces of a snapshot (its
/// sections, its chunks): compressing or inflating a 400 MiB body on two cores takes half as
/// long as on one. Blocks the caller until every piece is done: call it from a thread of your
/// own (the snapshot writer's), not from the Swift concurrency pool.
///
/// The caller takes the first share and threads of its own the others. Not Dispatch's
/// `concurrentPerform`: on Linux it hands shares to the global queue's workers, which are the
/// Swift concurrency pool's threads, so a snapshot's compression, its fsync and its rename ran
/// there, stalling every actor meanwhile.
public enum Parallel {
    /// Cores online, at least 1.
    public static let cores = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))

    /// Calls `body(index)` for every index in `0..<count`, spread over up to `cores` threads,
    /// and answers the results in index order. `makeContext` makes one value per thread (a
    /// compressor) that the thread's calls share.
    public static func map<Context, T>(
        _ count: Int, makeContext: @escaping () -> Context, _ body: @escaping (inout Context, Int) -> T
    ) -> [T] {
        guard count > 0 else { return [] }
        let workers = min(cores, count)
        let results = UnsafeMutableBufferPointer<T?>.allocate(capacity: count)
        results.initialize(repeating: nil)
        defer {
            _ = results.deinitialize()
            results.deallocate()
        }
        let work = UncheckedBox(value: Work(makeContext: makeContext, body: body, results: results))
        let share: @Sendable (Int) -> Void = { worker in
            let work = work.value
            var context = work.makeContext()
            // Interleaved, so workers finish together when pieces cost alike.
            for index in stride(from: worker, to: count, by: workers) {
                work.results[index] = work.body(&context, index)
            }
        }
        let helpers = (1..<workers).map { worker in OSThread.start(named: "parallel") { share(worker) } }
        share(0)
        for helper in helpers { helper.join() }
        return results.map { $0! }
    }

    /// Runs each of `bodies` once, side by side, and answers their results in order.
    public static func run<T>(_ bodies: [() -> T]) -> [T] {
        map(bodies.count, makeContext: { () }) { _, index in bodies[index]() }
    }

    private struct Work<Context, T> {
        let makeContext: () -> Context
        let body: (inout Context, Int) -> T
        let results: UnsafeMutableBufferPointer<T?>
    }
}

/// Hands a value to other threads when the caller guarantees they use it safely (each
/// worker of ``Parallel/map(_:makeContext:_:)`` touches only its own indices).
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
}
