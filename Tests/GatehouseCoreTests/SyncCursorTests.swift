import GatehouseBase
@testable import GatehouseCore
import Testing

// The sync cursor contract in the domain (PROTOCOL.md, "Sync and push"; DESIGN.md, "Events and
// cursors"): each kind of change moves exactly the parts of the profiles it changes, so a
// `sync` after the client's previous cursor reports those parts and nothing else.

private typealias C = PurchaseCatalogue
private typealias V = CurrencyCatalogue
private typealias Effects = ProjectState.BatchEffects

/// A client of one profile: remembers the cursor its last sync answered.
private struct SyncClient {
    let id: ProfileID
    var cursor: UInt64

    init(_ world: PurchaseWorld, _ id: ProfileID) throws {
        self.id = id
        cursor = try world.state.sync(profile: id, cursor: nil).cursor
        // Holding the answered cursor, nothing has changed.
        #expect(try world.state.sync(profile: id, cursor: cursor).changed == [])
    }

    /// What changed since the last sync; the client then holds the answered cursor, which never
    /// goes back, and a repeat of the sync with it reports nothing.
    mutating func sync(_ world: PurchaseWorld) throws -> [SyncPart] {
        let decision = try world.state.sync(profile: id, cursor: cursor)
        #expect(decision.cursor >= cursor, "the cursor never goes back")
        if decision.changed.isEmpty {
            #expect(decision.cursor == cursor, "nothing changed: the client's cursor comes back")
        } else {
            #expect(decision.cursor == world.state.sequence, "a change answers the latest cursor")
        }
        cursor = decision.cursor
        if decision.profileID == id {
            #expect(try world.state.sync(profile: id, cursor: cursor).changed == [])
        }
        return decision.changed
    }
}

/// Runs `body` on the world and answers the effects of the batches it applied, one per batch.
private func effects(_ world: inout PurchaseWorld, _ body: (inout PurchaseWorld) throws -> Void) throws -> [Effects] {
    var replay = world.state
    let first = world.batches.count
    try body(&world)
    return world.batches[first...].map { replay.apply($0) }
}

private func only(_ changed: [ProfileID] = [], touched: [ProfileID] = [], removed: [ProfileID] = [], config: Bool = false)
    -> [Effects]
{
    [Effects(changedProfiles: changed.sorted(), touchedProfiles: touched.sorted(), removedProfiles: removed.sorted(),
             configChanged: config)]
}

@Suite struct SyncCursorTests {
    static let day: Int64 = 86_400_000

    // MARK: Identity

    @Test func identifyReportsIdentity() throws {
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create()
        var client = try SyncClient(world, p)
        let e = try effects(&world) { try $0.identify(p, "alice") }
        #expect(try client.sync(world) == [.identity])
        #expect(e == only([p]))
    }

    @Test func tokenAssignmentReportsIdentity() throws {
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create("alice")
        var client = try SyncClient(world, p)
        let e = try effects(&world) { try $0.identify(p, "alice", token: fixedToken(7)) }
        #expect(world.token(of: p) == fixedToken(7))
        #expect(try client.sync(world) == [.identity])
        #expect(e == only([p]))
    }

    @Test func tokenAssignmentThatClaimsAHeldPurchaseReportsWhatItBrings() throws {
        var world = PurchaseWorld.withCurrencies()
        // A store purchase for a token no one holds yet is held unowned, with its grant pending.
        try world.notify(C.purchaseNotification("n1", V.subscription("t1", token: fixedToken(9))))
        #expect(world.owner("t1") == nil)
        let p = try world.create("alice")
        var client = try SyncClient(world, p)
        let e = try effects(&world) { try $0.identify(p, "alice", token: fixedToken(9)) }
        #expect(world.owner("t1") == p)
        #expect(try client.sync(world) == [.identity, .entitlements, .currencies, .purchases])
        #expect(e == only([p]))
    }

    @Test func mergeWithoutPurchasesReportsIdentityOnTheTarget() throws {
        var world = PurchaseWorld.withCurrencies()
        let target = try world.create("alice")
        let source = try world.create()
        var client = try SyncClient(world, target)
        let e = try effects(&world) { try $0.identify(source, "alice") }
        #expect(try client.sync(world) == [.identity])
        #expect(e == only([target], removed: [source]))
    }

    @Test func mergeOfAProfileWithPurchasesReportsThemOnTheTarget() throws {
        var world = PurchaseWorld.withCurrencies()
        let target = try world.create("alice")
        let source = try world.create()
        try world.report(source, C.subscription("t1", expiresMs: 100 * Self.day))
        var client = try SyncClient(world, target)
        let e = try effects(&world) { try $0.identify(source, "alice") }
        // Its entitlement `pro` now shows on the target too.
        #expect(try client.sync(world) == [.identity, .entitlements, .purchases])
        #expect(e == only([target], removed: [source]))
    }

