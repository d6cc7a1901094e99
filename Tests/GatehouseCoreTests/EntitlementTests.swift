@testable import GatehouseCore
import Testing

// DESIGN.md, "Subscription life and entitlements": "An entitlement is active while any purchase
// its profile owns grants it and is itself live: a subscription in `active` before `expires_ms`
// or in `grace` before `grace_expires_ms`, a non-consumable not refunded or revoked, a
// promotional grant not revoked and before its `expires_ms` (`null`: for life). The answer
// shows, per entitlement, the source that lasts longest."
// PROTOCOL.md, "Profiles": "Entitlements list every entitlement the profile ever had;
// `is_active` is computed against the server clock at the time of the answer."

private enum EntitlementFixture {
    static let config = ProjectConfig(
        entitlements: [EntitlementDefinition(id: "pro"), EntitlementDefinition(id: "extra"), EntitlementDefinition(id: "gold")],
        products: [
            ProductDefinition(id: "pro_monthly", type: .subscription, entitlements: ["pro"]),
            ProductDefinition(id: "pro_annual", type: .subscription, entitlements: ["pro", "extra"]),
            ProductDefinition(id: "pro_lifetime", type: .nonConsumable, entitlements: ["pro"]),
            ProductDefinition(id: "gold_pack", type: .consumable, entitlements: ["gold"]),
        ])

    /// Active from `purchasedMs` until `expiresMs`, dated by the store at `purchasedMs`.
    static func subscription(
        _ id: String = "s1", product: String = "pro_monthly", purchasedMs: Int64 = 1_000, expiresMs: Int64 = 10_000,
        store: String = "test", periodType: SubscriptionPeriodType = .normal
    ) -> Subscription {
        Subscription.purchased(
            store: store, originalTransactionID: id, productID: product,
            term: SubscriptionTerm(transactionID: id, purchasedMs: purchasedMs, expiresMs: expiresMs, price: 9.99),
            periodType: periodType, environment: .sandbox, atMs: purchasedMs
        ).subscription
    }

    static func purchase(
        _ id: String = "p1", product: String = "pro_lifetime", purchasedMs: Int64 = 1_000,
        refunded: Bool = false, revoked: Bool = false
    ) -> OneTimePurchase {
        OneTimePurchase(
            store: "test", transactionID: id, productID: product, purchasedMs: purchasedMs, price: 49.99,
            environment: .sandbox, refunded: refunded, revoked: revoked)
    }

    static func compute(
        config: ProjectConfig = config, _ subscriptions: [Subscription] = [], purchases: [OneTimePurchase] = [],
        grants: [PromotionalGrant] = [], nowMs: Int64
    ) -> [String: EntitlementView] {
        Entitlements.compute(config: config, subscriptions: subscriptions, purchases: purchases, grants: grants, nowMs: nowMs)
    }
}

extension Subscription {
    fileprivate func after(_ event: SubscriptionEvent, atMs: Int64, gracePeriodMs: Int64 = 0) -> Subscription {
        apply(event, atMs: atMs, gracePeriodMs: gracePeriodMs).subscription
    }
}

private typealias F = EntitlementFixture

