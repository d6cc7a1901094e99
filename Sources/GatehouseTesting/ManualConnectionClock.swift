public import GatehousePosix
import Synchronization

/// A connection clock that stands still until the test moves it (``ServerConfiguration/connectionClock``):
/// a connection's deadlines (idle, `hello`, linger) pass when the test says, not after a wait.
/// The server's housekeeping still runs on its own timer, a few times a second.
public final class ManualConnectionClock: ConnectionClock {
    private let now = Atomic<UInt64>(1_000_000_000)

    public init() {}

    public func nowNanoseconds() -> UInt64 { now.load(ordering: .acquiring) }

    public func advance(_ duration: Duration) {
        let nanoseconds = UInt64(duration.components.seconds) * 1_000_000_000 + UInt64(duration.components.attoseconds / 1_000_000_000)
        now.add(nanoseconds, ordering: .acquiringAndReleasing)
    }
}
