import GatehouseBase
@testable import GatehouseCore
import Testing

// DESIGN.md, "Who owns a purchase": when the server first learns of a purchase its owner is
// (1) the profile whose app account token (or an alias's) the transaction carries, (2) else the
// profile that reported it, (3) else nobody yet, held under its token until a profile takes that
// token or restores it. Once owned, a store notification never moves it.

private typealias C = PurchaseCatalogue

/// A subscription or a one-time purchase, so each ownership rule is checked for both.
enum PurchaseKind: String, CaseIterable, Sendable {
    case subscription
    case oneTime

    func transaction(_ id: String, token: AppAccountToken? = nil) -> StoreTransaction {
        switch self {
        case .subscription: C.subscription(id, token: token)
        case .oneTime: C.oneTime(id, token: token)
        }
    }

    func held(_ world: PurchaseWorld, _ id: String) -> (owner: ProfileID?, token: AppAccountToken?)? {
        switch self {
        case .subscription: world.subscription(id).map { ($0.owner, $0.token) }
        case .oneTime: world.oneTime(id).map { ($0.owner, $0.token) }
        }
    }

    var firstEvent: EventType { self == .subscription ? .initialPurchase : .nonRenewingPurchase }

    /// Whether the profile's holdings list the purchase.
    func isHeld(_ id: String, by profile: ProfileID, in world: PurchaseWorld) -> Bool {
        let holdings = world.holdings(profile)
        switch self {
        case .subscription: return holdings.subscriptions.contains { $0.originalTransactionID == id }
        case .oneTime: return holdings.purchases.contains { $0.transactionID == id }
        }
    }
}

@Suite("A new purchase goes to the token's profile, else the reporter, else nobody")
struct NewPurchaseOwnership {
    @Test(arguments: PurchaseKind.allCases)
    func theProfileHoldingTheTokenOwnsAPurchaseAnotherReports(_ kind: PurchaseKind) throws {
        var world = PurchaseWorld()
        let holder = try world.create()
        let reporter = try world.create()
        let decision = try world.report(reporter, kind.transaction("p1", token: world.token(of: holder)))
        #expect(world.owner("p1") == holder)
        #expect(kind.isHeld("p1", by: holder, in: world))
        #expect(!kind.isHeld("p1", by: reporter, in: world))
        #expect(decision.transferredFrom.isEmpty)
        #expect(world.feed.map(\.type) == [kind.firstEvent])
        #expect(world.feed.last?.profileID == holder)
        #expect(world.profile(holder).cursor == world.state.sequence)
    }

    @Test(arguments: PurchaseKind.allCases)
    func aTokenOfAMergedProfileResolvesToTheProfileItWasMergedInto(_ kind: PurchaseKind) throws {
        var world = PurchaseWorld(login: .alias)
        let identified = try world.create("alice")
        let anonymous = try world.create()
        let mergedToken = world.token(of: anonymous)
        try world.identify(anonymous, "alice")
        #expect(world.state.profiles.profile(anonymous)?.id == identified)
        let reporter = try world.create()
        try world.report(reporter, kind.transaction("p1", token: mergedToken))
        #expect(world.owner("p1") == identified)
        // A store notification of a new purchase follows the same rule.
        try world.notify(C.purchaseNotification("n1", kind.transaction("p2", token: mergedToken)))
        #expect(world.owner("p2") == identified)
        #expect(world.feed.last?.profileID == identified)
    }

    @Test(arguments: PurchaseKind.allCases)
    func theReporterOwnsAPurchaseWithNoTokenOrAnUnknownOne(_ kind: PurchaseKind) throws {
        var world = PurchaseWorld()
        let reporter = try world.create()
        let decision = try world.report(reporter, kind.transaction("p1"))
        #expect(decision.profileID == reporter)
        try world.report(reporter, kind.transaction("p2", token: fixedToken(9)))
        #expect(world.owner("p1") == reporter)
        #expect(world.owner("p2") == reporter)
        #expect(kind.held(world, "p2")?.token == fixedToken(9))
        #expect(world.state.ownsPurchase(reporter))
    }

    @Test(arguments: PurchaseKind.allCases)
    func aReportThroughAnAliasGoesToTheProfileTheAliasResolvesTo(_ kind: PurchaseKind) throws {
        var world = PurchaseWorld(login: .alias)
        let identified = try world.create("alice")
        let anonymous = try world.create()
        try world.identify(anonymous, "alice")
        let decision = try world.report(anonymous, kind.transaction("p1"))
        #expect(decision.profileID == identified)
        #expect(world.owner("p1") == identified)
    }

    @Test(arguments: PurchaseKind.allCases)
    func aStorePurchaseWithNoKnownTokenIsHeldUnownedUnderItsToken(_ kind: PurchaseKind) throws {
        var world = PurchaseWorld()
        let bystander = try world.create()
        let decision = try world.notify(C.purchaseNotification("n1", kind.transaction("p1", token: fixedToken(1))))
        #expect(decision.applied)
        #expect(decision.profileID == nil)
        #expect(kind.held(world, "p1")?.owner == nil)
        #expect(kind.held(world, "p1")?.token == fixedToken(1))
        #expect(world.feed.map(\.type) == [kind.firstEvent])
        #expect(world.feed.last?.profileID == nil)
        #expect(!kind.isHeld("p1", by: bystander, in: world))
        #expect(!world.state.ownsPurchase(bystander))
    }