@Suite struct EntitlementLivenessTests {
    @Test func activeSubscriptionShowsItsFieldsAndFlipsExactlyAtExpiry() {
        let subscription = F.subscription().after(.cancel, atMs: 1_500)
        let before = F.compute([subscription], nowMs: 9_999)
        #expect(Set(before.keys) == ["pro"])
        #expect(
            before["pro"]
                == EntitlementView(
                    entitlementID: "pro", isActive: true, source: .subscription, productID: "pro_monthly", store: "test",
                    expiresMs: 10_000, graceExpiresMs: nil, willRenew: false, periodType: "normal", billingIssue: false))
        let at = F.compute([subscription], nowMs: 10_000)
        #expect(at["pro"]?.isActive == false)
        #expect(at["pro"]?.expiresMs == 10_000)
    }

    @Test func trialPeriodTypeIsShown() {
        let views = F.compute([F.subscription(periodType: .trial)], nowMs: 5_000)
        #expect(views["pro"]?.periodType == "trial")
    }

    @Test(arguments: [SubscriptionEvent.expire, .refund(transactionID: "s1", fraction: 1), .revoke])
    func endedSubscriptionIsInactiveButListed(_ event: SubscriptionEvent) {
        let ended = F.subscription().after(event, atMs: 2_000)
        #expect(ended.status != .active)
        let views = F.compute([ended], nowMs: 3_000)
        #expect(views["pro"]?.isActive == false)
        #expect(views["pro"]?.source == .subscription)
        #expect(views["pro"]?.billingIssue == false)
    }

    @Test func billingRetryIsInactiveWithABillingIssue() {
        let retry = F.subscription().after(.billingIssue(graceExpiresMs: nil), atMs: 2_000, gracePeriodMs: 0)
        #expect(retry.status == .billingRetry)
        let view = F.compute([retry], nowMs: 3_000)["pro"]
        #expect(view?.isActive == false)
        #expect(view?.billingIssue == true)
    }

    @Test func graceIsActiveUntilGraceExpiry() {
        let grace = F.subscription().after(.billingIssue(graceExpiresMs: 15_000), atMs: 2_000)
        #expect(grace.status == .grace)
        let during = F.compute([grace], nowMs: 14_999)["pro"]
        #expect(during?.isActive == true)
        #expect(during?.billingIssue == true)
        #expect(during?.expiresMs == 10_000)
        #expect(during?.graceExpiresMs == 15_000)
        #expect(F.compute([grace], nowMs: 15_000)["pro"]?.isActive == false)
    }

    @Test func graceFromTheProjectsGracePeriodFollowsTheTerm() {
        let grace = F.subscription().after(.billingIssue(graceExpiresMs: nil), atMs: 9_000, gracePeriodMs: 3_000)
        #expect(F.compute([grace], nowMs: 12_999)["pro"]?.isActive == true)
        #expect(F.compute([grace], nowMs: 13_000)["pro"]?.isActive == false)
    }

    @Test func nonConsumableGrantsForLifeUntilRefundedOrRevoked() {
        let live = F.compute(purchases: [F.purchase()], nowMs: .max)["pro"]
        #expect(
            live
                == EntitlementView(
                    entitlementID: "pro", isActive: true, source: .oneTimePurchase, productID: "pro_lifetime",
                    store: "test", expiresMs: nil, graceExpiresMs: nil, willRenew: false, periodType: "normal",
                    billingIssue: false))
        #expect(F.purchase().isLive)
        #expect(F.purchase(refunded: true).isLive == false)
        #expect(F.purchase(revoked: true).isLive == false)
        #expect(F.compute(purchases: [F.purchase(refunded: true)], nowMs: 5_000)["pro"]?.isActive == false)
        #expect(F.compute(purchases: [F.purchase(revoked: true)], nowMs: 5_000)["pro"]?.isActive == false)
    }

    @Test func consumableNeverGrants() {
        let views = F.compute(purchases: [F.purchase(product: "gold_pack")], nowMs: 5_000)
        #expect(views.isEmpty)
    }

    @Test func oneTimePurchaseOfASubscriptionProductGrantsNothing() {
        #expect(F.compute(purchases: [F.purchase(product: "pro_monthly")], nowMs: 5_000).isEmpty)
    }

    @Test func promotionalGrantWithExpiryFlipsExactlyAtExpiry() {
        let grant = PromotionalGrant(entitlementID: "pro", grantedMs: 1_000, expiresMs: 8_000)
        #expect(grant.isLive(nowMs: 7_999))
        #expect(grant.isLive(nowMs: 8_000) == false)
        let during = F.compute(grants: [grant], nowMs: 7_999)["pro"]
        #expect(
            during
                == EntitlementView(
                    entitlementID: "pro", isActive: true, source: .promotional, productID: nil, store: "promotional",
                    expiresMs: 8_000, graceExpiresMs: nil, willRenew: false, periodType: "normal", billingIssue: false))
        #expect(F.compute(grants: [grant], nowMs: 8_000)["pro"]?.isActive == false)
    }

    @Test func revokedPromotionalGrantIsInactive() {
        let lifetime = PromotionalGrant(entitlementID: "pro", grantedMs: 1_000, expiresMs: nil, revoked: true)
        let dated = PromotionalGrant(entitlementID: "pro", grantedMs: 1_000, expiresMs: 8_000, revoked: true)
        #expect(F.compute(grants: [lifetime], nowMs: 2_000)["pro"]?.isActive == false)
        #expect(F.compute(grants: [dated], nowMs: 2_000)["pro"]?.isActive == false)
    }

    @Test func lifetimePromotionalGrantIsActiveForever() {
        let grant = PromotionalGrant(entitlementID: "pro", grantedMs: 1_000, expiresMs: nil)
        let view = F.compute(grants: [grant], nowMs: .max)["pro"]
        #expect(view?.isActive == true)
        #expect(view?.expiresMs == nil)
        #expect(view?.productID == nil)
        #expect(view?.store == Entitlements.promotionalStore)
    }
}

