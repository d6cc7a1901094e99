/// Latencies in nanoseconds, counted in log-linear buckets (the HdrHistogram layout).
///
/// Why buckets rather than a list of samples: the memory is fixed before the run starts
/// (about 60 KiB per connection) however many requests complete, recording is an increment
/// with no allocation, and merging connections is a sum. Values below 256 ns are exact;
/// above, each power of two is cut into 128 buckets, so a reported percentile is within
/// 1/128 (0.8 %) of the true sample. The maximum is tracked exactly.
struct LatencyHistogram: Sendable {
    /// 2^subBucketBits buckets hold the exact values below 2^subBucketBits.
    private static let subBucketBits = 8
    private static let halfCount = 1 << (subBucketBits - 1)
    /// Enough buckets for any UInt64 value.
    private static let bucketCount = (64 - subBucketBits + 1) * halfCount + halfCount

    private var counts: [UInt64]
    private(set) var count: UInt64 = 0
    private(set) var maxNanoseconds: UInt64 = 0

    init() {
        counts = [UInt64](repeating: 0, count: Self.bucketCount)
    }

    @inline(__always)
    mutating func record(nanoseconds value: UInt64) {
        counts[Self.index(of: value)] &+= 1
        count &+= 1
        if value > maxNanoseconds { maxNanoseconds = value }
    }

    mutating func add(_ other: LatencyHistogram) {
        for index in counts.indices { counts[index] &+= other.counts[index] }
        count &+= other.count
        maxNanoseconds = max(maxNanoseconds, other.maxNanoseconds)
    }

    /// The latency that `fraction` (0...1) of the samples do not exceed: the highest value
    /// of the bucket holding that sample, capped by the exact maximum. 0 when empty.
    func percentile(_ fraction: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let rank = max(1, UInt64((fraction * Double(count)).rounded(.up)))
        var seen: UInt64 = 0
        for (index, bucketCount) in counts.enumerated() where bucketCount > 0 {
            seen += bucketCount
            if seen >= rank { return min(Self.highestValue(inBucket: index), maxNanoseconds) }
        }
        return maxNanoseconds
    }

    /// Values below 2^bits map to themselves; above, the bucket is the value's top `bits`
    /// significant bits plus a block per power of two, so consecutive values never skip one.
    @inline(__always)
    static func index(of value: UInt64) -> Int {
        let exact = UInt64(1) << subBucketBits
        guard value >= exact else { return Int(value) }
        let highestBit = 63 - value.leadingZeroBitCount
        let shift = highestBit - (subBucketBits - 1)
        return shift * halfCount + Int(value >> UInt64(shift))
    }

    static func highestValue(inBucket index: Int) -> UInt64 {
        let exact = 1 << subBucketBits
        guard index >= exact else { return UInt64(index) }
        let shift = index / halfCount - 1
        let top = UInt64(index % halfCount + halfCount)
        // The bucket covers [top << shift, (top + 1) << shift); the last value may not fit.
        guard top + 1 <= UInt64.max >> UInt64(shift) else { return .max }
        return ((top + 1) << UInt64(shift)) - 1
    }
}
