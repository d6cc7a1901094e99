#if canImport(Glibc)
import Glibc
#endif

/// A plain OS thread. Blocking work (epoll_wait, pwrite, fdatasync, preallocation) runs on
/// these, never on the Swift concurrency pool: with two cores, one blocked pool thread stalls
/// half the server.
public struct OSThread: Sendable {
    private let handle: pthread_t

    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Starts `body` on a new thread; ``join()`` or ``detach()`` it.
    public static func start(_ body: @escaping @Sendable () -> Void) -> OSThread {
        let box = Unmanaged.passRetained(Box(body))
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, box.toOpaque())
        precondition(status == 0, "pthread_create failed: \(status)")
        return OSThread(handle: thread)
    }

    /// Starts `body` on a thread nobody waits for.
    public static func detached(_ body: @escaping @Sendable () -> Void) {
        start(body).detach()
    }

    public func join() {
        pthread_join(handle, nil)
    }

    public func detach() {
        pthread_detach(handle)
    }

    /// Whether the caller runs on this thread.
    public var isCurrent: Bool { pthread_equal(handle, pthread_self()) != 0 }
}
