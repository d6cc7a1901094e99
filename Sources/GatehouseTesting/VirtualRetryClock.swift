public import GatehouseOutbound
import Synchronization

/// A retry clock that never really waits: a sleep moves it forward at once and is written down,
/// so a test reads the schedule a sender kept without spending it.
public final class VirtualRetryClock: RetryClock {
    private let state = Mutex((now: Duration.zero, sleeps: [Duration]()))

    public init() {}

    public func now() -> Duration { state.withLock { $0.now } }

    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        state.withLock { state in
            state.now += duration
            state.sleeps.append(duration)
        }
    }

    /// Every wait asked for, in order.
    public var sleeps: [Duration] { state.withLock { $0.sleeps } }
}
