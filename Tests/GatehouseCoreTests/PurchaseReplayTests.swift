import GatehouseBase
@testable import GatehouseCore
import Testing

// A rule's decision carries everything replay needs: applying the same batches to a fresh copy of
// the starting state gives an equal state, and a purchase book rebuilt from its stored parts
// answers every question the same as the one it came from.

private typealias C = PurchaseCatalogue

@Suite("Purchase decisions replay to the same state")
struct PurchaseReplay {
    /// A scripted life touching every purchase rule: reports, a restore under transfer, store
    /// notifications (owned, unowned, repeated), grants and revokes, expiry, a merge, a delete,
    /// and a profile taking the token of unowned purchases.
    static func scriptedWorld() throws -> PurchaseWorld {
        var world = PurchaseWorld(login: .alias, gracePeriodMs: 5_000)
        let alice = try world.create("alice")
        let anonymous = try world.create()
        let bob = try world.create("bob")
        try world.report(anonymous, C.subscription("s1", expiresMs: 20_000, token: world.token(of: anonymous)))
        try world.report(anonymous, C.oneTime("p1"))
        try world.grant(anonymous, "extra", expiresMs: 15_000)
        try world.report(bob, C.subscription("s2", product: "premium_monthly", expiresMs: 30_000))
        try world.notify(C.purchaseNotification("n1", C.subscription("s3", expiresMs: 25_000, token: fixedToken(3))))
        try world.notify(C.notification("n2", "s1", atMs: 5_000, .cancel))
        try world.notify(C.notification("n2", "s1", atMs: 5_000, .cancel))
        world.nowMs = 6_000
        try world.identify(anonymous, "alice")
        try world.restore(bob, [C.oneTime("p1"), C.subscription("s2", product: "premium_monthly", expiresMs: 30_000)])
        try world.notify(C.notification("n3", "s2", atMs: 19_000, .billingIssue(graceExpiresMs: nil)))
        try world.grant(alice, "pro", expiresMs: nil)
        try world.revoke(alice, "pro")
        world.expire(atMs: 15_000)
        world.expire(atMs: 20_000)
        try world.notify(C.notification("n4", "p1", atMs: 21_000, .refund(transactionID: "p1", fraction: 1)))
        world.expire(atMs: 40_000)
        try world.delete(bob)
        _ = try world.create(token: fixedToken(3))
        try world.notify(C.purchaseNotification("n5", C.oneTime("p4", purchasedMs: 41_000, token: fixedToken(4))))
        return world
    }

    @Test func replayingTheBatchesOnAFreshCopyGivesAnEqualState() throws {
        let world = try Self.scriptedWorld()
        #expect(world.batches.count > 15)
        var replayed = world.start
        for batch in world.batches { replayed.apply(batch) }
        #expect(replayed == world.state)
        #expect(replayed.sequence == world.state.sequence)
        #expect(replayed.events.events == world.state.events.events)
        #expect(replayed.purchases.nextDeadlineMs == world.state.purchases.nextDeadlineMs)
    }

    @Test func replayingAPrefixGivesTheStateAtThatPoint() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        var states: [ProjectState] = [world.state]
        try world.report(owner, C.subscription("s1", expiresMs: 10_000))
        states.append(world.state)
        try world.notify(C.notification("n1", "s1", atMs: 2_000, .productChange(newProductID: "pro_yearly")))
        states.append(world.state)
        world.expire(atMs: 10_000)
        states.append(world.state)
        var replayed = world.start
        for (index, batch) in world.batches.enumerated() {
            replayed.apply(batch)
            #expect(replayed == states[index], "after batch \(index)")
        }
    }

    @Test func aBookRebuiltFromItsStoredPartsAnswersTheSame() throws {
        let world = try Self.scriptedWorld()
        let book = world.state.purchases
        let grants = book.grants.flatMap { profile, byEntitlement in byEntitlement.values.map { (profile, $0) } }
        let rebuilt = PurchaseBook(
            subscriptions: Array(book.subscriptions.values), oneTimePurchases: Array(book.oneTimePurchases.values),
            grants: grants, seenNotifications: book.seenNotifications, formerSources: book.formerSources)
        #expect(rebuilt == book)
        #expect(rebuilt.nextDeadlineMs == book.nextDeadlineMs)
        for nowMs in [Int64(0), 30_000, 50_000, Int64.max] {
            #expect(rebuilt.due(nowMs: nowMs) == book.due(nowMs: nowMs))
        }
        for profile in world.state.profiles.all {
            #expect(rebuilt.subscriptions(ownedBy: profile.id) == book.subscriptions(ownedBy: profile.id))
            #expect(rebuilt.oneTimePurchases(ownedBy: profile.id) == book.oneTimePurchases(ownedBy: profile.id))
            #expect(rebuilt.ownsPurchase(profile.id) == book.ownsPurchase(profile.id))
            #expect(rebuilt.grants(of: profile.id) == book.grants(of: profile.id))
        }
        // The purchases held under a token attach the same way.
        let taker = try #require(world.state.profiles.all.first).id
        var original = book
        var copy = rebuilt
        let claimedFromOriginal = original.claim(token: fixedToken(4), for: taker)
        let claimedFromCopy = copy.claim(token: fixedToken(4), for: taker)
        #expect(!claimedFromOriginal.isEmpty && claimedFromCopy == claimedFromOriginal)
        #expect(copy == original)
        #expect(copy.ownsPurchase(taker) && original.ownsPurchase(taker))
    }
}
