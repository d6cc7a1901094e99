import GatehouseBase
@testable import GatehouseCore
import Testing

// DESIGN.md, "Who owns a purchase": a report or restore by another profile R of an owned purchase
// follows the project's `restore` setting: `transfer` moves it (one TRANSFER event per side),
// `transfer_if_no_active` moves it only if the owner has no active subscription (one-time
// purchases never block), `keep` leaves it (`owned_by_other`, or listed under `kept_by_other`).

private typealias C = PurchaseCatalogue

/// `purchase.report` of one transaction, or `purchase.restore` of a list.
enum ReportPath: String, CaseIterable, Sendable {
    case report
    case restore

    @discardableResult
    func take(_ world: inout PurchaseWorld, _ id: ProfileID, _ transactions: [StoreTransaction]) throws(GatehouseError)
        -> PurchaseDecision
    {
        switch self {
        case .report:
            var last: PurchaseDecision?
            for transaction in transactions { last = try world.report(id, transaction) }
            return last!
        case .restore:
            return try world.restore(id, transactions)
        }
    }
}

@Suite("restore: transfer moves a purchase to the profile that reports or restores it")
struct RestoreTransfer {
    @Test(arguments: ReportPath.allCases, PurchaseKind.allCases)
    func thePurchaseMovesWithOneTransferEvent(_ path: ReportPath, _ kind: PurchaseKind) throws {
        var world = PurchaseWorld(restore: .transfer)
        let loser = try world.create()
        let winner = try world.create()
        try world.report(loser, kind.transaction("p1", token: world.token(of: loser)))
        let eventsBefore = world.feed.count
        let decision = try path.take(&world, winner, [kind.transaction("p1", token: world.token(of: loser))])
        #expect(world.owner("p1") == winner)
        #expect(kind.isHeld("p1", by: winner, in: world))
        #expect(!kind.isHeld("p1", by: loser, in: world))
        #expect(decision.transferredFrom == [loser])
        #expect(decision.profileID == winner)
        let added = Array(world.feed.dropFirst(eventsBefore))
        #expect(added.map(\.type) == [.transfer])
        let transfer = try #require(added.first)
        #expect(transfer.profileID == winner)
        #expect(transfer.detail("transferred_from") == .profiles([loser]))
        #expect(transfer.detail("transferred_to") == .profiles([winner]))
        #expect(transfer.detail("original_transaction_ids") == .strings(["p1"]))
        // Both sides see the change in `sync`.
        #expect(world.profile(loser).cursor == world.state.sequence)
        #expect(world.profile(winner).cursor == world.state.sequence)
        #expect(!world.state.ownsPurchase(loser))
    }

    @Test func aRestoreNamesEachLosingProfileOnceWithAllItsPurchases() throws {
        var world = PurchaseWorld(restore: .transfer)
        let first = try world.create()
        let second = try world.create()
        let winner = try world.create()
        try world.report(first, C.subscription("s1"))
        try world.report(first, C.oneTime("p1"))
        try world.report(second, C.subscription("s2", product: "premium_monthly"))
        let eventsBefore = world.feed.count
        let decision = try world.restore(winner, [
            C.subscription("s1"), C.subscription("s2", product: "premium_monthly"), C.oneTime("p1"),
            C.subscription("s1", id: "s1r", purchasedMs: 100_000, expiresMs: 200_000),
        ])
        #expect(decision.transferredFrom == [first, second])
        let transfers = world.feed.dropFirst(eventsBefore).filter { $0.type == .transfer }
        #expect(transfers.count == 2)
        #expect(transfers.map { $0.detail("transferred_from") } == [.profiles([first]), .profiles([second])])
        #expect(transfers.map { $0.detail("original_transaction_ids") } == [.strings(["s1", "p1"]), .strings(["s2"])])
        #expect(transfers.allSatisfy { $0.detail("transferred_to") == .profiles([winner]) })
        #expect(world.owner("s1") == winner && world.owner("s2") == winner && world.owner("p1") == winner)
        // The renewal the restore carried is taken in, reported to the new owner.
        #expect(world.subscription("s1")?.subscription.expiresMs == 200_000)
        #expect(world.feed.dropFirst(eventsBefore).filter { $0.type == .renewal }.map(\.profileID) == [winner])
        #expect(world.holdings(first).subscriptions.isEmpty && world.holdings(first).purchases.isEmpty)
    }

    @Test func aTransferredPurchaseCanBeTransferredBack() throws {
        var world = PurchaseWorld(restore: .transfer)
        let a = try world.create()
        let b = try world.create()
        try world.report(a, C.subscription("s1"))
        try world.report(b, C.subscription("s1"))
        let decision = try world.report(a, C.subscription("s1"))
        #expect(decision.transferredFrom == [b])
        #expect(world.owner("s1") == a)
        #expect(world.events(.transfer).count == 2)
    }
}

