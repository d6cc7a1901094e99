@testable import GatehouseCore
import Testing

private typealias C = PurchaseCatalogue

/// What keeps a busy project bounded and its cursors honest: notification ids are forgotten
/// after 30 days, expiries after a long stop are cut into batches, and only what a document shows
/// moves a cursor.
@Suite struct PurchaseBounds {
    static let day: Int64 = 86_400_000

    @Test func notificationIDsAreForgottenAfterThirtyDaysAsNewOnesArrive() throws {
        var world = PurchaseWorld()
        let owner = try world.create("alice")
        try world.report(owner, C.subscription("t1", expiresMs: 400 * Self.day))
        try world.notify(C.notification("n1", "t1", atMs: 2_000, .cancel))
        #expect(world.state.purchases.hasSeen(notification: "n1", store: C.store))
        // Within 30 days the id is remembered: a repeat changes nothing.
        world.nowMs += 30 * Self.day
        let repeated = try world.state.notify(C.notification("n1", "t1", atMs: 2_000, .cancel), nowMs: world.nowMs)
        #expect(!repeated.applied && repeated.batch.changes.isEmpty)
        // A newer notification past the 30 days pushes the old id out.
        world.nowMs += 1
        try world.notify(C.notification("n2", "t1", atMs: 3_000, .uncancel))
        #expect(!world.state.purchases.hasSeen(notification: "n1", store: C.store))
        #expect(world.state.purchases.seenNotifications.map(\.key) == ["test:n2"])
        // A redelivery that old is applied again, and changes nothing: store dates order it.
        let before = try #require(world.subscription("t1"))
        let late = try world.notify(C.notification("n1", "t1", atMs: 2_000, .cancel))
        #expect(late.applied)
        #expect(try #require(world.subscription("t1")).subscription.looksTheSame(as: before.subscription))
        #expect(late.batch.recordedTypes.isEmpty)
    }

    @Test func aRebuiltBookRemembersTheSameIDs() throws {
        var world = PurchaseWorld()
        let owner = try world.create("alice")
        try world.report(owner, C.subscription("t1", expiresMs: 400 * Self.day))
        for index in 0..<5 {
            world.nowMs += 10 * Self.day
            try world.notify(C.notification("n\(index)", "t1", atMs: 2_000 + Int64(index), index % 2 == 0 ? .cancel : .uncancel))
        }
        let book = world.state.purchases
        // n0 is 40 days older than n4, n1 exactly 30 (kept).
        #expect(book.seenNotifications.map(\.key) == ["test:n1", "test:n2", "test:n3", "test:n4"])
        let rebuilt = PurchaseBook(
            subscriptions: Array(book.subscriptions.values), oneTimePurchases: Array(book.oneTimePurchases.values),
            grants: [], seenNotifications: book.seenNotifications, formerSources: book.formerSources)
        #expect(rebuilt == book)
        #expect(rebuilt.hasSeen(notification: "n3", store: C.store) && !rebuilt.hasSeen(notification: "n0", store: C.store))
    }

    @Test func expiriesAfterALongStopComeInBoundedBatches() throws {
        var world = PurchaseWorld()
        let owner = try world.create("alice")
        for index in 0..<25 {
            try world.report(owner, C.subscription("t\(index)", expiresMs: 10_000 + Int64(index)))
        }
        let batches = world.state.expiryBatches(nowMs: 50_000, deadlinesPerBatch: 10)
        #expect(batches.map { $0.changes.count } == [20, 20, 10])
        var batched = world.state
        for batch in batches { batched.apply(batch) }
        var single = world.state
        single.apply(world.state.expireDue(nowMs: 50_000))
        #expect(batched.purchases == single.purchases)
        #expect(batched.purchases.nextDeadlineMs == nil)
        #expect(batched.events.events.filter { $0.type == .expiration }.count == 25)
        #expect(batched.sequence == world.state.sequence + 3)
    }

