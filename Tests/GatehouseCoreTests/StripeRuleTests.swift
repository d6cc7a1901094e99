import GatehouseBase
@testable import GatehouseCore
import Testing

// Stripe's events as purchases (DESIGN.md, "Web purchases and redemption links"): who owns a
// web purchase, in whichever order Stripe's events come, and what each event does to it.

private typealias S = StripeNotices

/// Stripe's events as the server hands them to the rules, shared by the Stripe rule suites.
enum StripeNotices {
    static let store = ProjectState.stripeStore
    static let day: Int64 = 86_400_000

    static func key(_ id: String) -> PurchaseKey { PurchaseKey(store: store, id: id) }

    static func checkout(_ event: String, _ subscription: String, reference: String? = nil, email: String? = "buyer@example.com",
                         atMs: Int64 = 1_000) -> StripeNotice
    {
        StripeNotice(eventID: event, atMs: atMs,
                     action: .checkout(key: key(subscription), buyer: WebBuyer(reference: reference, email: email), oneTime: nil))
    }

    static func invoice(_ event: String, _ subscription: String, invoice: String, startMs: Int64, endMs: Int64,
                        initial: Bool, price: Double = 9.99, product: String = "pro_monthly", atMs: Int64? = nil) -> StripeNotice
    {
        let transaction = StoreTransaction(
            store: store, kind: .subscription, transactionID: invoice, originalTransactionID: subscription, productID: product,
            purchasedMs: startMs, expiresMs: endMs, token: nil, price: price, currency: "USD",
            periodType: price > 0 ? .normal : .trial, environment: .sandbox)
        return StripeNotice(eventID: event, atMs: atMs ?? startMs, action: .term(transaction, initial: initial))
    }

    /// A paid Checkout of a one-time `product` (its payment intent is the purchase's id).
    static func payment(_ event: String, _ paymentIntent: String, product: String, price: Double = 29, reference: String? = nil,
                        atMs: Int64 = 1_000) -> StripeNotice
    {
        let payment = StoreTransaction(
            store: store, kind: .oneTime, transactionID: paymentIntent, originalTransactionID: paymentIntent, productID: product,
            purchasedMs: atMs, expiresMs: 0, token: nil, price: price, currency: "EUR", periodType: .normal, environment: .sandbox)
        return StripeNotice(eventID: event, atMs: atMs, action: .checkout(
            key: key(paymentIntent), buyer: WebBuyer(reference: reference, email: "b@example.com"), oneTime: payment))
    }

    /// `invoice_payment.paid`.
    static func paid(_ event: String, payment: String, invoice: String, atMs: Int64) -> StripeNotice {
        StripeNotice(eventID: event, atMs: atMs, action: .paymentLinked(payment: payment, invoice: invoice))
    }

    /// `charge.refunded`.
    static func refund(_ event: String, payment: String, fraction: Double = 1, atMs: Int64) -> StripeNotice {
        StripeNotice(eventID: event, atMs: atMs, action: .refund(payment: payment, fraction: fraction))
    }

    /// `charge.dispute.closed`, lost.
    static func chargeback(_ event: String, payment: String, atMs: Int64) -> StripeNotice {
        StripeNotice(eventID: event, atMs: atMs, action: .chargeback(payment: payment))
    }

    static func update(_ event: String, _ subscription: String, _ status: StripeSubscriptionState.Status, cancel: Bool = false,
                       product: String? = "pro_monthly", startMs: Int64 = 0, endMs: Int64, atMs: Int64) -> StripeNotice
    {
        StripeNotice(eventID: event, atMs: atMs, action: .subscription(key: key(subscription), StripeSubscriptionState(
            status: status, cancelAtPeriodEnd: cancel, productID: product, periodStartMs: startMs, periodEndMs: endMs)))
    }
}

extension PurchaseWorld {
    @discardableResult
    mutating func stripe(_ notice: StripeNotice) throws(GatehouseError) -> PurchaseDecision {
        commit(try state.applyStripe(notice, nowMs: nowMs, random: random))
    }

