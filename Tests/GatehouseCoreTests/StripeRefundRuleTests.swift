import GatehouseBase
@testable import GatehouseCore
import Testing

// Stripe's refunds and lost disputes (DESIGN.md, "Web purchases and redemption links"):
// `charge.refunded` refunds the term its charge paid for, found through the invoice the payment
// paid (`invoice_payment.paid`) and the subscription that invoice is a term of (`invoice.paid`),
// in proportion `amount_refunded / amount`. A partial refund claws back currency and leaves the
// state; a full refund of the current term makes it `refunded`; a lost dispute revokes.

private typealias S = StripeNotices
private let day = StripeNotices.day

@Suite struct StripeRefundRules {
    /// `alice` with a `big_monthly` subscription (COINS 1,000 on each paid term) through two paid
    /// terms, `in_1` (paid by `pi_1`) and the renewal `in_2` (paid by `pi_2`, current): 2,000 COINS.
    /// (Within a few minutes: the feed keeps its events for a week, and the checks read them.)
    static func renewed() throws -> (PurchaseWorld, ProfileID) {
        var world = PurchaseWorld.withCurrencies()
        let alice = try world.create("alice")
        try world.stripe(S.checkout("evt_c", "sub_1", reference: "alice"))
        try world.stripe(S.invoice("evt_i1", "sub_1", invoice: "in_1", startMs: 1_000, endMs: 100_000, initial: true,
                                   product: "big_monthly"))
        try world.stripe(S.paid("evt_p1", payment: "pi_1", invoice: "in_1", atMs: 1_000))
        world.nowMs = 100_000
        try world.stripe(S.invoice("evt_i2", "sub_1", invoice: "in_2", startMs: 100_000, endMs: 200_000, initial: false,
                                   product: "big_monthly"))
        try world.stripe(S.paid("evt_p2", payment: "pi_2", invoice: "in_2", atMs: 100_000))
        world.nowMs = 150_000
        #expect(world.balance(alice) == 2_000)
        return (world, alice)
    }

    static func subscription(_ world: PurchaseWorld) throws -> Subscription {
        try #require(world.stripeSubscription("sub_1")).subscription
    }

    @Test func thePaymentAndTheInvoiceAreLinkedAndReplayRebuildsThem() throws {
        let (world, _) = try Self.renewed()
        #expect(world.state.web.paymentInvoices == ["pi_1": "in_1", "pi_2": "in_2"])
        #expect(world.state.web.invoiceSubscriptions == ["in_1": "sub_1", "in_2": "sub_1"])
        var replayed = world.start
        for batch in world.batches { replayed.apply(batch) }
        #expect(replayed == world.state)
        #expect(replayed.web == world.state.web)
    }

    @Test func aFreeTrialInvoiceIsNoPaymentToLink() throws {
        var world = PurchaseWorld.withCurrencies()
        try world.stripe(S.invoice("evt_i1", "sub_1", invoice: "in_1", startMs: 1_000, endMs: 50_000, initial: true, price: 0,
                                   product: "big_monthly"))
        #expect(world.stripeSubscription("sub_1") != nil)
        #expect(world.state.web.invoiceSubscriptions.isEmpty)
    }

    @Test func aPartialRefundOfARenewalClawsBackItsShareAndLeavesTheState() throws {
        var (world, alice) = try Self.renewed()
        let before = try Self.subscription(world)
        let events = world.feed.count
        let decision = try world.stripe(S.refund("evt_r1", payment: "pi_2", fraction: 0.25, atMs: 150_000))
        #expect(decision.applied)
        #expect(decision.profileID == alice)
        #expect(world.balance(alice) == 1_750)
        let last = try #require(world.history(alice).last)
        #expect(last.amount == -250)
        #expect(last.source == .refund)
        #expect(last.ref == "in_2")
        #expect(try Self.subscription(world) == before, "a partial refund leaves the subscription as it is")
        #expect(world.entitlement("pro", of: alice)?.isActive == true)
        #expect(world.lastEvents(world.feed.count - events).map(\.type) == [.virtualCurrencyTransaction])
        #expect(world.state.web.refundedFractions == ["in_2": 0.25])
        #expect(world.currencyProblems() == [])
    }

