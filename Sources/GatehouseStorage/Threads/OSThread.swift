#if canImport(Glibc)
import Glibc
#endif

/// Starts a detached OS thread. The log's blocking work (pwrite, fdatasync, preallocation)
/// runs on these, never on the Swift concurrency pool: with two cores, one blocked pool thread
/// stalls half the server.
enum OSThread {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    static func start(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Box(body))
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
            box.body()
            return nil
        }, box.toOpaque())
        precondition(status == 0, "pthread_create failed: \(status)")
        pthread_detach(thread)
    }
}
