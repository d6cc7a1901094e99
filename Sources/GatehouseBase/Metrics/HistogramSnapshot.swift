/// A histogram as a scrape reads it: Prometheus's cumulative buckets (`le`), the count (the
/// `+Inf` bucket) and the sum.
public struct HistogramSnapshot: Sendable, Equatable {
    /// Upper bounds in seconds, ascending.
    public var bounds: [Double]
    /// One per bound: the observations at or under it.
    public var cumulativeCounts: [UInt64]
    /// Every observation (the `+Inf` bucket); never less than a bucket.
    public var count: UInt64
    public var sumSeconds: Double

    public init(bounds: [Double], cumulativeCounts: [UInt64], count: UInt64, sumSeconds: Double) {
        self.bounds = bounds
        self.cumulativeCounts = cumulativeCounts
        self.count = count
        self.sumSeconds = sumSeconds
    }
}

extension HistogramSnapshot {
    /// The two together, as one histogram (the shards of one series, each owned by a thread).
    public func adding(_ other: HistogramSnapshot) -> HistogramSnapshot {
        precondition(bounds == other.bounds, "histograms with different bounds do not add up")
        return HistogramSnapshot(
            bounds: bounds, cumulativeCounts: zip(cumulativeCounts, other.cumulativeCounts).map { $0 &+ $1 },
            count: count &+ other.count, sumSeconds: sumSeconds + other.sumSeconds
        )
    }
}
