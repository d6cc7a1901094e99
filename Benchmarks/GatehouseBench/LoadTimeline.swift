import GatehousePosix
#if canImport(Glibc)
import Glibc
#endif

/// The run's clock, shared by every connection thread: monotonic nanoseconds, fixed before
/// the threads start, so no thread ever asks another what time the run ends.
struct LoadTimeline: Sendable {
    let startNanoseconds: UInt64
    /// Answers before this are warm-up: they keep the loop going but count nowhere.
    let measureFromNanoseconds: UInt64
    /// Answers from this on are not counted and the connection stops.
    let endNanoseconds: UInt64

    init(warmup: Duration, duration: Duration, startingAt start: UInt64 = LoadTimeline.now()) {
        startNanoseconds = start
        measureFromNanoseconds = start + Self.nanoseconds(warmup)
        endNanoseconds = measureFromNanoseconds + Self.nanoseconds(duration)
    }

    var measuredSeconds: Double {
        Double(endNanoseconds - measureFromNanoseconds) / 1e9
    }

    @inline(__always)
    static func now() -> UInt64 {
        EventLoop.monotonicNanoseconds()
    }

    /// Blocks this (non-pool) thread until the monotonic clock reaches `deadline`.
    static func sleep(until deadline: UInt64) {
        while true {
            let now = Self.now()
            guard now < deadline else { return }
            let remaining = deadline - now
            var request = timespec(tv_sec: Int(remaining / 1_000_000_000), tv_nsec: Int(remaining % 1_000_000_000))
            _ = nanosleep(&request, nil)
        }
    }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}
