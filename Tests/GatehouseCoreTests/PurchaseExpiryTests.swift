import GatehouseBase
@testable import GatehouseCore
import Testing

// DESIGN.md, "Subscription life and entitlements": time moves too. When `expires_ms` passes for
// an `active` or `billing_retry` subscription, or `grace_expires_ms` for one in `grace`, with no
// renewal, the server marks it `expired` and emits EXPIRATION; a promotional grant ends at its
// `expires_ms`. The clock here is only the `nowMs` each call is given.

private typealias C = PurchaseCatalogue

@Suite("expireDue ends subscriptions at their deadline, not before, and only once")
struct SubscriptionExpiryByTime {
    /// A profile owning s1, active until 100 000.
    static func world(gracePeriodMs: Int64 = 0) throws -> (PurchaseWorld, ProfileID) {
        var world = PurchaseWorld(gracePeriodMs: gracePeriodMs)
        let owner = try world.create()
        try world.report(owner, C.subscription("s1", expiresMs: 100_000))
        return (world, owner)
    }

    @Test func anActiveSubscriptionExpiresAtItsExpiry() throws {
        var (world, owner) = try Self.world()
        #expect(world.state.purchases.nextDeadlineMs == 100_000)
        #expect(world.state.expireDue(nowMs: 99_999).changes.isEmpty)
        let batch = world.expire(atMs: 100_000)
        #expect(batch.atMs == 100_000)
        #expect(batch.recordedTypes == [.expiration])
        #expect(world.subscription("s1")?.subscription.status == .expired)
        let event = try #require(world.feed.last)
        #expect(event.type == .expiration)
        #expect(event.profileID == owner)
        #expect(event.atMs == 100_000)
        #expect(event.detail("original_transaction_id") == .string("s1"))
        #expect(world.profile(owner).cursor == world.state.sequence)
        // Nothing is due again, now or later.
        #expect(world.state.expireDue(nowMs: 100_000).changes.isEmpty)
        #expect(world.state.expireDue(nowMs: 10_000_000).changes.isEmpty)
        #expect(world.state.purchases.nextDeadlineMs == nil)
        #expect(world.entitlement("pro", of: owner)?.isActive == false)
    }

    @Test func aSubscriptionInGraceExpiresAtTheEndOfGraceNotAtItsExpiry() throws {
        var (world, owner) = try Self.world(gracePeriodMs: 20_000)
        try world.notify(C.notification("n1", "s1", atMs: 99_000, .billingIssue(graceExpiresMs: nil)))
        #expect(world.subscription("s1")?.subscription.status == .grace)
        #expect(world.state.purchases.nextDeadlineMs == 120_000)
        #expect(world.expire(atMs: 100_000).changes.isEmpty)
        #expect(world.expire(atMs: 119_999).changes.isEmpty)
        world.nowMs = 110_000
        #expect(world.entitlement("pro", of: owner)?.isActive == true)
        let batch = world.expire(atMs: 120_000)
        #expect(batch.recordedTypes == [.expiration])
        #expect(world.subscription("s1")?.subscription.status == .expired)
        #expect(world.subscription("s1")?.subscription.graceExpiresMs == nil)
        #expect(world.profile(owner).cursor == world.state.sequence)
        #expect(world.state.expireDue(nowMs: 120_000).changes.isEmpty)
    }

    @Test func aGraceTheStoreNamesIsTheDeadline() throws {
        var (world, _) = try Self.world(gracePeriodMs: 20_000)
        try world.notify(C.notification("n1", "s1", atMs: 99_000, .billingIssue(graceExpiresMs: 105_000)))
        #expect(world.state.purchases.nextDeadlineMs == 105_000)
        #expect(world.expire(atMs: 104_999).changes.isEmpty)
        #expect(world.expire(atMs: 105_000).recordedTypes == [.expiration])
    }

    @Test func aSubscriptionInBillingRetryExpiresAtItsExpiry() throws {
        var (world, owner) = try Self.world(gracePeriodMs: 0)
        try world.notify(C.notification("n1", "s1", atMs: 99_000, .billingIssue(graceExpiresMs: nil)))
        #expect(world.subscription("s1")?.subscription.status == .billingRetry)
        #expect(world.state.purchases.nextDeadlineMs == 100_000)
        #expect(world.expire(atMs: 99_999).changes.isEmpty)
        #expect(world.expire(atMs: 100_000).recordedTypes == [.expiration])
        #expect(world.subscription("s1")?.subscription.status == .expired)
        #expect(world.profile(owner).cursor == world.state.sequence)
    }

