import GatehouseBase
@testable import GatehouseCore
import Testing

// Store notifications that carry the purchase's whole transaction (the App Store's) and those
// that change nothing: a `change` for a purchase the server has never seen creates it from the
// transaction (owned by the token's profile, else held under the token) before the event
// applies; without a transaction it stays `not_found` (the test store). A `recordOnly`
// notification is recorded as seen, so its repeat answers `applied: false`, and changes nothing
// else.

private typealias C = PurchaseCatalogue
private typealias K = CurrencyCatalogue

private func notification(
    _ id: String, _ transaction: StoreTransaction, atMs: Int64, _ event: StoreNotification.Event
) -> StoreNotification {
    StoreNotification(store: C.store, notificationID: id, originalTransactionID: transaction.key.id, atMs: atMs,
                      event: event, transaction: transaction)
}

@Suite("A notification with its transaction creates the purchase it names")
struct NotificationCreatesUnknownPurchase {
    @Test func anEventForAnUnknownSubscriptionCreatesItUnderItsToken() throws {
        var world = PurchaseWorld()
        let transaction = C.subscription("s1", expiresMs: 100_000, token: fixedToken(1))
        world.nowMs = 3_000
        let decision = try world.notify(notification("n1", transaction, atMs: 2_000, .change(.cancel)))
        #expect(decision.applied)
        #expect(decision.profileID == nil)
        let held = try #require(world.subscription("s1"))
        #expect(held.owner == nil)
        #expect(held.token == fixedToken(1))
        #expect(held.subscription.willRenew == false)
        #expect(held.subscription.status == .active)
        #expect(decision.batch.recordedTypes == [.initialPurchase, .cancellation])
        // The profile that takes the token later owns it.
        let owner = try world.create(token: fixedToken(1))
        #expect(world.owner("s1") == owner)
    }

    @Test func theTokensProfileOwnsItAtOnce() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        let transaction = C.subscription("s1", expiresMs: 100_000, token: world.token(of: owner))
        let decision = try world.notify(notification("n1", transaction, atMs: 2_000, .change(.expire)))
        #expect(decision.profileID == owner)
        #expect(world.subscription("s1")?.subscription.status == .expired)
        #expect(decision.batch.recordedEvents.map(\.1) == [owner, owner])
    }

    @Test func withoutATransactionAnUnknownPurchaseIsStillNotFound() throws {
        var world = PurchaseWorld()
        let bare = C.notification("n1", "s1", atMs: 2_000, .cancel)
        #expect(throws: GatehouseError.notFound("purchase with original_transaction_id s1 in store test")) {
            try world.notify(bare)
        }
        #expect(!world.state.purchases.hasSeen(notification: "n1", store: C.store))
    }

    @Test func aKnownSubscriptionIsNotCreatedAgain() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        try world.report(owner, C.subscription("s1", expiresMs: 100_000))
        // Another token in the notification's copy of the transaction moves nothing.
        let copy = C.subscription("s1", expiresMs: 100_000, token: fixedToken(9))
        let decision = try world.notify(notification("n1", copy, atMs: 2_000, .change(.cancel)))
        #expect(decision.batch.recordedTypes == [.cancellation])
        #expect(world.owner("s1") == owner)
        #expect(world.subscription("s1")?.token == nil)
    }

    @Test func aRefundOfAnUnknownOneTimePurchaseCreatesItRefunded() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        let pack = K.oneTime("p1", token: world.token(of: owner))
        try world.notify(notification("n1", pack, atMs: 2_000, .change(.refund(transactionID: "p1", fraction: 1))))
        let held = try #require(world.oneTime("p1"))
        #expect(held.owner == owner)
        #expect(held.purchase.refunded)
        // What the purchase granted, the refund took back in the same batch.
        #expect(world.balance(owner) == 0)
        #expect(world.currencyProblems().isEmpty)
    }
}

