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

    /// Starts `body` on a new thread; ``join()`` or ``detach()`` it. The `name` (at most 15
    /// bytes kept) shows in `top -H`, `ps -L` and profilers. Always given: an unnamed thread
    /// would keep the name of the thread that started it, and one started from the concurrency
    /// pool would pass for a pool thread (``ConcurrencyPool``).
    public static func start(named name: String, _ body: @escaping @Sendable () -> Void) -> OSThread {
        let box = Unmanaged.passRetained(Box {
            setCurrentThreadName(name)
            body()
        })
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, box.toOpaque())
        precondition(status == 0, "pthread_create failed: \(status)")
        return OSThread(handle: thread)
    }

    /// Names the calling thread by writing its `comm` (what `pthread_setname_np` does, without
    /// the `_GNU_SOURCE` header the Glibc module lacks). Best effort: a failure leaves the name.
    private static func setCurrentThreadName(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY)
        guard descriptor >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }

    /// Starts `body` on a thread nobody waits for.
    public static func detached(named name: String, _ body: @escaping @Sendable () -> Void) {
        start(named: name, body).detach()
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
