import GatehouseOutbound
import Synchronization

/// A retry clock that never really waits: a sleep moves it forward at once and is written down,
/// so a test reads the schedule a sender kept without spending it.
final class VirtualRetryClock: RetryClock {
    private let state = Mutex((now: Duration.zero, sleeps: [Duration]()))

    func now() -> Duration { state.withLock { $0.now } }

    func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        state.withLock { state in
            state.now += duration
            state.sleeps.append(duration)
        }
    }

    /// Every wait asked for, in order.
    var sleeps: [Duration] { state.withLock { $0.sleeps } }
}

/// A wall clock in UNIX milliseconds that a test moves.
final class ManualWallClock: Sendable {
    private let milliseconds: Mutex<Int64>

    init(milliseconds: Int64 = 1_767_225_600_000) {  // 2026-01-01
        self.milliseconds = Mutex(milliseconds)
    }

    func now() -> Int64 { milliseconds.withLock { $0 } }

    func advance(seconds: Int64) {
        milliseconds.withLock { $0 += seconds * 1000 }
    }
}
