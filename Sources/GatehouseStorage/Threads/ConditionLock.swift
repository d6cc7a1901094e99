#if canImport(Glibc)
import Glibc
#endif

/// State behind a pthread mutex with a condition variable, for the log's own threads: the
/// flusher sleeps here until appenders queue work (or a sync falls due), the housekeeper until
/// it is asked for a segment. `Synchronization.Mutex` has no condition variable, hence this.
///
/// `@unchecked Sendable`: `state` is only touched with the mutex held.
final class ConditionLock<State>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var state: State

    init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        // Timed waits measure against the monotonic clock, so a wall-clock step cannot stall a sync.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        precondition(pthread_cond_init(condition, &attributes) == 0, "pthread_cond_init failed")
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deinitialize(count: 1)
        condition.deallocate()
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    func withLock<R, E: Error>(_ body: (inout State) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Sleeps (with the lock released) until `ready(state)` or until `timeout` passes, then runs
    /// `body` with the lock held. A nil timeout waits as long as it takes.
    func withLock<R>(waitingUntil ready: (State) -> Bool, timeout: Duration?, _ body: (inout State) -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if !ready(state) {
            if let timeout {
                var deadline = MonotonicTime.deadline(after: timeout)
                while !ready(state) {
                    if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
                }
            } else {
                while !ready(state) { pthread_cond_wait(condition, mutex) }
            }
        }
        return body(&state)
    }

    /// Wakes every thread waiting in ``withLock(waitingUntil:timeout:_:)``; call it after a change
    /// they may be waiting for.
    func broadcast() {
        pthread_cond_broadcast(condition)
    }
}

/// The monotonic clock, in nanoseconds.
enum MonotonicTime {
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    static func deadline(after duration: Duration) -> timespec {
        let target = now() + nanoseconds(duration)
        return Glibc.timespec(tv_sec: Int(target / 1_000_000_000), tv_nsec: Int(target % 1_000_000_000))
    }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }
}

/// Milliseconds since the Unix epoch, for names (`.broken-<ms>`) and headers.
enum WallTime {
    static func nowMs() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