    func stripeSubscription(_ id: String) -> HeldSubscription? { state.purchases.subscription(S.key(id)) }
}

@Suite struct StripeOwnershipRules {
    @Test func aCheckoutBeforeItsInvoiceGivesThePurchaseToANewWebProfileWithTheEmail() throws {
        var world = PurchaseWorld()
        let checkout = try world.stripe(S.checkout("evt_1", "sub_1"))
        let buyer = try #require(checkout.profileID)
        #expect(world.profile(buyer).isAnonymous)
        #expect(world.profile(buyer).attributes["$email"]?.value == "buyer@example.com")
        #expect(world.state.web.pendingOwners == [S.key("sub_1"): buyer])

        try world.stripe(S.invoice("evt_2", "sub_1", invoice: "in_1", startMs: 1_000, endMs: 31 * S.day, initial: true))
        #expect(world.stripeSubscription("sub_1")?.owner == buyer)
        #expect(world.state.web.pendingOwners.isEmpty, "a pending owner is kept only until the purchase is known")
        #expect(world.events(.initialPurchase).map(\.profileID) == [buyer])
        #expect(world.entitlement("pro", of: buyer)?.isActive == true)
    }

    @Test func anInvoiceBeforeItsCheckoutIsHeldUnownedThenClaimedByTheNamedCustomer() throws {
        var world = PurchaseWorld()
        let alice = try world.create("alice")
        try world.stripe(S.invoice("evt_1", "sub_1", invoice: "in_1", startMs: 1_000, endMs: 31 * S.day, initial: true))
        #expect(world.stripeSubscription("sub_1")?.owner == nil)
        let checkout = try world.stripe(S.checkout("evt_2", "sub_1", reference: "alice"))
        #expect(checkout.profileID == alice)
        #expect(world.stripeSubscription("sub_1")?.owner == alice)
        #expect(world.state.profiles.count == 1, "a reference that names a customer makes no web profile")
        #expect(world.entitlement("pro", of: alice)?.isActive == true)
    }

    @Test(arguments: ["profile", "install"])
    func aReferenceMayNameAProfileIDOrAnInstallID(kind: String) throws {
        var world = PurchaseWorld()
        let install = try #require(InstallID(parsing: "$RCAnonymousID:" + String(repeating: "ab", count: 16)))
        let id = world.commit(try world.state.createProfile(customerUserID: nil, token: nil, installID: install, nowMs: world.nowMs,
                                                             random: world.random)).profileID
        let reference = kind == "profile" ? id.description : install.description
        #expect(try world.stripe(S.checkout("evt_1", "sub_1", reference: reference)).profileID == id)
        #expect(world.state.web.pendingOwners == [S.key("sub_1"): id])
    }

    @Test func aReferenceThatNamesNobodyMakesAWebProfile() throws {
        var world = PurchaseWorld()
        _ = try world.create("alice")
        let buyer = try #require(try world.stripe(S.checkout("evt_1", "sub_1", reference: "bob", email: nil)).profileID)
        #expect(world.profile(buyer).customerUserID == nil)
        #expect(world.profile(buyer).attributes["$email"] == nil)
    }

    @Test func aCheckoutNeverMovesAnOwnedPurchase() throws {
        var world = PurchaseWorld()
        let alice = try world.create("alice")
        _ = try world.create("bob")
        try world.stripe(S.checkout("evt_1", "sub_1", reference: "alice"))
        try world.stripe(S.invoice("evt_2", "sub_1", invoice: "in_1", startMs: 1_000, endMs: 31 * S.day, initial: true))
        try world.stripe(S.checkout("evt_3", "sub_1", reference: "bob"))
        #expect(world.stripeSubscription("sub_1")?.owner == alice)
    }

