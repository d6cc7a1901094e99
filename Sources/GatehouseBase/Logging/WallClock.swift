#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the real-time clock for log timestamps. Logs want the wall clock (what an operator
/// correlates with other systems), not a monotonic clock, even though it can step.
public enum WallClock {
    public static func now() -> Duration {
        var spec = timespec()
        // CLOCK_REALTIME cannot fail with a valid pointer; a zero timestamp is the safe fallback.
        guard clock_gettime(CLOCK_REALTIME, &spec) == 0 else { return .zero }
        return .seconds(Int64(spec.tv_sec)) + .nanoseconds(Int64(spec.tv_nsec))
    }
}
