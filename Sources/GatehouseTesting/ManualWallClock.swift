import Synchronization

/// A wall clock in UNIX milliseconds that a test moves.
public final class ManualWallClock: Sendable {
    private let milliseconds: Mutex<Int64>

    public init(milliseconds: Int64 = 1_767_225_600_000) {  // 2026-01-01
        self.milliseconds = Mutex(milliseconds)
    }

    public func now() -> Int64 { milliseconds.withLock { $0 } }

    public func advance(seconds: Int64) {
        milliseconds.withLock { $0 += seconds * 1000 }
    }
}