@Suite struct EntitlementChoiceTests {
    @Test func lifetimeNonConsumableOutlastsSubscriptionAndDatedGrant() {
        let views = F.compute(
            [F.subscription()], purchases: [F.purchase()],
            grants: [PromotionalGrant(entitlementID: "pro", grantedMs: 2_000, expiresMs: 50_000)], nowMs: 5_000)
        #expect(views["pro"]?.source == .oneTimePurchase)
        #expect(views["pro"]?.isActive == true)
        #expect(views["pro"]?.expiresMs == nil)
    }

    @Test func laterExpiryWinsBetweenSubscriptionAndGrant() {
        let subscription = F.subscription()  // until 10 000
        let longer = PromotionalGrant(entitlementID: "pro", grantedMs: 2_000, expiresMs: 20_000)
        let shorter = PromotionalGrant(entitlementID: "pro", grantedMs: 2_000, expiresMs: 6_000)
        #expect(F.compute([subscription], grants: [longer], nowMs: 5_000)["pro"]?.source == .promotional)
        #expect(F.compute([subscription], grants: [shorter], nowMs: 5_000)["pro"]?.source == .subscription)
        // Once the subscription ends, the longer grant still holds the entitlement.
        let later = F.compute([subscription], grants: [longer], nowMs: 15_000)["pro"]
        #expect(later?.isActive == true)
        #expect(later?.expiresMs == 20_000)
    }

    @Test func aLiveSourceBeatsALongerLapsedOne() {
        let revokedForLife = PromotionalGrant(entitlementID: "pro", grantedMs: 3_000, expiresMs: nil, revoked: true)
        let view = F.compute([F.subscription()], purchases: [F.purchase(refunded: true)], grants: [revokedForLife], nowMs: 5_000)["pro"]
        #expect(view?.isActive == true)
        #expect(view?.source == .subscription)
    }

    @Test func twoSubscriptionsTheLaterExpiryWinsInAnyOrder() {
        let monthly = F.subscription("s1", product: "pro_monthly", purchasedMs: 1_000, expiresMs: 10_000)
        let annual = F.subscription("s2", product: "pro_annual", purchasedMs: 500, expiresMs: 40_000)
        for order in [[monthly, annual], [annual, monthly]] {
            let views = F.compute(order, nowMs: 5_000)
            #expect(views["pro"]?.productID == "pro_annual")
            #expect(views["pro"]?.expiresMs == 40_000)
            #expect(views["extra"]?.productID == "pro_annual")
        }
    }

    @Test func graceLastsUntilGraceExpiryWhenComparing() {
        // Term to 10 000, grace to 15 000; the other is active to 12 000.
        let grace = F.subscription("s1", expiresMs: 10_000).after(.billingIssue(graceExpiresMs: 15_000), atMs: 2_000)
        let active = F.subscription("s2", purchasedMs: 1_500, expiresMs: 12_000)
        for order in [[grace, active], [active, grace]] {
            let early = F.compute(order, nowMs: 5_000)["pro"]
            #expect(early?.isActive == true)
            #expect(early?.graceExpiresMs == 15_000)
            #expect(early?.billingIssue == true)
        }
        // A grace ending sooner than the other's term loses.
        let shortGrace = F.subscription("s1", expiresMs: 10_000).after(.billingIssue(graceExpiresMs: 11_000), atMs: 2_000)
        let view = F.compute([shortGrace, active], nowMs: 5_000)["pro"]
        #expect(view?.productID == "pro_monthly")
        #expect(view?.graceExpiresMs == nil)
        #expect(view?.expiresMs == 12_000)
        #expect(view?.billingIssue == false)
    }

    @Test func tiesGoToSubscriptionThenPurchaseThenGrant() {
        let grant = PromotionalGrant(entitlementID: "pro", grantedMs: 9_000, expiresMs: 10_000)
        #expect(F.compute([F.subscription()], grants: [grant], nowMs: 5_000)["pro"]?.source == .subscription)
        let lifetimeGrant = PromotionalGrant(entitlementID: "pro", grantedMs: 9_000, expiresMs: nil)
        #expect(F.compute(purchases: [F.purchase()], grants: [lifetimeGrant], nowMs: 5_000)["pro"]?.source == .oneTimePurchase)
    }