    @Test(arguments: PurchaseKind.allCases)
    func aStorePurchaseCarryingAProfilesTokenGoesToThatProfile(_ kind: PurchaseKind) throws {
        var world = PurchaseWorld()
        let holder = try world.create()
        let decision = try world.notify(C.purchaseNotification("n1", kind.transaction("p1", token: world.token(of: holder))))
        #expect(decision.profileID == holder)
        #expect(world.owner("p1") == holder)
        #expect(world.feed.last?.profileID == holder)
        #expect(world.profile(holder).cursor == world.state.sequence)
    }
}

@Suite("An unowned purchase attaches to the profile that takes its token or reports it")
struct UnownedPurchaseAttachment {
    @Test(arguments: PurchaseKind.allCases)
    func aProfileCreatedWithTheTokenTakesThePurchase(_ kind: PurchaseKind) throws {
        var world = PurchaseWorld()
        try world.notify(C.purchaseNotification("n1", kind.transaction("p1", token: fixedToken(1))))
        let profile = try world.create(token: fixedToken(1))
        #expect(world.owner("p1") == profile)
        #expect(kind.isHeld("p1", by: profile, in: world))
        #expect(world.state.ownsPurchase(profile))
    }

    @Test(arguments: PurchaseKind.allCases)
    func identifyGivingTheTokenAttachesThePurchase(_ kind: PurchaseKind) throws {
        var world = PurchaseWorld()
        let profile = try world.create()
        try world.notify(C.purchaseNotification("n1", kind.transaction("p1", token: fixedToken(1))))
        // Rule 4 (an anonymous profile takes the unseen id) with rule 5 (it takes the token).
        try world.identify(profile, "alice", token: fixedToken(1))
        #expect(world.token(of: profile) == fixedToken(1))
        #expect(world.owner("p1") == profile)
        #expect(world.profile(profile).cursor == world.state.sequence)
    }

    @Test(arguments: PurchaseKind.allCases)
    func identifyingAnExistingCustomerWithTheTokenAttachesThePurchase(_ kind: PurchaseKind) throws {
        var world = PurchaseWorld()
        let profile = try world.create("alice")
        try world.notify(C.purchaseNotification("n1", kind.transaction("p1", token: fixedToken(1))))
        // Rule 2 (P already has X), then rule 5.
        try world.identify(profile, "alice", token: fixedToken(1))
        #expect(world.owner("p1") == profile)
    }

    @Test(arguments: PurchaseKind.allCases, [false, true])
    func theProfileThatReportsOrRestoresItTakesIt(_ kind: PurchaseKind, restoring: Bool) throws {
        var world = PurchaseWorld(restore: .keep)
        let claimant = try world.create()
        try world.notify(C.purchaseNotification("n1", kind.transaction("p1", token: fixedToken(1))))
        let events = world.feed.count
        let decision = restoring
            ? try world.restore(claimant, [kind.transaction("p1", token: fixedToken(1))])
            : try world.report(claimant, kind.transaction("p1", token: fixedToken(1)))
        #expect(world.owner("p1") == claimant)
        #expect(decision.transferredFrom.isEmpty)
        #expect(decision.keptByOther.isEmpty)
        // Nobody lost anything: no TRANSFER, and the purchase is not announced a second time.
        #expect(world.feed.count == events)
        #expect(world.profile(claimant).cursor == world.state.sequence)
    }

    @Test(arguments: PurchaseKind.allCases)
    func anUnownedPurchaseWithoutATokenWaitsForAReport(_ kind: PurchaseKind) throws {
        var world = PurchaseWorld()
        try world.notify(C.purchaseNotification("n1", kind.transaction("p1")))
        let profile = try world.create()
        #expect(kind.held(world, "p1")?.owner == nil)
        try world.report(profile, kind.transaction("p1"))
        #expect(world.owner("p1") == profile)
    }
}