@Suite("restore: transfer_if_no_active moves a purchase only from an owner without an active subscription")
struct RestoreTransferIfNoActive {
    @Test(arguments: ReportPath.allCases)
    func anActiveSubscriptionStaysWithItsOwner(_ path: ReportPath) throws {
        var world = PurchaseWorld(restore: .transferIfNoActive)
        let owner = try world.create()
        let other = try world.create()
        try world.report(owner, C.subscription("s1", expiresMs: 100_000))
        world.nowMs = 50_000
        let before = world.state
        switch path {
        case .report:
            #expect(rejectionCode { () throws(GatehouseError) in try world.report(other, C.subscription("s1")) } == .ownedByOther)
            #expect(world.state == before)
        case .restore:
            let decision = try world.restore(other, [C.subscription("s1")])
            #expect(decision.keptByOther == ["s1"])
            #expect(decision.transferredFrom.isEmpty)
        }
        #expect(world.owner("s1") == owner)
        #expect(world.events(.transfer).isEmpty)
    }

    @Test(arguments: ReportPath.allCases)
    func aSubscriptionPastItsExpiryMovesEvenBeforeTheTimerMarksIt(_ path: ReportPath) throws {
        var world = PurchaseWorld(restore: .transferIfNoActive)
        let owner = try world.create()
        let other = try world.create()
        try world.report(owner, C.subscription("s1", expiresMs: 100_000))
        // Still `active` in the book, but no longer entitling at the clock's time.
        world.nowMs = 100_000
        #expect(world.subscription("s1")?.subscription.status == .active)
        let decision = try path.take(&world, other, [C.subscription("s1")])
        #expect(decision.transferredFrom == [owner])
        #expect(world.owner("s1") == other)
    }

    @Test(arguments: ReportPath.allCases)
    func anExpiredSubscriptionMoves(_ path: ReportPath) throws {
        var world = PurchaseWorld(restore: .transferIfNoActive)
        let owner = try world.create()
        let other = try world.create()
        try world.report(owner, C.subscription("s1", expiresMs: 100_000))
        try world.notify(C.notification("n1", "s1", atMs: 5_000, .expire))
        try path.take(&world, other, [C.subscription("s1")])
        #expect(world.owner("s1") == other)
        #expect(world.events(.transfer).count == 1)
    }

    @Test(arguments: ReportPath.allCases)
    func aOneTimePurchaseNeverBlocks(_ path: ReportPath) throws {
        var world = PurchaseWorld(restore: .transferIfNoActive)
        let owner = try world.create()
        let other = try world.create()
        try world.report(owner, C.oneTime("p1"))
        try world.report(owner, C.oneTime("p2"))
        let decision = try path.take(&world, other, [C.oneTime("p1")])
        #expect(decision.transferredFrom == [owner])
        #expect(world.owner("p1") == other)
        #expect(world.owner("p2") == owner)
    }

    @Test(arguments: ReportPath.allCases)
    func anActiveSubscriptionOfAnyProductBlocksEveryPurchaseOfItsOwner(_ path: ReportPath) throws {
        var world = PurchaseWorld(restore: .transferIfNoActive)
        let owner = try world.create()
        let other = try world.create()
        try world.report(owner, C.subscription("s1", expiresMs: 10_000))
        try world.report(owner, C.subscription("s2", product: "premium_monthly", expiresMs: 100_000))
        try world.report(owner, C.oneTime("p1"))
        world.nowMs = 20_000
        switch path {
        case .report:
            #expect(rejectionCode { () throws(GatehouseError) in try world.report(other, C.subscription("s1")) } == .ownedByOther)
            #expect(rejectionCode { () throws(GatehouseError) in try world.report(other, C.oneTime("p1")) } == .ownedByOther)
        case .restore:
            let decision = try world.restore(other, [C.subscription("s1"), C.oneTime("p1")])
            #expect(decision.keptByOther == ["s1", "p1"])
        }
        #expect(world.owner("s1") == owner && world.owner("p1") == owner)
    }

    @Test func aSubscriptionInGraceIsActive() throws {
        var world = PurchaseWorld(restore: .transferIfNoActive, gracePeriodMs: 50_000)
        let owner = try world.create()
        let other = try world.create()
        try world.report(owner, C.subscription("s1", expiresMs: 100_000))
        try world.notify(C.notification("n1", "s1", atMs: 100_001, .billingIssue(graceExpiresMs: nil)))
        world.nowMs = 120_000
        let decision = try world.restore(other, [C.subscription("s1")])
        #expect(decision.keptByOther == ["s1"])
        #expect(world.owner("s1") == owner)
    }
}

