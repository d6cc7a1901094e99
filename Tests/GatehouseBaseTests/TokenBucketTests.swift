import GatehouseBase
import Testing

/// A token bucket admits its capacity at once, then its rate as time passes, and never more
/// than its capacity however long it waits.
@Suite struct TokenBucketTests {
    static func take(_ bucket: inout TokenBucket, nowMs: Int64, rate: Int64, capacity: Int64) -> Bool {
        bucket.take(nowMs: nowMs, ratePerSecond: rate, capacity: capacity)
    }

    /// Takes until refused at `nowMs`; answers how many were taken (at most `limit`).
    static func takeAll(_ bucket: inout TokenBucket, nowMs: Int64, rate: Int64, capacity: Int64, limit: Int = 100_000)
        -> Int
    {
        var taken = 0
        while taken < limit, bucket.take(nowMs: nowMs, ratePerSecond: rate, capacity: capacity) { taken += 1 }
        return taken
    }

    @Test func aNewBucketIsFull() {
        var bucket = TokenBucket()
        #expect(Self.takeAll(&bucket, nowMs: 5_000, rate: 3, capacity: 30) == 30)
        #expect(!Self.take(&bucket, nowMs: 5_000, rate: 3, capacity: 30))
    }

    @Test func eachSecondAddsTheRate() {
        var bucket = TokenBucket()
        _ = Self.takeAll(&bucket, nowMs: 0, rate: 3, capacity: 30)
        #expect(Self.takeAll(&bucket, nowMs: 1_000, rate: 3, capacity: 30) == 3)
        #expect(Self.takeAll(&bucket, nowMs: 3_000, rate: 3, capacity: 30) == 6)
    }

    /// Thousandths are kept: three tokens a second make one every 333⅓ ms, however often asked.
    @Test func partsOfATokenAddUp() {
        var bucket = TokenBucket()
        _ = Self.takeAll(&bucket, nowMs: 0, rate: 3, capacity: 30)
        var taken = 0
        for nowMs in stride(from: Int64(1), through: 10_000, by: 1) {
            if bucket.take(nowMs: nowMs, ratePerSecond: 3, capacity: 30) { taken += 1 }
        }
        #expect(taken == 30)
        #expect(!Self.take(&bucket, nowMs: 10_333, rate: 3, capacity: 30))
        #expect(Self.take(&bucket, nowMs: 10_334, rate: 3, capacity: 30))
    }

    @Test func aLongWaitFillsToTheCapacityOnly() {
        var bucket = TokenBucket()
        _ = Self.takeAll(&bucket, nowMs: 0, rate: 1_000, capacity: 10_000)
        #expect(Self.takeAll(&bucket, nowMs: 3_600_000, rate: 1_000, capacity: 10_000) == 10_000)
    }

    /// Clock readings at the ends of the range neither trap nor overflow the count.
    @Test func extremeReadingsAreSafe() {
        var bucket = TokenBucket()
        let rate = TokenBucket.capacityMax
        #expect(Self.take(&bucket, nowMs: .min, rate: rate, capacity: rate))
        #expect(Self.take(&bucket, nowMs: .max, rate: rate, capacity: rate))
        #expect(Self.take(&bucket, nowMs: .min, rate: rate, capacity: rate))
        #expect(Self.take(&bucket, nowMs: .max, rate: 1, capacity: 1))
    }

    /// A wall clock set back fills nothing and does not trap; time counts again from its reading.
    @Test func aClockThatGoesBackFillsNothing() {
        var bucket = TokenBucket()
        _ = Self.takeAll(&bucket, nowMs: 1_000_000, rate: 2, capacity: 20)
        #expect(!Self.take(&bucket, nowMs: 0, rate: 2, capacity: 20))
        #expect(!Self.take(&bucket, nowMs: 499, rate: 2, capacity: 20))
        #expect(Self.take(&bucket, nowMs: 500, rate: 2, capacity: 20))
    }

    /// The rate and capacity are the caller's at each take: a smaller capacity caps what is
    /// there, a higher rate fills faster from then on.
    @Test func aChangedSettingAppliesFromTheNextTake() {
        var bucket = TokenBucket()
        #expect(Self.take(&bucket, nowMs: 0, rate: 10, capacity: 100))
        #expect(Self.takeAll(&bucket, nowMs: 0, rate: 1, capacity: 5) == 5)
        #expect(Self.takeAll(&bucket, nowMs: 1_000, rate: 50, capacity: 500) == 50)
    }
}