@Suite("Store notifications never move an owned purchase")
struct NotificationsKeepOwners {
    @Test func aResubscribeCarryingAnotherProfilesTokenLeavesTheOwner() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        let other = try world.create()
        try world.report(owner, C.subscription("s1", token: world.token(of: owner)))
        let resubscribe = C.subscription("s1", id: "s1b", purchasedMs: 200_000, expiresMs: 300_000, token: world.token(of: other))
        let decision = try world.notify(C.purchaseNotification("n1", resubscribe))
        #expect(decision.profileID == owner)
        #expect(world.owner("s1") == owner)
        #expect(world.subscription("s1")?.subscription.expiresMs == 300_000)
        #expect(world.feed.last?.type == .initialPurchase)
        #expect(world.feed.last?.profileID == owner)
        #expect(world.holdings(other).subscriptions.isEmpty)
    }

    @Test func aRepeatedPurchaseNotificationOfAOneTimePurchaseLeavesTheOwner() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        let other = try world.create()
        try world.report(owner, C.oneTime("p1"))
        let events = world.feed.count
        try world.notify(C.purchaseNotification("n1", C.oneTime("p1", token: world.token(of: other))))
        #expect(world.owner("p1") == owner)
        #expect(world.feed.count == events)
    }

    @Test func changesOfAnOwnedPurchaseKeepItsOwner() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        try world.report(owner, C.subscription("s1"))
        try world.notify(C.notification("n1", "s1", atMs: 2_000, .renewal(C.term("s2", purchasedMs: 100_000, expiresMs: 200_000))))
        try world.notify(C.notification("n2", "s1", atMs: 3_000, .cancel))
        try world.notify(C.notification("n3", "s1", atMs: 4_000, .productChange(newProductID: "pro_yearly")))
        #expect(world.owner("s1") == owner)
        #expect(world.feed.suffix(3).allSatisfy { $0.profileID == owner })
    }
}

@Suite("A profile that owns a purchase keeps the token its purchases carry (identify rule 5)")
struct PurchaseOwnerKeepsToken {
    @Test func aProfileOwningAPurchaseKeepsItsTokenAndStillTakesTheID() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        let token = world.token(of: owner)
        try world.report(owner, C.subscription("s1", token: token))
        #expect(world.state.ownsPurchase(owner))
        let decision = try world.identify(owner, "alice", token: fixedToken(5))
        #expect(decision.profileID == owner)
        #expect(world.token(of: owner) == token)
        #expect(world.profile(owner).customerUserID == "alice")
        #expect(world.state.profiles.profile(token: fixedToken(5)) == nil)
    }

    @Test func profileCreateWithAKnownCustomerKeepsThePurchasersToken() throws {
        var world = PurchaseWorld()
        let owner = try world.create("alice")
        let token = world.token(of: owner)
        try world.report(owner, C.oneTime("p1", token: token))
        let answered = try world.create("alice", token: fixedToken(5))
        #expect(answered == owner)
        #expect(world.token(of: owner) == token)
    }

    @Test func aProfileOwningOnlyAOneTimePurchaseKeepsItsToken() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        let token = world.token(of: owner)
        try world.report(owner, C.oneTime("p1", product: "coins"))
        try world.identify(owner, "alice", token: fixedToken(5))
        #expect(world.token(of: owner) == token)
    }

    @Test func grantsDoNotCountAsOwningAPurchase() throws {
        var world = PurchaseWorld()
        let profile = try world.create()
        try world.grant(profile, "extra", expiresMs: nil)
        #expect(!world.state.ownsPurchase(profile))
        try world.identify(profile, "alice", token: fixedToken(5))
        #expect(world.token(of: profile) == fixedToken(5))
    }

    @Test func aProfileWhosePurchaseMovedAwayTakesTheTokenAgain() throws {
        var world = PurchaseWorld(restore: .transfer)
        let first = try world.create()
        let second = try world.create()
        try world.report(first, C.subscription("s1"))
        try world.report(second, C.subscription("s1"))
        #expect(!world.state.ownsPurchase(first))
        #expect(world.state.ownsPurchase(second))
        try world.identify(first, "alice", token: fixedToken(5))
        #expect(world.token(of: first) == fixedToken(5))
    }
}

@Suite("The first owner holds for the whole request that makes a purchase known")
struct FirstOwnerWithinOneRequest {
    @Test(arguments: RestoreMode.allCases)
    func aRestoreCarryingSeveralTermsOfANewPurchaseLeavesItWithTheTokensProfile(_ restore: RestoreMode) throws {
        var world = PurchaseWorld(restore: restore)
        let holder = try world.create()
        let reporter = try world.create()
        let token = world.token(of: holder)
        let decision = try world.restore(reporter, [
            C.subscription("s1", expiresMs: 100_000, token: token),
            C.subscription("s1", id: "s1r", purchasedMs: 100_000, expiresMs: 200_000, token: token),
        ])
        // The same as a restore of the latest term alone: rule 1 decides, no transfer follows.
        #expect(world.owner("s1") == holder)
        #expect(decision.transferredFrom.isEmpty)
        #expect(decision.keptByOther.isEmpty)
        #expect(world.events(.transfer).isEmpty)
        #expect(world.feed.map(\.type) == [.initialPurchase, .renewal])
        #expect(world.feed.allSatisfy { $0.profileID == holder })
    }

    @Test(arguments: RestoreMode.allCases)
    func aRestoreListingANewOneTimePurchaseTwiceLeavesItWithTheTokensProfile(_ restore: RestoreMode) throws {
        var world = PurchaseWorld(restore: restore)
        let holder = try world.create()
        let reporter = try world.create()
        let purchase = C.oneTime("p1", token: world.token(of: holder))
        let decision = try world.restore(reporter, [purchase, purchase])
        #expect(world.owner("p1") == holder)
        #expect(decision.transferredFrom.isEmpty && decision.keptByOther.isEmpty)
        #expect(world.events(.transfer).isEmpty)
    }
}