    @Test func aLargerSecondRefundTakesTheRestOfItsShareAndASmallerOneNothing() throws {
        var (world, alice) = try Self.renewed()
        try world.stripe(S.refund("evt_r1", payment: "pi_2", fraction: 0.25, atMs: 150_000))
        try world.stripe(S.refund("evt_r2", payment: "pi_2", fraction: 0.6, atMs: 151_000))
        #expect(world.balance(alice) == 1_400)
        #expect(world.history(alice).last?.amount == -350)
        // Stripe's amount_refunded only grows: an older event that arrives late takes nothing back
        // and gives nothing back.
        let batches = world.batches.count
        try world.stripe(S.refund("evt_r0", payment: "pi_2", fraction: 0.1, atMs: 149_000))
        #expect(world.balance(alice) == 1_400)
        #expect(world.batches.last?.changes == [.notificationSeen(store: S.store, id: "evt_r0")])
        #expect(world.batches.count == batches + 1)
        #expect(try Self.subscription(world).status == .active)
        #expect(world.events(.refund).isEmpty)
        #expect(world.currencyProblems() == [])
    }

    @Test func aFullRefundOfTheCurrentTermMakesItRefundedOnce() throws {
        var (world, alice) = try Self.renewed()
        try world.stripe(S.refund("evt_r1", payment: "pi_2", fraction: 0.5, atMs: 150_000))
        try world.stripe(S.refund("evt_r2", payment: "pi_2", fraction: 1, atMs: 151_000))
        let subscription = try Self.subscription(world)
        #expect(subscription.status == .refunded)
        #expect(subscription.term(id: "in_2")?.refundedFraction == 1)
        #expect(world.events(.refund).map(\.profileID) == [alice])
        #expect(world.events(.refund).first?.detail("transaction_id") == .string("in_2"))
        #expect(world.balance(alice) == 1_000, "the term's whole grant is taken back, the first term's stays")
        #expect(world.history(alice).suffix(2).map(\.amount) == [-500, -500])
        #expect(world.entitlement("pro", of: alice)?.isActive == false)
        // Its repeat under another event id refunds nothing more.
        try world.stripe(S.refund("evt_r3", payment: "pi_2", fraction: 1, atMs: 152_000))
        #expect(world.events(.refund).count == 1)
        #expect(world.balance(alice) == 1_000)
        #expect(world.currencyProblems() == [])
    }

    @Test func aFullRefundOfAnOlderTermTakesOnlyThatTermsCurrency() throws {
        var (world, alice) = try Self.renewed()
        try world.stripe(S.refund("evt_r1", payment: "pi_1", fraction: 1, atMs: 150_000))
        let subscription = try Self.subscription(world)
        #expect(subscription.status == .active)
        #expect(subscription.terms.map(\.refundedFraction) == [0, 0])
        #expect(world.events(.refund).isEmpty)
        #expect(world.balance(alice) == 1_000)
        #expect(world.history(alice).last?.ref == "in_1")
        #expect(world.state.web.refundedFractions == ["in_1": 1])
        #expect(world.entitlement("pro", of: alice)?.isActive == true)
        // A later event about the subscription keeps the claw-back.
        try world.stripe(S.update("evt_u", "sub_1", .active, cancel: true, product: "big_monthly", startMs: 100_000,
                                  endMs: 200_000, atMs: 151_000))
        #expect(world.balance(alice) == 1_000)
        #expect(world.currencyProblems() == [])
    }