    @Test func aPaymentCheckoutIsAOneTimePurchaseOfTheBuyer() throws {
        var world = PurchaseWorld()
        let payment = StoreTransaction(
            store: S.store, kind: .oneTime, transactionID: "pi_1", originalTransactionID: "pi_1", productID: "lifetime",
            purchasedMs: 1_000, expiresMs: 0, token: nil, price: 29, currency: "EUR", periodType: .normal, environment: .production)
        let notice = StripeNotice(eventID: "evt_1", atMs: 1_000,
                                  action: .checkout(key: S.key("pi_1"), buyer: WebBuyer(reference: nil, email: "b@example.com"), oneTime: payment))
        let buyer = try #require(try world.stripe(notice).profileID)
        #expect(world.state.purchases.oneTimePurchase(S.key("pi_1"))?.owner == buyer)
        #expect(world.events(.nonRenewingPurchase).map(\.profileID) == [buyer])
        #expect(world.state.web.pendingOwners.isEmpty)
        #expect(world.entitlement("pro", of: buyer)?.isActive == true)
    }
}

@Suite struct StripeEventRules {
    /// A subscription of `alice` through its first invoice: the first period ends at day 31.
    static func subscribed() throws -> (PurchaseWorld, ProfileID) {
        var world = PurchaseWorld(gracePeriodMs: 3 * S.day)
        let alice = try world.create("alice")
        try world.stripe(S.checkout("evt_c", "sub_1", reference: "alice"))
        try world.stripe(S.invoice("evt_i1", "sub_1", invoice: "in_1", startMs: 1_000, endMs: 31 * S.day, initial: true))
        return (world, alice)
    }

    @Test func aRepeatedEventChangesNothing() throws {
        var (world, _) = try Self.subscribed()
        let before = world.state
        let again = try world.stripe(S.invoice("evt_i1", "sub_1", invoice: "in_9", startMs: 2_000, endMs: 90 * S.day, initial: false))
        #expect(!again.applied)
        #expect(again.batch.changes.isEmpty)
        #expect(world.state == before)
    }

    @Test func aLaterInvoiceIsARenewal() throws {
        var (world, alice) = try Self.subscribed()
        world.nowMs = 31 * S.day
        try world.stripe(S.invoice("evt_i2", "sub_1", invoice: "in_2", startMs: 31 * S.day, endMs: 59 * S.day, initial: false))
        #expect(world.events(.renewal).map(\.profileID) == [alice])
        #expect(world.stripeSubscription("sub_1")?.subscription.expiresMs == 59 * S.day)
        #expect(world.stripeSubscription("sub_1")?.subscription.terms.map(\.transactionID) == ["in_1", "in_2"])
    }

    @Test func anUpdateForAnUnknownSubscriptionIsNotFoundAndDoesNotUseUpItsID() throws {
        var world = PurchaseWorld()
        let update = S.update("evt_u", "sub_9", .active, endMs: 31 * S.day, atMs: 2_000)
        #expect(throws: GatehouseError.self) { try world.stripe(update) }
        #expect(world.state.purchases.seenNotificationCount == 0)
        try world.stripe(S.invoice("evt_i", "sub_9", invoice: "in_1", startMs: 1_000, endMs: 31 * S.day, initial: true))
        #expect(try world.stripe(update).applied)
    }

    @Test func theNewPeriodKeepsItEntitledUntilItsInvoiceIsPaid() throws {
        var (world, alice) = try Self.subscribed()
        try world.stripe(S.update("evt_u1", "sub_1", .active, startMs: 31 * S.day, endMs: 59 * S.day, atMs: 31 * S.day))
        #expect(world.stripeSubscription("sub_1")?.subscription.expiresMs == 59 * S.day)
        world.expire(atMs: 40 * S.day)
        #expect(world.entitlement("pro", of: alice)?.isActive == true)
        #expect(world.events(.renewal).isEmpty, "the invoice, not the period, is the renewal")
    }

    @Test func pastDueIsGraceFromThePeriodsStartThenActiveAgainRecovers() throws {
        var (world, alice) = try Self.subscribed()
        try world.stripe(S.update("evt_u1", "sub_1", .pastDue, startMs: 31 * S.day, endMs: 59 * S.day, atMs: 31 * S.day + 1))
        let held = try #require(world.stripeSubscription("sub_1")).subscription
        #expect(held.status == .grace)
        #expect(held.graceExpiresMs == 34 * S.day)
        #expect(world.events(.billingIssue).count == 1)
        try world.stripe(S.update("evt_u2", "sub_1", .active, startMs: 31 * S.day, endMs: 59 * S.day, atMs: 32 * S.day))
        #expect(world.stripeSubscription("sub_1")?.subscription.status == .active)
        #expect(world.entitlement("pro", of: alice)?.isActive == true)
    }