    @Test func mergeOfAProfileWithABalanceReportsCurrencies() throws {
        var world = PurchaseWorld.withCurrencies()
        let target = try world.create("alice")
        let source = try world.create()
        try world.transact(source, 5, key: "k1")
        var client = try SyncClient(world, target)
        try world.identify(source, "alice")
        #expect(try client.sync(world) == [.identity, .currencies])
    }

    @Test func mergeOfAProfileWithOnlyAGrantReportsEntitlementsNotPurchases() throws {
        var world = PurchaseWorld.withCurrencies()
        let target = try world.create("alice")
        let source = try world.create()
        try world.grant(source, "extra", expiresMs: nil)
        var client = try SyncClient(world, target)
        try world.identify(source, "alice")
        #expect(world.holdings(target).subscriptions.isEmpty && world.holdings(target).purchases.isEmpty)
        #expect(try client.sync(world) == [.identity, .entitlements])
    }

    @Test func anAliasReportsIdentityAndTheCanonicalProfile() throws {
        var world = PurchaseWorld.withCurrencies()
        let target = try world.create("alice")
        let source = try world.create()
        let before = try world.state.sync(profile: source, cursor: nil).cursor
        try world.identify(source, "alice")
        let decision = try world.state.sync(profile: source, cursor: before)
        #expect(decision.profileID == target)
        #expect(decision.changed == [.identity])
        #expect(decision.cursor == world.state.sequence)
        // Even at the latest cursor, an alias tells the app to move to the canonical profile.
        let again = try world.state.sync(profile: source, cursor: decision.cursor)
        #expect(again.profileID == target && again.changed == [.identity] && again.cursor == decision.cursor)
        // Without a cursor: everything, about the canonical profile.
        let first = try world.state.sync(profile: source, cursor: nil)
        #expect(first.profileID == target && first.changed == SyncPart.allCases)
    }

    // MARK: Purchases and the store

    @Test func aSubscriptionReportsPurchasesAndEntitlements() throws {
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create("alice")
        var client = try SyncClient(world, p)
        let e = try effects(&world) { try $0.report(p, C.subscription("t1", expiresMs: 100 * Self.day)) }
        #expect(try client.sync(world) == [.entitlements, .purchases])
        #expect(e == only([p]))
        // One that grants a currency reports currencies too.
        let q = try world.create("bob")
        var other = try SyncClient(world, q)
        try world.report(q, V.subscription("t2", product: "big_monthly", expiresMs: 100 * Self.day))
        #expect(try other.sync(world) == [.entitlements, .currencies, .purchases])
        // Another source of an entitlement already shown the same way changes purchases only.
        try world.report(q, V.subscription("t3", product: "pro_monthly", expiresMs: 50 * Self.day))
        #expect(world.entitlement("pro", of: q)?.productID == "big_monthly")
        #expect(try other.sync(world) == [.purchases])
    }

    @Test func aConsumableReportsPurchasesAndCurrenciesOnlyWhenItGrants() throws {
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create("alice")
        var client = try SyncClient(world, p)
        try world.report(p, V.oneTime("c1", product: "coin_pack"))
        #expect(try client.sync(world) == [.currencies, .purchases])
        try world.report(p, V.oneTime("c2", product: "coins"))
        #expect(try client.sync(world) == [.purchases])
    }

    @Test func aRenewalReportsPurchasesAndEntitlements() throws {
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create("alice")
        try world.report(p, C.subscription("t1", expiresMs: 30 * Self.day))
        var client = try SyncClient(world, p)
        let e = try effects(&world) {
            try $0.notify(V.renewal("n1", "t1", id: "t1-2", purchasedMs: 30 * Self.day, expiresMs: 60 * Self.day))
        }
        #expect(world.entitlement("pro", of: p)?.expiresMs == 60 * Self.day)
        #expect(try client.sync(world) == [.entitlements, .purchases])
        #expect(e == only([p]))
    }

    @Test func aCancelReportsPurchasesAndEntitlements() throws {
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create("alice")
        try world.report(p, C.subscription("t1", expiresMs: 30 * Self.day))
        var client = try SyncClient(world, p)
        try world.notify(C.notification("n1", "t1", atMs: 5_000, .cancel))
        #expect(world.entitlement("pro", of: p)?.willRenew == false)
        #expect(try client.sync(world) == [.entitlements, .purchases])
    }

    @Test func aStaleNotificationReportsNothing() throws {
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create("alice")
        try world.report(p, C.subscription("t1", expiresMs: 30 * Self.day))
        try world.notify(C.notification("n1", "t1", atMs: 5_000, .cancel))
        var client = try SyncClient(world, p)
        let e = try effects(&world) { try $0.notify(C.notification("n2", "t1", atMs: 4_000, .uncancel)) }
        #expect(e.count == 1, "the notification id is still logged")
        #expect(try client.sync(world) == [])
        #expect(e == only())
    }

