import GatehouseBase
@testable import GatehouseCore
import Testing

// DESIGN.md, "Profiles and identity" rule 3: under `login: alias` an anonymous profile merged
// into an identified one brings its purchases and grants along. "Who owns a purchase": a deleted
// profile's purchases are held unowned under their tokens until a profile takes that token.

private typealias C = PurchaseCatalogue

@Suite("A merge moves purchases and grants with their ownership")
struct PurchaseMerge {
    /// An identified profile (alice) and an anonymous one holding s1, p1 and a grant of `extra`.
    static func world(login: LoginMode) throws -> (PurchaseWorld, identified: ProfileID, anonymous: ProfileID) {
        var world = PurchaseWorld(login: login)
        let identified = try world.create("alice")
        let anonymous = try world.create()
        try world.report(anonymous, C.subscription("s1", expiresMs: 100_000, token: world.token(of: anonymous)))
        try world.report(anonymous, C.oneTime("p1", token: world.token(of: anonymous)))
        try world.grant(anonymous, "extra", expiresMs: 50_000)
        return (world, identified, anonymous)
    }

    @Test func underAliasEverythingMovesToTheIdentifiedProfile() throws {
        var (world, identified, anonymous) = try Self.world(login: .alias)
        let decision = try world.identify(anonymous, "alice")
        #expect(decision.mergedFrom == [anonymous])
        #expect(world.owner("s1") == identified)
        #expect(world.owner("p1") == identified)
        #expect(world.state.purchases.grants(of: identified).map(\.entitlementID) == ["extra"])
        #expect(world.state.purchases.grants(of: anonymous).isEmpty)
        #expect(world.state.ownsPurchase(identified))
        #expect(!world.state.ownsPurchase(anonymous))
        let holdings = world.holdings(identified)
        #expect(holdings.subscriptions.map(\.originalTransactionID) == ["s1"])
        #expect(holdings.purchases.map(\.transactionID) == ["p1"])
        #expect(holdings.entitlements.map(\.entitlementID) == ["extra", "pro"])
        #expect(holdings.entitlements.allSatisfy { $0.isActive })
        #expect(world.profile(identified).cursor == world.state.sequence)
    }

    @Test func afterAMergeStoreEventsAndTheTimerReportTheNewOwner() throws {
        var (world, identified, anonymous) = try Self.world(login: .alias)
        try world.identify(anonymous, "alice")
        let decision = try world.notify(C.notification("n1", "s1", atMs: 3_000, .cancel))
        #expect(decision.profileID == identified)
        #expect(world.feed.last?.profileID == identified)
        #expect(world.feed.last?.customerUserID == "alice")
        world.expire(atMs: 50_000)
        #expect(world.feed.last?.detail("entitlement") == .string("extra"))
        #expect(world.feed.last?.profileID == identified)
        world.expire(atMs: 100_000)
        #expect(world.feed.last?.detail("original_transaction_id") == .string("s1"))
        #expect(world.feed.last?.profileID == identified)
        #expect(world.profile(identified).cursor == world.state.sequence)
    }

    @Test func aPurchaseCarryingTheMergedTokenLaterGoesToTheIdentifiedProfile() throws {
        var (world, identified, anonymous) = try Self.world(login: .alias)
        let mergedToken = world.token(of: anonymous)
        try world.identify(anonymous, "alice")
        try world.notify(C.purchaseNotification("n1", C.subscription("s2", product: "premium_monthly", token: mergedToken)))
        #expect(world.owner("s2") == identified)
    }

    @Test func ofTwoGrantsOfOneEntitlementTheLongerLastingStays() throws {
        var (world, identified, anonymous) = try Self.world(login: .alias)
        try world.grant(identified, "extra", expiresMs: 30_000)
        try world.grant(anonymous, "pro", expiresMs: nil)
        try world.grant(identified, "pro", expiresMs: 90_000)
        try world.identify(anonymous, "alice")
        #expect(world.state.purchases.grant(of: identified, entitlement: "extra")?.expiresMs == 50_000)
        #expect(world.state.purchases.grant(of: identified, entitlement: "pro")?.expiresMs == nil)
        // The grant that gave way never expires; the one kept does, once.
        #expect(world.state.purchases.nextDeadlineMs == 50_000)
        #expect(world.expire(atMs: 30_000).changes.isEmpty)
        #expect(world.expire(atMs: 50_000).recordedTypes == [.expiration])
    }

