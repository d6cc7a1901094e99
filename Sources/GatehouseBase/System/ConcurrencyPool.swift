#if canImport(Glibc)
import Glibc
#endif

/// Whether the calling thread belongs to the Swift concurrency pool, for checks in tests and
/// test support that blocking work never runs there. Swift has no API for it, so two signs:
/// the caller runs a task, or the thread is a worker of one of Dispatch's global queues (its
/// name ends in `-qos`, as `com.apple.root.default-qos`), which on Linux are the pool's
/// threads and also run `DispatchQueue.global()` and `concurrentPerform` work. A serial queue's
/// worker ends in `-qos.overcommit` and is not the pool. Threads inherit the name of the
/// thread that starts them, so every ``OSThread`` here is named.
public enum ConcurrencyPool {
    public static var isCurrentThread: Bool {
        withUnsafeCurrentTask { $0 != nil } || currentThreadName.hasSuffix("-qos")
    }

    /// The calling thread's name as the kernel keeps it (at most 15 bytes).
    static var currentThreadName: String {
        let descriptor = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return "" }
        return String(decoding: bytes[..<count], as: UTF8.self).trimmingSuffix("\n")
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