    @Test func aRenewalBeforeTheDeadlinePreventsExpiry() throws {
        var (world, owner) = try Self.world()
        world.nowMs = 99_000
        try world.notify(C.notification("n1", "s1", atMs: 99_000, .renewal(C.term("s1b", purchasedMs: 100_000, expiresMs: 200_000))))
        #expect(world.state.purchases.nextDeadlineMs == 200_000)
        #expect(world.expire(atMs: 100_000).changes.isEmpty)
        #expect(world.expire(atMs: 199_999).changes.isEmpty)
        #expect(world.subscription("s1")?.subscription.status == .active)
        #expect(world.entitlement("pro", of: owner)?.isActive == true)
        #expect(world.expire(atMs: 200_000).recordedTypes == [.expiration])
    }

    @Test func aRecoveryFromGraceMovesTheDeadlineBack() throws {
        var (world, _) = try Self.world(gracePeriodMs: 20_000)
        try world.notify(C.notification("n1", "s1", atMs: 99_000, .billingIssue(graceExpiresMs: nil)))
        try world.notify(C.notification("n2", "s1", atMs: 99_500, .recover(C.term("s1b", purchasedMs: 100_000, expiresMs: 200_000))))
        #expect(world.state.purchases.nextDeadlineMs == 200_000)
        #expect(world.expire(atMs: 120_000).changes.isEmpty)
    }

    @Test func aRenewalDeliveredAfterTheTimerExpiredItBringsItBack() throws {
        var (world, owner) = try Self.world()
        world.expire(atMs: 100_500)
        #expect(world.subscription("s1")?.subscription.status == .expired)
        // The store dated the renewal before the server's expiry; it arrives late.
        try world.notify(C.notification("n1", "s1", atMs: 99_900, .renewal(C.term("s1b", purchasedMs: 100_000, expiresMs: 200_000))))
        #expect(world.subscription("s1")?.subscription.status == .active)
        #expect(world.state.purchases.nextDeadlineMs == 200_000)
        #expect(world.entitlement("pro", of: owner)?.isActive == true)
    }

    @Test(arguments: [SubscriptionEvent.expire, .revoke, .refund(transactionID: "s1", fraction: 1)])
    func anEndedSubscriptionHasNoDeadline(_ event: SubscriptionEvent) throws {
        var (world, _) = try Self.world()
        try world.notify(C.notification("n1", "s1", atMs: 50_000, event))
        #expect(world.state.purchases.nextDeadlineMs == nil)
        #expect(world.expire(atMs: 1_000_000).changes.isEmpty)
    }

    @Test func anUnownedSubscriptionExpiresForNobody() throws {
        var world = PurchaseWorld()
        try world.notify(C.purchaseNotification("n1", C.subscription("s1", expiresMs: 100_000, token: fixedToken(1))))
        let batch = world.expire(atMs: 100_000)
        #expect(batch.recordedEvents.map(\.1) == [nil])
        #expect(world.feed.last?.profileID == nil)
        #expect(world.subscription("s1")?.subscription.status == .expired)
    }

    @Test func whatFellDueWhileTheServerWasDownExpiresInOneBatchOrderedByDeadline() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        try world.report(owner, C.subscription("s3", expiresMs: 30_000))
        try world.report(owner, C.subscription("s1", expiresMs: 10_000))
        try world.report(owner, C.subscription("s2", product: "premium_monthly", expiresMs: 20_000))
        try world.report(owner, C.subscription("s4", expiresMs: 500_000))
        let batch = world.expire(atMs: 300_000)
        #expect(batch.recordedTypes == [.expiration, .expiration, .expiration])
        let expired = world.feed.suffix(3).map { $0.detail("original_transaction_id") }
        #expect(expired == [.string("s1"), .string("s2"), .string("s3")])
        #expect(world.subscription("s4")?.subscription.status == .active)
        #expect(world.state.purchases.nextDeadlineMs == 500_000)
        #expect(world.state.expireDue(nowMs: 300_000).changes.isEmpty)
    }
}

@Suite("A promotional grant with an end expires at it; a revoked or lifetime one never does")
struct GrantExpiryByTime {
    @Test func aGrantExpiresAtItsEnd() throws {
        var world = PurchaseWorld()
        let profile = try world.create()
        try world.grant(profile, "extra", expiresMs: 50_000)
        #expect(world.state.purchases.nextDeadlineMs == 50_000)
        world.nowMs = 49_999
        #expect(world.entitlement("extra", of: profile)?.isActive == true)
        #expect(world.state.expireDue(nowMs: 49_999).changes.isEmpty)
        let batch = world.expire(atMs: 50_000)
        #expect(batch.recordedTypes == [.expiration])
        let event = try #require(world.feed.last)
        #expect(event.type == .expiration)
        #expect(event.profileID == profile)
        #expect(event.detail("store") == .string("promotional"))
        #expect(event.detail("entitlement") == .string("extra"))
        #expect(world.state.purchases.grant(of: profile, entitlement: "extra")?.lapsed == true)
        #expect(world.profile(profile).cursor == world.state.sequence)
        #expect(world.entitlement("extra", of: profile)?.isActive == false)
        #expect(world.state.purchases.nextDeadlineMs == nil)
        #expect(world.state.expireDue(nowMs: 1_000_000).changes.isEmpty)
    }