    @Test func equalSubscriptionsTieOnRecencyThenIDInAnyOrder() {
        let a = F.subscription("a", purchasedMs: 1_000, expiresMs: 10_000)
        let b = F.subscription("b", product: "pro_annual", purchasedMs: 1_000, expiresMs: 10_000)
        let c = F.subscription("c", product: "pro_annual", purchasedMs: 2_000, expiresMs: 10_000)
        #expect(F.compute([a, b], nowMs: 5_000)["pro"]?.productID == "pro_monthly")
        #expect(F.compute([b, a], nowMs: 5_000)["pro"]?.productID == "pro_monthly")
        #expect(F.compute([a, c], nowMs: 5_000)["pro"]?.productID == "pro_annual")
        #expect(F.compute([c, a], nowMs: 5_000)["pro"]?.productID == "pro_annual")
    }
}

@Suite struct EntitlementListingTests {
    @Test func lapsedEntitlementsStayListedShowingTheMostRecentSource() {
        let old = F.subscription("s1", product: "pro_annual", purchasedMs: 1_000, expiresMs: 10_000)
        let newer = F.subscription("s2", product: "pro_monthly", purchasedMs: 20_000, expiresMs: 30_000)
        let grant = PromotionalGrant(entitlementID: "pro", grantedMs: 12_000, expiresMs: 40_000, revoked: true)
        for order in [[old, newer], [newer, old]] {
            let views = F.compute(order, purchases: [F.purchase(purchasedMs: 5_000, refunded: true)], grants: [grant], nowMs: 50_000)
            #expect(Set(views.keys) == ["pro", "extra"])
            #expect(views["pro"]?.isActive == false)
            #expect(views["pro"]?.productID == "pro_monthly")
            #expect(views["pro"]?.expiresMs == 30_000)
            #expect(views["extra"]?.isActive == false)
            #expect(views["extra"]?.productID == "pro_annual")
        }
    }

    @Test func anEntitlementReturnsWhenANewSourceGoesLive() {
        let lapsed = F.subscription("s1", expiresMs: 10_000)
        let grant = PromotionalGrant(entitlementID: "pro", grantedMs: 11_000, expiresMs: 20_000)
        #expect(F.compute([lapsed], grants: [grant], nowMs: 10_500)["pro"]?.isActive == true)
        #expect(F.compute([lapsed], grants: [grant], nowMs: 20_000)["pro"]?.source == .promotional)
        #expect(F.compute([lapsed], grants: [grant], nowMs: 20_000)["pro"]?.isActive == false)
    }

    @Test func aProductTheConfigNoLongerNamesGrantsNothing() {
        var config = F.config
        config.products.removeAll { $0.id == "pro_lifetime" }
        let views = F.compute(config: config, [F.subscription(expiresMs: 3_000)], purchases: [F.purchase()], nowMs: 5_000)
        #expect(views["pro"]?.isActive == false)
        #expect(views["pro"]?.source == .subscription)
        #expect(F.compute(config: config, purchases: [F.purchase()], nowMs: 5_000).isEmpty)
    }

    @Test func anEntitlementTheConfigNoLongerNamesIsNotListed() {
        var config = F.config
        config.entitlements.removeAll { $0.id == "extra" }
        let grant = PromotionalGrant(entitlementID: "extra", grantedMs: 1_000, expiresMs: nil)
        let views = F.compute(config: config, [F.subscription(product: "pro_annual")], grants: [grant], nowMs: 5_000)
        #expect(Set(views.keys) == ["pro"])
    }

    @Test func aProductThatStopsMappingAnEntitlementStopsGrantingIt() {
        var config = F.config
        config.products = config.products.map { product in
            var product = product
            if product.id == "pro_annual" { product.entitlements = ["extra"] }
            return product
        }
        let views = F.compute(config: config, [F.subscription(product: "pro_annual")], nowMs: 5_000)
        #expect(Set(views.keys) == ["extra"])
        #expect(views["extra"]?.isActive == true)
    }

    @Test func orderedListIsSortedByEntitlementID() {
        let ordered = Entitlements.computeOrdered(
            config: F.config, subscriptions: [F.subscription(product: "pro_annual")], purchases: [],
            grants: [PromotionalGrant(entitlementID: "gold", grantedMs: 1_000, expiresMs: nil)], nowMs: 5_000)
        #expect(ordered.map(\.entitlementID) == ["extra", "gold", "pro"])
    }

    @Test func nothingOwnedListsNothing() {
        #expect(F.compute(nowMs: 5_000).isEmpty)
    }
}