    @Test func aOneTimePurchaseRefundedInPartThenInFull() throws {
        var world = PurchaseWorld.withCurrencies()
        let alice = try world.create("alice")
        try world.stripe(S.payment("evt_c", "pi_9", product: "coin_pack", reference: "alice"))
        #expect(world.balance(alice) == 1_000)
        try world.stripe(S.refund("evt_r1", payment: "pi_9", fraction: 0.3, atMs: 2_000))
        #expect(world.balance(alice) == 700)
        let key = S.key("pi_9")
        #expect(world.state.purchases.oneTimePurchase(key)?.purchase.refunded == false)
        #expect(world.events(.refund).isEmpty)
        try world.stripe(S.refund("evt_r2", payment: "pi_9", fraction: 1, atMs: 3_000))
        #expect(world.state.purchases.oneTimePurchase(key)?.purchase.refunded == true)
        #expect(world.events(.refund).map(\.profileID) == [alice])
        #expect(world.balance(alice) == 0)
        #expect(world.currencyProblems() == [])
    }

    @Test func aRefundedNonConsumableNoLongerEntitles() throws {
        var world = PurchaseWorld.withCurrencies()
        let alice = try world.create("alice")
        try world.stripe(S.payment("evt_c", "pi_9", product: "lifetime", reference: "alice"))
        try world.stripe(S.refund("evt_r1", payment: "pi_9", fraction: 0.5, atMs: 2_000))
        #expect(world.entitlement("pro", of: alice)?.isActive == true)
        try world.stripe(S.refund("evt_r2", payment: "pi_9", atMs: 3_000))
        #expect(world.entitlement("pro", of: alice)?.isActive == false)
    }

