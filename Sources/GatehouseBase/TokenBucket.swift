/// A token bucket: it fills at `ratePerSecond` tokens a second up to `capacity`, and each thing
/// it admits takes one token. It starts full. Time is the caller's (milliseconds, from an
/// injected clock), so a test moves the clock instead of sleeping; the rate and capacity are the
/// caller's too, so a changed setting applies from the next take.
public struct TokenBucket: Sendable, Equatable {
    /// Thousandths of a token: a millisecond at any whole rate adds a whole number of them, so
    /// nothing is lost to rounding however often the bucket is asked.
    private var milliTokens: Int64 = 0
    /// When the bucket was last filled; `nil`: never asked, so full.
    private var filledAtMs: Int64?

    public init() {}

    /// The largest rate and capacity a bucket counts in thousandths without overflow, filling
    /// included.
    public static let capacityMax: Int64 = Int64.max / 4_000

    /// Takes a token if there is one, after filling the bucket for the time since the last take.
    /// A clock that went back (a wall clock set back) fills nothing and restarts from its reading.
    public mutating func take(nowMs: Int64, ratePerSecond: Int64, capacity: Int64) -> Bool {
        precondition(ratePerSecond > 0 && capacity > 0, "a bucket that can never admit anything")
        precondition(ratePerSecond <= Self.capacityMax && capacity <= Self.capacityMax, "thousandths that overflow")
        fill(nowMs: nowMs, ratePerSecond: ratePerSecond, capacity: capacity)
        guard milliTokens >= 1_000 else { return false }
        milliTokens -= 1_000
        return true
    }

    private mutating func fill(nowMs: Int64, ratePerSecond: Int64, capacity: Int64) {
        let full = capacity * 1_000
        defer { filledAtMs = nowMs }
        guard let filledAtMs else {
            milliTokens = full
            return
        }
        // Past the time an empty bucket takes to fill, more time adds nothing; capping it first
        // keeps the product below overflow for any clock reading.
        let fillMs = (capacity * 1_000 + ratePerSecond - 1) / ratePerSecond
        let elapsed = nowMs.subtractingReportingOverflow(filledAtMs)
        let elapsedMs = elapsed.overflow ? (nowMs > filledAtMs ? fillMs : 0) : min(max(0, elapsed.partialValue), fillMs)
        milliTokens = min(full, milliTokens + elapsedMs * ratePerSecond)
    }
}