    @Test func aRevokedGrantNeverExpires() throws {
        var world = PurchaseWorld()
        let profile = try world.create()
        try world.grant(profile, "extra", expiresMs: 50_000)
        try world.revoke(profile, "extra")
        #expect(world.state.purchases.nextDeadlineMs == nil)
        #expect(world.expire(atMs: 1_000_000).changes.isEmpty)
        #expect(world.events(.expiration).isEmpty)
    }

    @Test func aReplacedGrantExpiresOnlyAtItsNewEnd() throws {
        var world = PurchaseWorld()
        let profile = try world.create()
        try world.grant(profile, "extra", expiresMs: 50_000)
        try world.grant(profile, "extra", expiresMs: 80_000)
        #expect(world.state.purchases.nextDeadlineMs == 80_000)
        #expect(world.expire(atMs: 60_000).changes.isEmpty)
        #expect(world.expire(atMs: 80_000).recordedTypes == [.expiration])
        try world.grant(profile, "extra", expiresMs: 100_000)
        try world.grant(profile, "extra", expiresMs: nil)
        #expect(world.state.purchases.nextDeadlineMs == nil)
        #expect(world.expire(atMs: 10_000_000).changes.isEmpty)
    }

    @Test func aDeletedProfilesGrantNeverExpires() throws {
        var world = PurchaseWorld()
        let profile = try world.create()
        try world.grant(profile, "extra", expiresMs: 50_000)
        try world.delete(profile)
        #expect(world.state.purchases.nextDeadlineMs == nil)
        #expect(world.expire(atMs: 60_000).changes.isEmpty)
    }
}

@Suite("nextDeadlineMs follows the earliest live item")
struct NextDeadline {
    @Test func theTimerWalksThroughSubscriptionsAndGrantsInOrder() throws {
        var world = PurchaseWorld(gracePeriodMs: 4_000)
        let owner = try world.create()
        #expect(world.state.purchases.nextDeadlineMs == nil)
        try world.report(owner, C.subscription("s1", expiresMs: 30_000))
        try world.report(owner, C.subscription("s2", product: "premium_monthly", expiresMs: 20_000))
        try world.grant(owner, "extra", expiresMs: 25_000)
        try world.report(owner, C.oneTime("p1"))
        #expect(world.state.purchases.nextDeadlineMs == 20_000)
        // A billing issue on s2 gives it grace until 24 000: still the earliest.
        try world.notify(C.notification("n1", "s2", atMs: 19_000, .billingIssue(graceExpiresMs: nil)))
        #expect(world.state.purchases.nextDeadlineMs == 24_000)
        #expect(world.expire(atMs: 24_000).recordedTypes == [.expiration])
        #expect(world.state.purchases.nextDeadlineMs == 25_000)
        #expect(world.expire(atMs: 25_000).recordedTypes == [.expiration])
        #expect(world.state.purchases.nextDeadlineMs == 30_000)
        // A renewal moves s1's deadline past a new grant's end.
        try world.notify(C.notification("n2", "s1", atMs: 29_000, .renewal(C.term("s1b", purchasedMs: 30_000, expiresMs: 60_000))))
        try world.grant(owner, "extra", expiresMs: 40_000)
        #expect(world.state.purchases.nextDeadlineMs == 40_000)
        #expect(world.expire(atMs: 40_000).recordedTypes == [.expiration])
        #expect(world.state.purchases.nextDeadlineMs == 60_000)
        #expect(world.expire(atMs: 60_000).recordedTypes == [.expiration])
        #expect(world.state.purchases.nextDeadlineMs == nil)
        #expect(world.state.purchases.due(nowMs: Int64.max).isEmpty)
    }

    @Test func aDueListIsReadOnlyAndMatchesWhatExpires() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        try world.report(owner, C.subscription("s1", expiresMs: 10_000))
        try world.grant(owner, "extra", expiresMs: 10_000)
        let due = world.state.purchases.due(nowMs: 10_000)
        #expect(due == [.grant(owner, entitlement: "extra"), .subscription(C.key("s1"))]
            || due == [.subscription(C.key("s1")), .grant(owner, entitlement: "extra")])
        #expect(world.state.purchases.due(nowMs: 10_000) == due)
        #expect(world.expire(atMs: 10_000).recordedTypes.count == 2)
        #expect(world.state.purchases.due(nowMs: 10_000).isEmpty)
    }
}
