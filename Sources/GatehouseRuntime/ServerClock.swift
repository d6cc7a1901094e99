import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The server's idea of "now", in milliseconds since the Unix epoch. Rules never read the time
/// themselves: they are handed this clock's reading, so tests can move it.
public protocol ServerClock: Sendable {
    func nowMs() -> Int64
    /// Whether time passes without anyone moving it. A project arms a timer for its next
    /// expiry only on such a clock; a test clock's expiries run when `clock.advance` moves it.
    var advancesOnItsOwn: Bool { get }
}

/// Wall-clock time.
public struct SystemServerClock: ServerClock {
    public init() {}

    public var advancesOnItsOwn: Bool { true }

    public func nowMs() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}

/// A clock that stands still until told to move (`--test-clock`, `clock.advance`), so tests
/// exercise expiry and timestamps without sleeping.
public final class ManualServerClock: ServerClock {
    private let current: Atomic<Int64>

    public init(startMs: Int64) {
        self.current = Atomic(startMs)
    }

    public func nowMs() -> Int64 { current.load(ordering: .acquiring) }

    public var advancesOnItsOwn: Bool { false }

    /// Moves the clock forward by `milliseconds` (never back) and answers the new time.
    @discardableResult
    public func advance(byMs milliseconds: Int64) -> Int64 {
        precondition(milliseconds >= 0, "a clock never goes back")
        return current.add(milliseconds, ordering: .acquiringAndReleasing).newValue
    }
}
