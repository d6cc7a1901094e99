/// What ``RetryingSender`` reads its deadline from and waits on. Tests put a clock of their own
/// here, which moves when slept on, so a schedule of seconds runs at once.
public protocol RetryClock: Sendable {
    /// Monotonic time since a start of the clock's choosing.
    func now() -> Duration
    /// Returns after `duration`; throws `CancellationError` when the task is cancelled first.
    func sleep(for duration: Duration) async throws
}

/// The monotonic clock; its sleeps suspend the task, never a thread.
public struct SystemRetryClock: RetryClock {
    private let start = ContinuousClock.now

    public init() {}

    public func now() -> Duration {
        start.duration(to: .now)
    }

    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}
