@testable import GatehouseCore
import Testing

// The two store events the App Store adds to the subscription's state machine: an upgrade (a new
// product and a new term at once) and a renewal-date extension (a term's end moves later). Both
// keep the subscription's rules: a repeat changes nothing and a late delivery never rolls a
// newer state back.

private typealias F = SubscriptionFixture

@Suite("An upgrade changes the product and starts its term at once")
struct SubscriptionUpgrade {
    static let upgradeTerm = SubscriptionTerm(transactionID: "t2", purchasedMs: 5_000, expiresMs: 40_000, price: 29.99)

    @Test func theProductAndTheTermChangeTogether() {
        let transition = F.purchased().apply(.upgrade(newProductID: "pro_yearly", term: Self.upgradeTerm), atMs: 5_000,
                                             gracePeriodMs: 0)
        let subscription = transition.subscription
        #expect(subscription.productID == "pro_yearly")
        #expect(subscription.currentTerm == Self.upgradeTerm)
        #expect(subscription.expiresMs == 40_000)
        #expect(subscription.status == .active)
        #expect(transition.eventTypes == [.productChange])
    }

    @Test func aRepeatChangesNothing() {
        let once = F.purchased().applying(.upgrade(newProductID: "pro_yearly", term: Self.upgradeTerm), atMs: 5_000)
        let twice = once.apply(.upgrade(newProductID: "pro_yearly", term: Self.upgradeTerm), atMs: 5_000, gracePeriodMs: 0)
        #expect(twice.subscription == once)
        #expect(twice.effects.isEmpty)
    }

    @Test func aStaleUpgradeKeepsTheNewerProductButBringsItsTerm() {
        let changed = F.purchased().applying(.productChange(newProductID: "premium_monthly"), atMs: 6_000)
        let transition = changed.apply(.upgrade(newProductID: "pro_yearly", term: Self.upgradeTerm), atMs: 5_000,
                                       gracePeriodMs: 0)
        #expect(transition.subscription.productID == "premium_monthly")
        #expect(transition.subscription.term(id: "t2") != nil)
        #expect(transition.eventTypes == [.renewal])
    }

    @Test func anUpgradeOfAnExpiredSubscriptionMakesItActive() {
        let expired = F.subscription(.expired)
        let transition = expired.apply(.upgrade(newProductID: "pro_yearly", term: Self.upgradeTerm), atMs: 5_000,
                                       gracePeriodMs: 0)
        #expect(transition.subscription.status == .active)
        #expect(transition.subscription.expiresMs == 40_000)
    }
}

@Suite("A renewal-date extension moves a term's end later, never earlier")
struct SubscriptionExtension {
    static func extended(_ expiresMs: Int64, id: String = "t1") -> SubscriptionEvent {
        .extend(SubscriptionTerm(transactionID: id, purchasedMs: 1_000, expiresMs: expiresMs, price: 9.99))
    }

    @Test func theCurrentTermAndTheSubscriptionEndLater() {
        let transition = F.purchased().apply(Self.extended(25_000), atMs: 5_000, gracePeriodMs: 0)
        #expect(transition.subscription.expiresMs == 25_000)
        #expect(transition.subscription.currentTerm?.expiresMs == 25_000)
        #expect(transition.subscription.terms.count == 1)
        #expect(transition.subscription.status == .active)
        // The document's expires_ms is the change; an active subscription records no event.
        #expect(transition.effects.isEmpty)
        #expect(!transition.subscription.looksTheSame(as: F.purchased()))
    }

    @Test func anEarlierOrRepeatedExtensionChangesNothing() {
        let extended = F.purchased().applying(Self.extended(30_000), atMs: 5_000)
        for event in [Self.extended(30_000), Self.extended(20_000), Self.extended(9_000)] {
            for atMs: Int64 in [4_000, 5_000, 6_000] {
                let transition = extended.apply(event, atMs: atMs, gracePeriodMs: 0)
                #expect(transition.subscription.looksTheSame(as: extended))
                #expect(transition.effects.isEmpty)
            }
        }
    }

