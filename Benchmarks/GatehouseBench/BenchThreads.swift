#if canImport(Glibc)
import Glibc
#endif

/// Plain OS threads for blocking work. Setup blocks on answers and the run's coordinator
/// sleeps and joins; doing either on the Swift concurrency pool would starve the in-process
/// server, which runs its projects there (two cores: one blocked pool thread is half the server).
enum BenchThreads {
    /// Runs blocking `body` on a new thread and suspends (without blocking) until it is done.
    static func detached<R: Sendable>(_ body: @escaping @Sendable () -> R) async -> R {
        await withCheckedContinuation { continuation in
            pthread_detach(start { continuation.resume(returning: body()) })
        }
    }

    /// Runs `body(0)` ... `body(count - 1)` on `count` new threads at once and blocks until
    /// all have returned; answers their results in index order.
    static func runAll<R: Sendable>(count: Int, _ body: @escaping @Sendable (Int) -> R) -> [R] {
        let results = Results<R>(count: count)
        let threads = (0..<count).map { index in
            start { results.store(body(index), at: index) }
        }
        for thread in threads { pthread_join(thread, nil) }
        return results.values
    }

    /// Each thread writes only its own slot, and the joining thread reads them only after
    /// `pthread_join`, which orders those writes before the read. A raw buffer rather than an
    /// array: concurrent writes through an array property trip the exclusivity checks.
    private final class Results<R: Sendable>: @unchecked Sendable {
        private let slots: UnsafeMutableBufferPointer<R?>

        init(count: Int) {
            slots = .allocate(capacity: count)
            slots.initialize(repeating: nil)
        }

        deinit {
            slots.deinitialize()
            slots.deallocate()
        }

        func store(_ value: R, at index: Int) {
            slots[index] = value
        }

        var values: [R] { slots.map { $0! } }
    }

    private final class Entry: Sendable {
        let body: @Sendable () -> Void

        init(body: @escaping @Sendable () -> Void) {
            self.body = body
        }
    }

    private static func start(_ body: @escaping @Sendable () -> Void) -> pthread_t {
        let entry = Unmanaged.passRetained(Entry(body: body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { raw in
            Unmanaged<Entry>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, entry)
        precondition(status == 0, "pthread_create failed with \(status)")
        return thread
    }
}
