import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The server's idea of "now", in milliseconds since the Unix epoch. Rules never read the time
/// themselves: they are handed this clock's reading, so tests can move it. What waits for a time
/// (a project's expiry timer) waits through the clock too, so a test clock wakes it when moved
/// and the same timer runs in tests as in production.
public protocol ServerClock: Sendable {
    func nowMs() -> Int64
    /// Returns once the clock reads `deadlineMs` or later; throws `CancellationError` when the
    /// task is cancelled first.
    func sleep(untilMs deadlineMs: Int64) async throws
}

/// Wall-clock time.
public struct SystemServerClock: ServerClock {
    public init() {}

    public func nowMs() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// Sleeps until the wall clock reads `deadlineMs`: again if it was set back meanwhile.
    public func sleep(untilMs deadlineMs: Int64) async throws {
        while case let left = deadlineMs - nowMs(), left > 0 {
            try await Task.sleep(for: .milliseconds(left))
        }
    }
}

/// A clock that stands still until told to move (`--test-clock`, `clock.advance`), so tests
/// exercise expiry and timestamps without sleeping. Those who sleep on it wake when a move
/// reaches their deadline.
public final class ManualServerClock: ServerClock {
    private struct Sleeper {
        let id: UInt64
        let deadlineMs: Int64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var nowMs: Int64
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    public init(startMs: Int64) {
        self.state = Mutex(State(nowMs: startMs))
    }

    public func nowMs() -> Int64 { state.withLock { $0.nowMs } }

    /// Moves the clock forward by `milliseconds` (never back), wakes the sleepers it brings to
    /// their deadlines, and answers the new time.
    @discardableResult
    public func advance(byMs milliseconds: Int64) -> Int64 {
        precondition(milliseconds >= 0, "a clock never goes back")
        let (now, woken) = state.withLock { state -> (Int64, [Sleeper]) in
            state.nowMs += milliseconds
            let now = state.nowMs
            let woken = state.sleepers.filter { $0.deadlineMs <= now }
            state.sleepers.removeAll { $0.deadlineMs <= now }
            return (now, woken)
        }
        for sleeper in woken { sleeper.continuation.resume() }
        return now
    }

    public func sleep(untilMs deadlineMs: Int64) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        // The handler and the registration take the same lock: whichever comes second sees the
        // other (a task is marked cancelled before its handler runs).
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.nowMs >= deadlineMs { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadlineMs: deadlineMs, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// How many are sleeping on the clock (tests: a timer is armed).
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }
}