    @Test func deliveredInEitherOrderTwoExtensionsEndAtTheLater() {
        let a = Self.extended(20_000)
        let b = Self.extended(30_000)
        let ab = F.purchased().applying(a, atMs: 3_000).applying(b, atMs: 4_000)
        let ba = F.purchased().applying(b, atMs: 4_000).applying(a, atMs: 3_000)
        #expect(ab == ba)
        #expect(ab.expiresMs == 30_000)
    }

    @Test func aSubscriptionExpiredByTheClockComesBackWithARenewalEvent() throws {
        let lapsed = try #require(F.purchased().expireIfDue(nowMs: 10_000)).subscription
        #expect(lapsed.status == .expired)
        let transition = lapsed.apply(Self.extended(25_000), atMs: 11_000, gracePeriodMs: 0)
        #expect(transition.subscription.status == .active)
        #expect(transition.subscription.expiresMs == 25_000)
        #expect(transition.eventTypes == [.renewal])
        #expect(transition.effects.first?.details == [EventDetail("reason", .string("renewal_extended"))])
    }

    @Test func anExtensionOlderThanTheStoresExpiryDoesNotBringItBack() {
        let expired = F.subscription(.expired)  // the store expired it at 2 000
        let transition = expired.apply(Self.extended(25_000), atMs: 1_800, gracePeriodMs: 0)
        #expect(transition.subscription.status == .expired)
        #expect(transition.subscription.expiresMs == 25_000)
        #expect(transition.effects.isEmpty)
    }

    @Test func revokedStaysRevokedAndRefundedStaysRefunded() {
        for status: SubscriptionStatus in [.revoked, .refunded] {
            let transition = F.subscription(status).apply(Self.extended(25_000), atMs: 5_000, gracePeriodMs: 0)
            #expect(transition.subscription.status == status)
            #expect(transition.effects.isEmpty)
        }
    }

    @Test func graceWithoutAStoreDateFollowsTheNewEnd() {
        let inGrace = F.purchased().applying(.billingIssue(graceExpiresMs: nil), atMs: 2_000)
        #expect(inGrace.graceExpiresMs == 10_000 + F.gracePeriodMs)
        let extended = inGrace.applying(Self.extended(25_000), atMs: 3_000)
        #expect(extended.status == .grace)
        #expect(extended.graceExpiresMs == 25_000 + F.gracePeriodMs)
    }

    @Test func anOlderTermExtendedPastTheCurrentOneBecomesCurrent() {
        let renewed = F.purchased().applying(.renewal(F.nextTerm), atMs: 10_000)
        let extended = renewed.applying(Self.extended(50_000, id: "t1"), atMs: 11_000)
        #expect(extended.currentTerm?.transactionID == "t1")
        #expect(extended.expiresMs == 50_000)
        #expect(extended.terms.map(\.transactionID) == ["t2", "t1"])
    }

    @Test func anExtensionOfAnOlderTermOnlyCompletesTheHistory() {
        let renewed = F.purchased().applying(.renewal(F.nextTerm), atMs: 10_000)
        let extended = renewed.applying(Self.extended(15_000, id: "t1"), atMs: 11_000)
        #expect(extended.term(id: "t1")?.expiresMs == 15_000)
        #expect(extended.expiresMs == 20_000)
        #expect(extended.currentTerm?.transactionID == "t2")
    }

    @Test func anUnknownTermIsAddedAsARenewal() {
        let transition = F.purchased().apply(.extend(F.nextTerm), atMs: 10_000, gracePeriodMs: 0)
        #expect(transition.subscription == F.purchased().applying(.renewal(F.nextTerm), atMs: 10_000, gracePeriodMs: 0))
        #expect(transition.eventTypes == [.renewal])
    }
}