    @Test func grantAndRevokeReportEntitlementsOnly() throws {
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create("alice")
        var client = try SyncClient(world, p)
        let granted = try effects(&world) { try $0.grant(p, "extra", expiresMs: nil) }
        #expect(try client.sync(world) == [.entitlements])
        #expect(granted == only([p]))
        let revoked = try effects(&world) { try $0.revoke(p, "extra") }
        #expect(try client.sync(world) == [.entitlements])
        #expect(revoked == only([p]))
        // A revoke with nothing to revoke changes nothing.
        try world.revoke(p, "extra")
        #expect(try client.sync(world) == [])
    }

    @Test func aTransferReportsBothProfiles() throws {
        var world = PurchaseWorld.withCurrencies()
        let first = try world.create("alice")
        let second = try world.create("bob")
        let subscription = C.subscription("t1", expiresMs: 30 * Self.day)
        try world.report(first, subscription)
        var a = try SyncClient(world, first)
        var b = try SyncClient(world, second)
        let e = try effects(&world) { try $0.restore(second, [subscription]) }
        #expect(world.owner("t1") == second)
        #expect(try a.sync(world) == [.entitlements, .purchases])
        #expect(try b.sync(world) == [.entitlements, .purchases])
        #expect(e == only([first, second]))
    }

    @Test func aChangeToAPurchaseAProfileLostStillShowsInItsEntitlements() throws {
        // The profile that lost a subscription to a transfer lists its entitlement, inactive,
        // from that subscription: when the subscription changes, so does what its document shows.
        var world = PurchaseWorld.withCurrencies()
        let first = try world.create("alice")
        let second = try world.create("bob")
        let subscription = C.subscription("t1", expiresMs: 30 * Self.day)
        try world.report(first, subscription)
        try world.restore(second, [subscription])
        var a = try SyncClient(world, first)
        var b = try SyncClient(world, second)
        let shown = world.entitlement("pro", of: first)
        #expect(shown?.isActive == false)
        try world.notify(V.renewal("n1", "t1", id: "t1-2", purchasedMs: 30 * Self.day, expiresMs: 60 * Self.day))
        #expect(try b.sync(world) == [.entitlements, .purchases])
        let now = world.entitlement("pro", of: first)
        try #require(now != shown, "the first profile's document shows the renewal")
        #expect(try a.sync(world) == [.entitlements])
    }

    // MARK: Currencies, attributes, config, deletes

    @Test func aTransactionReportsCurrenciesOnly() throws {
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create("alice")
        var client = try SyncClient(world, p)
        let e = try effects(&world) { try $0.transact(p, 10, key: "k1") }
        #expect(try client.sync(world) == [.currencies])
        #expect(e == only([p]))
    }

    @Test func attributesReportNothing() throws {
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create("alice")
        var client = try SyncClient(world, p)
        let e = try effects(&world) {
            $0.commit(try $0.state.updateAttributes(profile: p, [.init(key: "plan", value: "gold")], nowMs: $0.nowMs))
        }
        #expect(world.profile(p).attributeValues == ["plan": "gold"])
        #expect(try client.sync(world) == [])
        #expect(e == only(touched: [p]), "no sync part moves; the document (its attributes, last seen) did")
    }

    @Test func aConfigChangeReportsOfferingsOnly() throws {
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create("alice")
        var client = try SyncClient(world, p)
        var config = V.config()
        config.gracePeriodMs = 1_000
        let e = try effects(&world) { $0.apply(ProjectState.ChangeBatch([.configReplaced(config)], atMs: $0.nowMs)) }
        #expect(try client.sync(world) == [.offerings])
        #expect(e == only(config: true))
    }

    @Test func deletingAnotherProfileReportsNothingForThisOne() throws {
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create("alice")
        let other = try world.create("bob")
        try world.report(other, C.subscription("t1", expiresMs: 30 * Self.day))
        var client = try SyncClient(world, p)
        let e = try effects(&world) { try $0.delete(other) }
        #expect(try client.sync(world) == [])
        #expect(e == only(removed: [other]))
        #expect(rejectionCode { () throws(GatehouseError) in try world.state.sync(profile: other, cursor: nil) } == .notFound)
    }

    // MARK: Time

    @Test func anExpiryByTimeReportsEntitlementsAndPurchases() throws {
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create("alice")
        try world.report(p, C.subscription("t1", expiresMs: 30 * Self.day))
        var client = try SyncClient(world, p)
        // Nothing is due before the end of the term.
        #expect(world.expire(atMs: 30 * Self.day - 1).changes.isEmpty)
        #expect(try client.sync(world) == [])
        let e = try effects(&world) { $0.expire(atMs: 30 * Self.day) }
        #expect(world.entitlement("pro", of: p)?.isActive == false)
        #expect(try client.sync(world) == [.entitlements, .purchases])
        #expect(e == only([p]))
    }

