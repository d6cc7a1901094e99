import GatehouseBase
@testable import GatehouseCore
import Testing

// DESIGN.md, "Subscription life and entitlements", through `holdings(of:nowMs:)`: an entitlement
// is active while any live purchase or grant of the profile gives it, the answer shows the source
// that lasts longest, and lapsed entitlements stay listed. PROTOCOL.md, `entitlement.grant` and
// `entitlement.revoke`.

private typealias C = PurchaseCatalogue

@Suite("Holdings show, per entitlement, the live source that lasts longest")
struct HoldingsSourceChoice {
    @Test func aNonConsumableOutlastsASubscription() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        try world.report(owner, C.subscription("s1", expiresMs: 100_000))
        #expect(world.entitlement("pro", of: owner)?.source == .subscription)
        #expect(world.entitlement("pro", of: owner)?.expiresMs == 100_000)
        try world.report(owner, C.oneTime("p1"))
        let pro = try #require(world.entitlement("pro", of: owner))
        #expect(pro.isActive)
        #expect(pro.source == .oneTimePurchase)
        #expect(pro.productID == "lifetime")
        #expect(pro.expiresMs == nil)
        let holdings = world.holdings(owner)
        #expect(holdings.subscriptions.map(\.originalTransactionID) == ["s1"])
        #expect(holdings.purchases.map(\.transactionID) == ["p1"])
    }

    @Test func aGrantLastingLongerThanTheSubscriptionIsShown() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        try world.report(owner, C.subscription("s1", expiresMs: 100_000))
        try world.grant(owner, "pro", expiresMs: 80_000)
        #expect(world.entitlement("pro", of: owner)?.source == .subscription)
        try world.grant(owner, "pro", expiresMs: 150_000)
        let pro = try #require(world.entitlement("pro", of: owner))
        #expect(pro.source == .promotional)
        #expect(pro.store == "promotional")
        #expect(pro.expiresMs == 150_000)
        // Once the grant is revoked the subscription is what remains.
        try world.revoke(owner, "pro")
        #expect(world.entitlement("pro", of: owner)?.source == .subscription)
        #expect(world.entitlement("pro", of: owner)?.isActive == true)
    }

    @Test func aLapsedSourceGivesWayToALiveOne() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        try world.report(owner, C.subscription("s1", expiresMs: 100_000))
        try world.grant(owner, "pro", expiresMs: 50_000)
        world.expire(atMs: 100_000)
        world.nowMs = 100_000
        #expect(world.entitlement("pro", of: owner)?.isActive == false)
        try world.report(owner, C.subscription("s2", product: "pro_yearly", purchasedMs: 100_000, expiresMs: 400_000))
        #expect(world.entitlement("pro", of: owner)?.isActive == true)
        #expect(world.entitlement("pro", of: owner)?.productID == "pro_yearly")
    }

    @Test func lapsedEntitlementsAreListedInactive() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        try world.report(owner, C.subscription("s1", product: "premium_monthly", expiresMs: 100_000))
        try world.report(owner, C.oneTime("p1"))
        try world.grant(owner, "extra", expiresMs: 50_000)
        try world.notify(C.notification("n1", "p1", atMs: 2_000, .refund(transactionID: "p1", fraction: 1)))
        world.expire(atMs: 100_000)
        let entitlements = world.holdings(owner).entitlements
        #expect(entitlements.map(\.entitlementID) == ["extra", "premium", "pro"])
        #expect(entitlements.allSatisfy { !$0.isActive })
        #expect(entitlements.map(\.source) == [.promotional, .subscription, .oneTimePurchase])
    }

    @Test func aConsumableGrantsNothing() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        try world.report(owner, C.oneTime("c1", product: "coins"))
        #expect(world.holdings(owner).purchases.map(\.transactionID) == ["c1"])
        #expect(world.holdings(owner).entitlements.isEmpty)
    }

    @Test func aSubscriptionInGraceStaysActiveWithABillingIssue() throws {
        var world = PurchaseWorld(gracePeriodMs: 20_000)
        let owner = try world.create()
        try world.report(owner, C.subscription("s1", expiresMs: 100_000))
        try world.notify(C.notification("n1", "s1", atMs: 99_000, .billingIssue(graceExpiresMs: nil)))
        world.nowMs = 110_000
        let pro = try #require(world.entitlement("pro", of: owner))
        #expect(pro.isActive)
        #expect(pro.billingIssue)
        #expect(pro.graceExpiresMs == 120_000)
    }

    @Test func anotherProfilesPurchasesAreNotInTheHoldings() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        let other = try world.create()
        try world.report(owner, C.subscription("s1"))
        try world.grant(owner, "extra", expiresMs: nil)
        let holdings = world.holdings(other)
        #expect(holdings.subscriptions.isEmpty && holdings.purchases.isEmpty && holdings.entitlements.isEmpty)
    }
}

