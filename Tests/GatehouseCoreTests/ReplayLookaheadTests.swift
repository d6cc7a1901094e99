import GatehouseBase
@testable import GatehouseCore
import Testing

/// Replay asks memory for what a record will read before its turn (ProjectState's prefetch
/// steps): a hint that changes nothing, whatever the record names.
@Suite struct ReplayLookaheadTests {
    @Test func prefetchingABatchChangesNothing() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create("alice")
        try world.transact(owner, 50, key: "k1", reason: "first")
        let next = try world.state.transact(profile: owner, currency: CurrencyCatalogue.coins, amount: 5, key: "k2", reason: nil,
                                            nowMs: world.nowMs)
        // Names known and unknown: a deleted-looking profile, a currency never seen.
        let stranger = ProfileID(high: 1, low: 2, tag: world.state.profileTag)
        let odd = ProjectState.ChangeBatch([
            .balanceChanged(stranger, CurrencyMovement(currency: "NOPE", amount: 1, source: .transaction, ref: "r")),
            .idempotencyRecorded("k3", IdempotencyRecord(profile: stranger, currency: "NOPE", amount: 1, reason: nil,
                                                         transactionID: "vct_9_0", balance: 1, atMs: 0)),
        ], atMs: 0)
        var state = world.state
        for batch in [next.batch, odd, ProjectState.ChangeBatch([], atMs: 0)] {
            state.prefetchBuckets(for: batch)
            state.prefetchProfiles(for: batch)
        }
        #expect(state == world.state)
        try world.transact(owner, 5, key: "k2")
        #expect(world.balance(owner) == 55)
    }

    @Test func aHeldKeysFirstBucketNamesItsPosition() {
        var buckets = PositionBuckets()
        buckets.insert(hash: 0x1234_0005, position: 7, at: nil)
        #expect(buckets.likelyPosition(hash: 0x1234_0005) == 7)
        #expect(buckets.likelyPosition(hash: 0x9999_0005) == nil, "same bucket, other hash bits")
        #expect(buckets.likelyPosition(hash: 0x1234_0006) == nil, "an empty bucket")
        #expect(PositionBuckets().likelyPosition(hash: 1) == nil, "an empty table")
    }
}

/// The profiles a batch touched, noted without allocating for the first.
@Suite struct TouchedProfilesTests {
    private func id(_ n: Int) -> ProfileID { ProfileID(high: UInt64(n), low: 0, tag: 1) }

    @Test(arguments: [0, 1, 2, 9, 10, 30])
    func insertedProfilesComeBackSortedOnce(_ count: Int) {
        var touched = ProjectState.TouchedProfiles()
        for n in (0..<count).reversed() {
            touched.insert(id(n))
            touched.insert(id(n))
        }
        #expect(touched.sorted() == (0..<count).map(id))
    }

    @Test(arguments: [1, 2, 9, 10, 30])
    func removingTheFirstKeepsTheOthers(_ count: Int) {
        var touched = ProjectState.TouchedProfiles()
        for n in 0..<count { touched.insert(id(n)) }
        touched.remove(id(0))
        touched.remove(id(count + 5))
        #expect(touched.sorted() == (1..<count).map(id))
        touched.insert(id(0))
        #expect(touched.sorted() == (0..<count).map(id))
    }
}