    @Test func aStaleNotificationMovesNoCursor() throws {
        var world = PurchaseWorld()
        let owner = try world.create("alice")
        try world.report(owner, C.subscription("t1", expiresMs: 100_000))
        try world.notify(C.notification("n1", "t1", atMs: 5_000, .cancel))
        let cursor = world.profile(owner).cursor
        // Older than the cancel: it orders nothing new and changes nothing a document shows.
        let stale = try world.notify(C.notification("n2", "t1", atMs: 4_000, .uncancel))
        #expect(stale.applied && stale.batch.recordedTypes.isEmpty)
        #expect(world.profile(owner).cursor == cursor)
        #expect(world.subscription("t1")?.subscription.willRenew == false)
        // A second refund of a refunded one-time purchase is no change either.
        try world.report(owner, C.oneTime("o1"))
        try world.notify(C.notification("n3", "o1", atMs: 6_000, .refund(transactionID: "o1", fraction: 1)))
        let afterRefund = world.profile(owner).cursor
        let again = try world.notify(C.notification("n4", "o1", atMs: 7_000, .refund(transactionID: "o1", fraction: 1)))
        #expect(again.batch.changes.count == 1)  // only the notification id is remembered
        #expect(world.profile(owner).cursor == afterRefund)
    }

    @Test func holdingsOfAnAliasAreTheCanonicalProfiles() throws {
        var world = PurchaseWorld()
        let anonymous = try world.create()
        try world.report(anonymous, C.subscription("t1"))
        _ = try world.create("alice")
        try world.identify(anonymous, "alice")
        #expect(world.holdings(anonymous).subscriptions.map(\.originalTransactionID) == ["t1"])
    }

    @Test func aProfileThatLostAPurchaseListsItsEntitlementInactiveUntilItOwnsASourceAgain() throws {
        var world = PurchaseWorld()
        let first = try world.create("first")
        let second = try world.create("second")
        try world.report(first, C.subscription("t1", expiresMs: 100_000))
        try world.restore(second, [C.subscription("t1", expiresMs: 100_000)])
        let lost = try #require(world.entitlement("pro", of: first))
        #expect(!lost.isActive && lost.productID == "pro_monthly")
        #expect(world.entitlement("pro", of: second)?.isActive == true)
        #expect(world.holdings(first).subscriptions.isEmpty)
        // Moving back: the first owns it again and forgets it lost it; the second now remembers.
        try world.restore(first, [C.subscription("t1", expiresMs: 100_000)])
        #expect(world.entitlement("pro", of: first)?.isActive == true)
        #expect(world.state.purchases.formerSources[first] == nil)
        #expect(world.state.purchases.formerSources[second] == [FormerSource(kind: .subscription, key: C.key("t1"))])
    }

    @Test func whatAMergedProfileLostIsRememberedByTheProfileItMergedInto() throws {
        var world = PurchaseWorld()
        let anonymous = try world.create()
        let other = try world.create("other")
        try world.report(anonymous, C.oneTime("l1"))
        try world.report(other, C.oneTime("l1"))
        _ = try world.create("alice")
        let alice = try #require(world.state.profiles.profile(customerUserID: "alice")?.id)
        try world.identify(anonymous, "alice")
        #expect(world.state.purchases.formerSources[alice] == [FormerSource(kind: .oneTime, key: C.key("l1"))])
        #expect(world.entitlement("pro", of: alice)?.isActive == false)
    }

    @Test func idempotencyKeysLiveTwentyFourHours() throws {
        let window = Retention.standard.idempotencyMs
        #expect(window == 24 * 3_600_000)
        var world = PurchaseWorld.withCurrencies()
        let alice = try world.create("alice")
        let first = try world.transact(alice, 10, key: "k1")
        world.nowMs += window
        #expect(try world.transact(alice, 10, key: "k1").replayed, "within 24 hours a key answers its first result")
        world.nowMs += 1
        // Past its window the key is new again, even before anything has made the ledger forget it.
        let again = try world.transact(alice, 10, key: "k1")
        #expect(!again.replayed && again.transactionID != first.transactionID)
        #expect(world.state.currencies.idempotencyCount == 1, "its first use is forgotten as it is remembered again")
        #expect(world.state.currencies.idempotency["k1"]?.transactionID == again.transactionID)
        // Any later change lets a key out of its window go, not only a new key.
        world.nowMs += window + 1
        _ = try world.create("bob")
        #expect(world.state.currencies.idempotencyCount == 0)
        try world.transact(alice, 5, key: "k2")
        #expect(world.balance(alice) == 25)
        // A ledger rebuilt from its parts forgets the same keys next.
        let ledger = world.state.currencies
        let rebuilt = CurrencyLedger(histories: ledger.histories, termGrants: Array(ledger.termGrants.values),
                                     idempotency: ledger.idempotency)
        #expect(rebuilt == ledger)
    }
}
