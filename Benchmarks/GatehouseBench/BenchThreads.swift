#if canImport(Glibc)
import Glibc
#endif

/// A plain OS thread for blocking work. Setup blocks on answers and the run's coordinator
/// sleeps and joins; doing either on the Swift concurrency pool would starve the in-process
/// server, which runs its projects there (two cores: one blocked pool thread is half the server).
enum BenchThreads {
    /// Runs blocking `body` on a new thread and suspends (without blocking) until it is done.
    static func detached<R: Sendable>(_ body: @escaping @Sendable () -> R) async -> R {
        await withCheckedContinuation { continuation in
            spawn { continuation.resume(returning: body()) }
        }
    }

    private final class Entry: Sendable {
        let body: @Sendable () -> Void

        init(body: @escaping @Sendable () -> Void) {
            self.body = body
        }
    }

    private static func spawn(_ body: @escaping @Sendable () -> Void) {
        let entry = Unmanaged.passRetained(Entry(body: body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { raw in
            Unmanaged<Entry>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, entry)
        precondition(status == 0, "pthread_create failed with \(status)")
        pthread_detach(thread)
    }
}