@Suite("A notification that changes nothing is only recorded as seen")
struct RecordOnlyNotification {
    @Test func itIsSeenOnceAndChangesNothingElse() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        let transaction = C.subscription("s1", expiresMs: 100_000, token: world.token(of: owner))
        try world.report(owner, transaction)
        let before = world.state
        let decision = try world.notify(notification("n1", transaction, atMs: 2_000, .recordOnly))
        #expect(decision.applied)
        #expect(decision.profileID == owner)
        #expect(decision.batch.changes == [.notificationSeen(store: C.store, id: "n1")])
        #expect(world.state.purchases.subscriptions == before.purchases.subscriptions)
        #expect(world.feed == before.events.events)
        let again = try world.state.notify(notification("n1", transaction, atMs: 2_000, .recordOnly), nowMs: world.nowMs)
        #expect(!again.applied)
        #expect(again.batch.changes.isEmpty)
    }

    @Test func itNeedsNoKnownPurchase() throws {
        var world = PurchaseWorld()
        let test = StoreNotification(store: C.store, notificationID: "n1", originalTransactionID: "", atMs: 2_000,
                                     event: .recordOnly)
        let decision = try world.notify(test)
        #expect(decision.applied)
        #expect(decision.profileID == nil)
        #expect(world.state.purchases.subscriptions.isEmpty)
        // Nor does it create the purchase of a transaction it carries.
        try world.notify(notification("n2", C.subscription("s1", token: fixedToken(1)), atMs: 2_000, .recordOnly))
        #expect(world.subscription("s1") == nil)
    }
}

@Suite("An upgrade's and an extension's terms settle currency like any term")
struct UpgradeAndExtensionCurrency {
    @Test func anUpgradesPaidTermGrantsTheNewProductsRenewalGrant() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        try world.report(owner, K.subscription("s1", product: "mixed_monthly", token: world.token(of: owner)))
        #expect(world.balances(owner) == [K.coins: 100, K.gems: 0, K.stars: 1])
        let term = C.term("s1b", purchasedMs: 5_000, expiresMs: 400_000, price: 49.99)
        let decision = try world.notify(C.notification("n1", "s1", atMs: 5_000, .upgrade(newProductID: "big_monthly", term: term)))
        #expect(decision.batch.recordedTypes.first == .productChange)
        #expect(world.subscription("s1")?.subscription.productID == "big_monthly")
        #expect(world.subscription("s1")?.subscription.expiresMs == 400_000)
        #expect(world.balances(owner) == [K.coins: 1_100, K.gems: 0, K.stars: 1])
        #expect(world.currencyProblems().isEmpty)
    }

    @Test func anExtensionGrantsNothing() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        try world.report(owner, K.subscription("s1", token: world.token(of: owner)))
        let balance = world.balance(owner)
        let longer = C.term("s1", purchasedMs: 1_000, expiresMs: 200_000)
        let decision = try world.notify(C.notification("n1", "s1", atMs: 5_000, .extend(longer)))
        #expect(world.subscription("s1")?.subscription.expiresMs == 200_000)
        #expect(decision.batch.recordedTypes.isEmpty)
        #expect(world.balance(owner) == balance)
    }

    @Test func aFamilySharedCopyCreatedByANotificationGrantsNothing() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        let shared = K.subscription("s1", token: world.token(of: owner), familyShared: true)
        try world.notify(notification("n1", shared, atMs: 2_000, .change(.renewal(C.term("s1b", purchasedMs: 100_000, expiresMs: 200_000)))))
        #expect(world.subscription("s1")?.subscription.terms.count == 2)
        #expect(world.balances(owner) == [K.coins: 0, K.gems: 0, K.stars: 0])
    }
}

@Suite("Notifications with transactions replay to the same state")
struct NotificationWithTransactionReplay {
    @Test func replayingTheBatchesGivesAnEqualState() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        let s1 = K.subscription("s1", token: world.token(of: owner))
        try world.notify(notification("n1", s1, atMs: 2_000, .change(.cancel)))
        try world.notify(notification("n2", K.subscription("s2", token: fixedToken(2)), atMs: 2_100, .change(.revoke)))
        try world.notify(C.notification("n3", "s1", atMs: 3_000, .upgrade(newProductID: "mixed_monthly",
                                                                        term: C.term("s1b", purchasedMs: 3_000, expiresMs: 150_000))))
        try world.notify(C.notification("n4", "s1", atMs: 4_000, .extend(C.term("s1b", purchasedMs: 3_000, expiresMs: 250_000))))
        try world.notify(notification("n5", s1, atMs: 4_100, .recordOnly))
        world.expire(atMs: 250_000)
        try world.notify(C.notification("n6", "s1", atMs: 250_500, .extend(C.term("s1b", purchasedMs: 3_000, expiresMs: 300_000))))
        _ = try world.create(token: fixedToken(2))
        #expect(world.subscription("s1")?.subscription.status == .active)
        var replayed = world.start
        for batch in world.batches { replayed.apply(batch) }
        #expect(replayed == world.state)
        #expect(replayed.events.events == world.state.events.events)
        #expect(replayed.purchases.nextDeadlineMs == world.state.purchases.nextDeadlineMs)
    }
}