@Suite("restore: keep leaves a purchase with its owner")
struct RestoreKeep {
    @Test(arguments: PurchaseKind.allCases)
    func aReportIsRefusedAndChangesNothing(_ kind: PurchaseKind) throws {
        var world = PurchaseWorld(restore: .keep)
        let owner = try world.create()
        let other = try world.create()
        try world.report(owner, kind.transaction("p1"))
        world.nowMs = 500_000
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.report(other, kind.transaction("p1")) } == .ownedByOther)
        // Not even a new term the refused report carries is taken in.
        if kind == .subscription {
            let renewal = C.subscription("p1", id: "p1r", purchasedMs: 100_000, expiresMs: 200_000)
            #expect(rejectionCode { () throws(GatehouseError) in try world.report(other, renewal) } == .ownedByOther)
        }
        #expect(world.state == before)
    }

    @Test(arguments: PurchaseKind.allCases)
    func aRestoreListsThePurchaseAndLeavesItsOwner(_ kind: PurchaseKind) throws {
        var world = PurchaseWorld(restore: .keep)
        let owner = try world.create()
        let other = try world.create()
        try world.report(owner, kind.transaction("p1"))
        let decision = try world.restore(other, [kind.transaction("p1"), kind.transaction("p2")])
        #expect(decision.keptByOther == ["p1"])
        #expect(decision.transferredFrom.isEmpty)
        #expect(world.owner("p1") == owner)
        #expect(world.owner("p2") == other)
        #expect(world.events(.transfer).isEmpty)
    }

    @Test func aRestoreListsASubscriptionOnceAndStillTakesItsNewTermForItsOwner() throws {
        var world = PurchaseWorld(restore: .keep)
        let owner = try world.create()
        let other = try world.create()
        try world.report(owner, C.subscription("s1", expiresMs: 100_000))
        let renewal = C.subscription("s1", id: "s1r", purchasedMs: 100_000, expiresMs: 200_000)
        let decision = try world.restore(other, [C.subscription("s1", expiresMs: 100_000), renewal])
        #expect(decision.keptByOther == ["s1"])
        #expect(world.owner("s1") == owner)
        #expect(world.subscription("s1")?.subscription.expiresMs == 200_000)
        #expect(world.feed.last?.type == .renewal)
        #expect(world.feed.last?.profileID == owner)
    }
}

@Suite("Reporting one's own purchase again changes nothing")
struct RepeatedOwnReport {
    @Test(arguments: ReportPath.allCases, RestoreMode.allCases)
    func aSecondReportOfTheSamePurchaseIsAnEmptyBatch(_ path: ReportPath, _ restore: RestoreMode) throws {
        var world = PurchaseWorld(restore: restore)
        let owner = try world.create()
        let transactions = [C.subscription("s1"), C.oneTime("p1"), C.subscription("s1", id: "s1r", purchasedMs: 100_000, expiresMs: 200_000)]
        try path.take(&world, owner, transactions)
        let before = world.state
        let feed = world.feed.count
        let decision: PurchaseDecision
        switch path {
        case .report:
            for transaction in transactions {
                let again = try world.state.reportPurchase(profile: owner, transaction: transaction, nowMs: world.nowMs)
                #expect(again.batch.changes.isEmpty)
            }
            decision = try world.report(owner, transactions[0])
        case .restore:
            decision = try world.restore(owner, transactions)
        }
        #expect(decision.batch.changes.isEmpty)
        #expect(decision.transferredFrom.isEmpty && decision.keptByOther.isEmpty)
        #expect(world.state == before)
        #expect(world.feed.count == feed)
    }

    @Test func theFirstReportAnnouncesEachPurchaseOnce() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        try world.restore(owner, [C.subscription("s1"), C.subscription("s1"), C.oneTime("p1"), C.oneTime("p1")])
        #expect(world.feed.map(\.type) == [.initialPurchase, .nonRenewingPurchase])
    }
}

@Suite("Rejected reports change nothing")
struct ReportRejections {
    @Test func anUnknownProfileIsNotFound() throws {
        var world = PurchaseWorld()
        _ = try world.create()
        let unknown = ProfileID.make(tag: world.state.profileTag, random: SeededRandomSource(seed: 404))
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.report(unknown, C.subscription("s1")) } == .notFound)
        #expect(rejectionCode { () throws(GatehouseError) in try world.restore(unknown, [C.subscription("s1")]) } == .notFound)
        #expect(world.state == before)
    }
}