@Suite("entitlement.grant and entitlement.revoke")
struct GrantAndRevoke {
    @Test func aGrantReplacesAnEarlierGrant() throws {
        var world = PurchaseWorld()
        let profile = try world.create()
        try world.grant(profile, "extra", expiresMs: 50_000)
        world.nowMs = 2_000
        let decision = try world.grant(profile, "extra", expiresMs: nil)
        #expect(decision.profileID == profile)
        #expect(world.state.purchases.grants(of: profile) == [PromotionalGrant(entitlementID: "extra", grantedMs: 2_000, expiresMs: nil)])
        #expect(world.events(.promotionalGrant).count == 2)
        #expect(world.feed.last?.detail("entitlement") == .string("extra"))
        #expect(world.feed.last?.detail("expires_ms") == nil)
        #expect(world.entitlement("extra", of: profile)?.expiresMs == nil)
        #expect(world.profile(profile).cursor == world.state.sequence)
    }

    @Test func aGrantRecordsItsEnd() throws {
        var world = PurchaseWorld()
        let profile = try world.create()
        try world.grant(profile, "extra", expiresMs: 50_000)
        #expect(world.feed.last?.type == .promotionalGrant)
        #expect(world.feed.last?.profileID == profile)
        #expect(world.feed.last?.detail("expires_ms") == .int(50_000))
    }

    @Test func aGrantThroughAnAliasGoesToTheProfileItResolvesTo() throws {
        var world = PurchaseWorld(login: .alias)
        let identified = try world.create("alice")
        let anonymous = try world.create()
        try world.identify(anonymous, "alice")
        try world.grant(anonymous, "extra", expiresMs: nil)
        #expect(world.state.purchases.grants(of: identified).count == 1)
        try world.revoke(anonymous, "extra")
        #expect(world.state.purchases.grant(of: identified, entitlement: "extra")?.revoked == true)
    }

    @Test func aRevokeEndsTheGrantAndKeepsItListed() throws {
        var world = PurchaseWorld()
        let profile = try world.create()
        try world.grant(profile, "extra", expiresMs: nil)
        let decision = try world.revoke(profile, "extra")
        #expect(decision.batch.recordedTypes == [.promotionalRevoke])
        #expect(world.feed.last?.detail("entitlement") == .string("extra"))
        #expect(world.entitlement("extra", of: profile)?.isActive == false)
        #expect(world.profile(profile).cursor == world.state.sequence)
        // Revoking again: nothing to revoke.
        let again = try world.state.revokeEntitlement(profile: profile, entitlement: "extra", nowMs: world.nowMs)
        #expect(again.batch.changes.isEmpty)
    }

    @Test func aRevokeWithNoGrantChangesNothingAndLeavesStorePurchases() throws {
        var world = PurchaseWorld()
        let profile = try world.create()
        try world.report(profile, C.subscription("s1"))
        let before = world.state
        let decision = try world.revoke(profile, "pro")
        #expect(decision.batch.changes.isEmpty)
        #expect(world.state == before)
        #expect(world.entitlement("pro", of: profile)?.isActive == true)
    }

    @Test func anEntitlementTheConfigDoesNotNameIsNotFound() throws {
        var world = PurchaseWorld()
        let profile = try world.create()
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.grant(profile, "gold", expiresMs: nil) } == .notFound)
        #expect(rejectionCode { () throws(GatehouseError) in try world.revoke(profile, "gold") } == .notFound)
        #expect(world.state == before)
    }

    @Test(arguments: [Int64(0), 999, 1_000])
    func anEndNotAfterTheClockIsABadRequest(_ expiresMs: Int64) throws {
        var world = PurchaseWorld()
        let profile = try world.create()
        world.nowMs = 1_000
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.grant(profile, "extra", expiresMs: expiresMs) } == .badRequest)
        #expect(world.state == before)
    }

    @Test func anUnknownProfileIsNotFound() throws {
        var world = PurchaseWorld()
        _ = try world.create()
        let unknown = ProfileID.make(tag: world.state.profileTag, random: SeededRandomSource(seed: 404))
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.grant(unknown, "extra", expiresMs: nil) } == .notFound)
        #expect(rejectionCode { () throws(GatehouseError) in try world.revoke(unknown, "extra") } == .notFound)
        #expect(world.state == before)
    }
}