    @Test func pastDueWithoutAGracePeriodIsBillingRetry() throws {
        var world = PurchaseWorld()
        _ = try world.create("alice")
        try world.stripe(S.checkout("evt_c", "sub_1", reference: "alice"))
        try world.stripe(S.invoice("evt_i1", "sub_1", invoice: "in_1", startMs: 1_000, endMs: 31 * S.day, initial: true))
        try world.stripe(S.update("evt_u1", "sub_1", .pastDue, startMs: 31 * S.day, endMs: 59 * S.day, atMs: 31 * S.day))
        #expect(world.stripeSubscription("sub_1")?.subscription.status == .billingRetry)
    }

    @Test func anEndedSubscriptionExpires() throws {
        var (world, alice) = try Self.subscribed()
        try world.stripe(S.update("evt_u1", "sub_1", .ended, endMs: 31 * S.day, atMs: 5_000))
        #expect(world.stripeSubscription("sub_1")?.subscription.status == .expired)
        #expect(world.events(.expiration).map(\.profileID) == [alice])
        #expect(world.entitlement("pro", of: alice)?.isActive == false)
    }

    @Test func cancelAtPeriodEndIsWillRenewAndAnOlderUpdateNeverRollsItBack() throws {
        var (world, _) = try Self.subscribed()
        try world.stripe(S.update("evt_u2", "sub_1", .active, cancel: true, endMs: 31 * S.day, atMs: 9_000))
        #expect(world.stripeSubscription("sub_1")?.subscription.willRenew == false)
        #expect(world.events(.cancellation).count == 1)
        try world.stripe(S.update("evt_u1", "sub_1", .active, cancel: false, endMs: 31 * S.day, atMs: 8_000))
        #expect(world.stripeSubscription("sub_1")?.subscription.willRenew == false, "Stripe's created orders the updates")
        try world.stripe(S.update("evt_u3", "sub_1", .active, cancel: false, endMs: 31 * S.day, atMs: 10_000))
        #expect(world.stripeSubscription("sub_1")?.subscription.willRenew == true)
        #expect(world.events(.uncancellation).count == 1)
    }

    @Test func anIncompleteSubscriptionChangesNothing() throws {
        var (world, _) = try Self.subscribed()
        let before = world.stripeSubscription("sub_1")
        try world.stripe(S.update("evt_u1", "sub_1", .incomplete, cancel: true, endMs: 90 * S.day, atMs: 9_000))
        #expect(world.stripeSubscription("sub_1") == before)
    }

    @Test func anotherPriceIsAProductChange() throws {
        var (world, _) = try Self.subscribed()
        try world.stripe(S.update("evt_u1", "sub_1", .active, product: "pro_yearly", endMs: 31 * S.day, atMs: 9_000))
        #expect(world.stripeSubscription("sub_1")?.subscription.productID == "pro_yearly")
        #expect(world.events(.productChange).count == 1)
    }

    @Test func recordOnlyTakesTheIDAndNothingElse() throws {
        var world = PurchaseWorld()
        let decision = try world.stripe(StripeNotice(eventID: "evt_x", atMs: 1, action: .recordOnly))
        #expect(!decision.applied, "Stripe stops sending what the server does not use")
        #expect(decision.batch.changes == [.notificationSeen(store: S.store, id: "evt_x")])
        #expect(!(try world.stripe(StripeNotice(eventID: "evt_x", atMs: 1, action: .recordOnly))).applied)
    }

    @Test func replayingTheBatchesRebuildsTheState() throws {
        var (world, _) = try Self.subscribed()
        try world.stripe(S.checkout("evt_c2", "sub_2"))
        var replayed = world.start
        for batch in world.batches { replayed.apply(batch) }
        #expect(replayed == world.state)
    }
}