    @Test func anExpiryRunLateStillReportsEntitlements() throws {
        // The timer fired long after the deadline: the "before" view is the one before the deadline.
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create("alice")
        try world.report(p, C.subscription("t1", expiresMs: 30 * Self.day))
        var client = try SyncClient(world, p)
        world.expire(atMs: 90 * Self.day)
        #expect(try client.sync(world) == [.entitlements, .purchases])
    }

    @Test func aGrantExpiryReportsEntitlementsOnly() throws {
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create("alice")
        try world.grant(p, "extra", expiresMs: 10 * Self.day)
        var client = try SyncClient(world, p)
        let e = try effects(&world) { $0.expire(atMs: 12 * Self.day) }
        #expect(world.entitlement("extra", of: p)?.isActive == false)
        #expect(try client.sync(world) == [.entitlements])
        #expect(e == only([p]))
    }

    // MARK: The cursor

    @Test func withoutACursorEveryPartIsReported() throws {
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create("alice")
        let first = try world.state.sync(profile: p, cursor: nil)
        #expect(first.profileID == p && first.changed == SyncPart.allCases)
        #expect(first.cursor == max(world.profile(p).cursor, world.state.configCursor))
        // The config came first here: the profile's creation is the latest change.
        #expect(first.cursor == world.state.sequence)
    }

    @Test func aCursorAtTheLatestReportsNothingAndComesBack() throws {
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create("alice")
        try world.transact(p, 10, key: "k1")
        let latest = world.state.sequence
        let decision = try world.state.sync(profile: p, cursor: latest)
        #expect(decision.changed == [] && decision.cursor == latest && decision.profileID == p)
        // Changes to other profiles do not concern it.
        let other = try world.create("bob")
        try world.transact(other, 10, key: "k2")
        #expect(try world.state.sync(profile: p, cursor: latest).changed == [])
        #expect(try world.state.sync(profile: p, cursor: latest).cursor == latest)
    }

    @Test func anOlderCursorReportsEveryPartChangedSinceIt() throws {
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create("alice")
        let start = try world.state.sync(profile: p, cursor: nil).cursor
        try world.transact(p, 10, key: "k1")
        let afterTransact = world.state.sequence
        try world.grant(p, "extra", expiresMs: nil)
        #expect(try world.state.sync(profile: p, cursor: start).changed == [.entitlements, .currencies])
        #expect(try world.state.sync(profile: p, cursor: afterTransact).changed == [.entitlements])
    }

    @Test func theCursorNeverGoesBack() throws {
        var world = PurchaseWorld.withCurrencies()
        let p = try world.create()
        var client = try SyncClient(world, p)
        var seen = client.cursor
        var steps: [(inout PurchaseWorld) throws -> Void] = [
            { try $0.transact(p, 3, key: "a") },
            { try $0.identify(p, "alice") },
            { _ = try $0.create("bob") },
            { try $0.report(p, C.subscription("t1", expiresMs: 10 * Self.day)) },
            { $0.expire(atMs: 11 * Self.day) },
            { $0.apply(ProjectState.ChangeBatch([.configReplaced(V.config())], atMs: $0.nowMs)) },
            { try $0.grant(p, "extra", expiresMs: nil) },
        ]
        steps.append { try $0.transact(p, -3, key: "b") }
        for step in steps {
            try step(&world)
            _ = try client.sync(world)
            #expect(client.cursor >= seen)
            seen = client.cursor
            #expect(try client.sync(world) == [])
        }
        // A client cursor past the latest comes back as it is, never lower.
        let ahead = world.state.sequence + 50
        #expect(try world.state.sync(profile: p, cursor: ahead).cursor == ahead)
        try world.transact(p, 1, key: "c")
        let decision = try world.state.sync(profile: p, cursor: ahead)
        #expect(decision.cursor >= ahead)
    }

    @Test func unknownAndForeignProfiles() throws {
        let world = PurchaseWorld.withCurrencies()
        let unknown = ProfileID.make(tag: world.state.profileTag, random: SeededRandomSource(seed: 404))
        #expect(rejectionCode { () throws(GatehouseError) in try world.state.sync(profile: unknown, cursor: 0) } == .notFound)
        let otherTag = ProfileID.tag(for: try ProjectID(validating: "other"))
        let foreign = ProfileID.make(tag: otherTag, random: SeededRandomSource(seed: 5))
        #expect(rejectionCode { () throws(GatehouseError) in try world.state.sync(profile: foreign, cursor: 0) } == .forbidden)
    }
}
