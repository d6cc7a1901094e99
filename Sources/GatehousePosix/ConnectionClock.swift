/// Where a server's connections read the time their deadlines are counted in (the idle timeout,
/// the deadline to say `hello`, the linger after the last answer): monotonic nanoseconds. Tests
/// put a clock of their own here and move it, so a deadline of ten seconds passes at once.
public protocol ConnectionClock: Sendable {
    func nowNanoseconds() -> UInt64
}

/// The monotonic clock, which never jumps with the wall clock.
public struct MonotonicConnectionClock: ConnectionClock {
    public init() {}

    public func nowNanoseconds() -> UInt64 { EventLoop.monotonicNanoseconds() }
}