    @Test func aRefundBeforeItsPaymentsLinkIsNotFoundThenAppliesOnceItCame() throws {
        var world = PurchaseWorld.withCurrencies()
        let alice = try world.create("alice")
        try world.stripe(S.checkout("evt_c", "sub_1", reference: "alice"))
        try world.stripe(S.invoice("evt_i1", "sub_1", invoice: "in_1", startMs: 1_000, endMs: 100_000, initial: true,
                                   product: "big_monthly"))
        let refund = S.refund("evt_r", payment: "pi_1", fraction: 0.5, atMs: 2_000)
        let before = world.state
        #expect(throws: GatehouseError(.notFound, "the purchase Stripe's payment pi_1 paid for is not known yet")) {
            try world.stripe(refund)
        }
        #expect(world.state == before, "nothing changed and the event's id is not used up")
        try world.stripe(S.paid("evt_p", payment: "pi_1", invoice: "in_1", atMs: 1_000))
        #expect(try world.stripe(refund).applied)
        #expect(world.balance(alice) == 500)
    }

    @Test func aPaymentBeforeItsInvoiceWaitsForTheInvoiceToPlaceTheRefund() throws {
        var world = PurchaseWorld.withCurrencies()
        let alice = try world.create("alice")
        try world.stripe(S.checkout("evt_c", "sub_1", reference: "alice"))
        try world.stripe(S.paid("evt_p", payment: "pi_1", invoice: "in_1", atMs: 1_000))
        let dispute = S.chargeback("evt_d", payment: "pi_1", atMs: 2_000)
        #expect(throws: GatehouseError.self) { try world.stripe(dispute) }
        try world.stripe(S.invoice("evt_i1", "sub_1", invoice: "in_1", startMs: 1_000, endMs: 100_000, initial: true,
                                   product: "big_monthly"))
        #expect(try world.stripe(dispute).applied)
        #expect(try Self.subscription(world).status == .revoked)
        #expect(world.balance(alice) == 0)
    }

    @Test func aPaymentNotPlacedOnceStripesRetriesAreOverIsNotAppliedAndKeepsItsID() throws {
        var world = PurchaseWorld.withCurrencies()
        let refund = S.refund("evt_r", payment: "pi_other", fraction: 1, atMs: 1_000)
        world.nowMs = 1_000 + 3 * day
        #expect(throws: GatehouseError.self) { try world.stripe(refund) }
        world.nowMs += 1
        let decision = try world.stripe(refund)
        #expect(!decision.applied)
        #expect(decision.batch.changes.isEmpty)
        #expect(world.state.purchases.seenNotificationCount == 0)
        #expect(!(try world.stripe(S.chargeback("evt_d", payment: "pi_other", atMs: 1_000))).applied)
    }

    @Test func aLostDisputeRevokesTheSubscriptionAndTakesBackEveryTerm() throws {
        var (world, alice) = try Self.renewed()
        let decision = try world.stripe(S.chargeback("evt_d", payment: "pi_1", atMs: 150_000))
        #expect(decision.applied)
        #expect(decision.profileID == alice)
        #expect(try Self.subscription(world).status == .revoked)
        let revoked = try #require(world.events(.expiration).last)
        #expect(revoked.detail("reason") == .string("revoked"))
        #expect(world.balance(alice) == 0)
        #expect(world.history(alice).suffix(2).map(\.source) == [.revoke, .revoke])
        #expect(world.entitlement("pro", of: alice)?.isActive == false)
        // A refund after it changes nothing more.
        try world.stripe(S.refund("evt_r", payment: "pi_2", fraction: 0.5, atMs: 151_000))
        #expect(world.balance(alice) == 0)
        #expect(try Self.subscription(world).status == .revoked)
        #expect(world.currencyProblems() == [])
    }

    @Test func aLostDisputeRevokesAOneTimePurchase() throws {
        var world = PurchaseWorld.withCurrencies()
        let alice = try world.create("alice")
        try world.stripe(S.payment("evt_c", "pi_9", product: "coin_pack", reference: "alice"))
        try world.stripe(S.chargeback("evt_d", payment: "pi_9", atMs: 2_000))
        #expect(world.state.purchases.oneTimePurchase(S.key("pi_9"))?.purchase.revoked == true)
        #expect(world.balance(alice) == 0)
    }

    @Test func aRepeatedRefundEventChangesNothing() throws {
        var (world, alice) = try Self.renewed()
        try world.stripe(S.refund("evt_r1", payment: "pi_2", fraction: 0.25, atMs: 150_000))
        let before = world.state
        let again = try world.stripe(S.refund("evt_r1", payment: "pi_2", fraction: 0.9, atMs: 150_000))
        #expect(!again.applied)
        #expect(again.batch.changes.isEmpty)
        #expect(again.profileID == alice)
        #expect(world.state == before)
    }

    @Test func aRefundAfterTheWebPurchaseWasRedeemedTakesBackFromTheAppProfile() throws {
        var world = PurchaseWorld.withCurrencies()
        let app = try world.create("alice")
        try world.stripe(S.checkout("evt_c", "sub_1"))
        try world.stripe(S.invoice("evt_i1", "sub_1", invoice: "in_1", startMs: 1_000, endMs: 100_000, initial: true,
                                   product: "big_monthly"))
        try world.stripe(S.paid("evt_p1", payment: "pi_1", invoice: "in_1", atMs: 1_000))
        let buyer = try #require(world.stripeSubscription("sub_1")?.owner)
        #expect(world.balance(buyer) == 1_000)
        #expect(try world.redeem(app, try world.token()) == .success(app))
        #expect(world.balance(app) == 1_000)
        let decision = try world.stripe(S.refund("evt_r", payment: "pi_1", fraction: 0.5, atMs: 2_000))
        #expect(decision.profileID == app)
        #expect(world.balance(app) == 500)
        #expect(world.history(app).last?.source == .refund)
        #expect(world.currencyProblems() == [])
    }

    @Test func aPaymentLinkedTwiceKeepsItsFirstInvoice() throws {
        var (world, _) = try Self.renewed()
        let decision = try world.stripe(S.paid("evt_p9", payment: "pi_1", invoice: "in_9", atMs: 151_000))
        #expect(decision.batch.changes == [.notificationSeen(store: S.store, id: "evt_p9")])
        #expect(world.state.web.paymentInvoices["pi_1"] == "in_1")
    }
}
