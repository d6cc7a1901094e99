import GatehousePosix

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

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}