    @Test func underSwitchTheAnonymousProfileKeepsEverything() throws {
        var (world, identified, anonymous) = try Self.world(login: .switch)
        let decision = try world.identify(anonymous, "alice")
        #expect(decision.switched && decision.mergedFrom.isEmpty)
        #expect(world.owner("s1") == anonymous)
        #expect(world.owner("p1") == anonymous)
        #expect(world.state.purchases.grants(of: anonymous).count == 1)
        #expect(world.holdings(identified).subscriptions.isEmpty)
        #expect(world.holdings(identified).entitlements.isEmpty)
    }

    @Test func theIdentifiedProfileKeepsWhatItOwnedToo() throws {
        var (world, identified, anonymous) = try Self.world(login: .alias)
        try world.report(identified, C.subscription("s2", product: "premium_monthly"))
        try world.identify(anonymous, "alice")
        #expect(world.holdings(identified).subscriptions.map(\.originalTransactionID) == ["s1", "s2"])
    }
}

@Suite("A deleted profile's purchases are held unowned under their tokens")
struct PurchaseDeletion {
    @Test func deletingLeavesPurchasesUnownedUnderTheirTokensAndDropsGrants() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        let token = world.token(of: owner)
        try world.report(owner, C.subscription("s1", token: token))
        try world.report(owner, C.oneTime("p1", token: token))
        try world.grant(owner, "extra", expiresMs: nil)
        try world.delete(owner)
        #expect(world.subscription("s1")?.owner == nil)
        #expect(world.subscription("s1")?.token == token)
        #expect(world.oneTime("p1")?.owner == nil)
        #expect(world.oneTime("p1")?.token == token)
        #expect(world.state.purchases.grants(of: owner).isEmpty)
        #expect(!world.state.ownsPurchase(owner))
        // A store event meanwhile is recorded for nobody.
        let decision = try world.notify(C.notification("n1", "s1", atMs: 3_000, .cancel))
        #expect(decision.profileID == nil)
        #expect(world.feed.last?.profileID == nil)
    }

    @Test func aNewProfileCreatedWithTheTokenGetsThem() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        let token = world.token(of: owner)
        try world.report(owner, C.subscription("s1", token: token))
        try world.report(owner, C.oneTime("p1", token: token))
        try world.delete(owner)
        let successor = try world.create(token: token)
        #expect(world.owner("s1") == successor)
        #expect(world.owner("p1") == successor)
        #expect(world.entitlement("pro", of: successor)?.isActive == true)
        #expect(world.state.ownsPurchase(successor))
    }

    @Test func purchasesOfAMergedProfileWaitUnderItsToken() throws {
        var world = PurchaseWorld(login: .alias)
        let identified = try world.create("alice")
        let anonymous = try world.create()
        let mergedToken = world.token(of: anonymous)
        try world.report(anonymous, C.subscription("s1", token: mergedToken))
        try world.identify(anonymous, "alice")
        try world.delete(identified)
        #expect(world.subscription("s1")?.owner == nil)
        let successor = try world.create(token: mergedToken)
        #expect(world.owner("s1") == successor)
    }

    @Test func aPurchaseWithoutATokenWaitsForARestore() throws {
        var world = PurchaseWorld(restore: .keep)
        let owner = try world.create()
        try world.report(owner, C.subscription("s1"))
        try world.delete(owner)
        let successor = try world.create()
        #expect(world.subscription("s1")?.owner == nil)
        let decision = try world.restore(successor, [C.subscription("s1")])
        #expect(decision.keptByOther.isEmpty)
        #expect(world.owner("s1") == successor)
    }
}
