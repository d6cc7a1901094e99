import GatehouseBase
@testable import GatehouseCore
import Testing

// DESIGN.md, "Virtual currencies", rule 4: a refund takes back that term's grant, in proportion
// (`floor(amount × fraction)`), never more than the balance holds; a revoke takes back every
// term; a reversal gives back exactly what the refund took; the claw-back comes from the profile
// the grant went to (after a merge, the profile it merged into).

private typealias C = PurchaseCatalogue
private typealias V = CurrencyCatalogue

@Suite("Refunds, reversals and revokes settle what terms granted")
struct CurrencyRefunds {
    /// A profile with subscription `s1` (1,000 COINS) reported.
    private static func subscribed() throws -> (PurchaseWorld, ProfileID) {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        try world.report(owner, V.subscription("s1"))
        return (world, owner)
    }

    @Test func aFullRefundTakesTheWholeGrant() throws {
        var (world, owner) = try Self.subscribed()
        try world.notify(V.refund("n1", "s1", term: "s1", atMs: 2_000))
        #expect(world.balance(owner) == 0)
        let last = try #require(world.history(owner).last)
        #expect(last.amount == -1_000)
        #expect(last.source == .refund)
        #expect(last.ref == "s1")
        #expect(world.subscription("s1")?.subscription.status == .refunded)
        // The same refund again takes nothing more.
        try world.notify(V.refund("n1-again", "s1", term: "s1", atMs: 2_001))
        #expect(world.history(owner).count == 2)
        #expect(world.currencyProblems() == [])
    }

    @Test(arguments: [(0.5, Int64(500)), (0.25, 250), (0.3333, 333), (0.999, 999), (0.0001, 0), (1, 1_000)])
    func aPartialRefundTakesTheFloorOfItsShare(_ fraction: Double, _ taken: Int64) throws {
        var (world, owner) = try Self.subscribed()
        try world.notify(V.refund("n1", "s1", term: "s1", fraction: fraction, atMs: 2_000))
        #expect(world.balance(owner) == 1_000 - taken)
        #expect(world.history(owner).count == (taken == 0 ? 1 : 2))
        // A reversal gives it back.
        try world.notify(V.reversal("n2", "s1", term: "s1", atMs: 3_000))
        #expect(world.balance(owner) == 1_000)
        if taken > 0 { #expect(world.history(owner).last?.source == .refundReversed) }
        #expect(world.currencyProblems() == [])
    }

    @Test func aRefundAfterTheBalanceWasSpentFloorsAtZeroAndAReversalGivesBackOnlyWhatWasTaken() throws {
        var (world, owner) = try Self.subscribed()
        try world.transact(owner, -900, key: "spend")
        #expect(world.balance(owner) == 100)
        try world.notify(V.refund("n1", "s1", term: "s1", atMs: 2_000))
        #expect(world.balance(owner) == 0)
        #expect(world.history(owner).last?.amount == -100)
        let line = try #require(world.state.currencies.termGrants["test:s1"]?.lines.first)
        #expect(line.owedBack == 1_000)
        #expect(line.takenBack == 100)
        try world.notify(V.reversal("n2", "s1", term: "s1", atMs: 3_000))
        #expect(world.balance(owner) == 100)
        #expect(world.history(owner).last?.amount == 100)
        #expect(world.history(owner).last?.source == .refundReversed)
        #expect(world.state.currencies.termGrants["test:s1"]?.lines.first?.takenBack == 0)
        // Refunded again after the reversal: it takes again, as far as the balance goes.
        try world.notify(V.refund("n3", "s1", term: "s1", fraction: 0.5, atMs: 4_000))
        #expect(world.balance(owner) == 0)
        #expect(world.currencyProblems() == [])
    }

    @Test func aRefundOfOneTermLeavesTheOthers() throws {
        var (world, owner) = try Self.subscribed()
        try world.notify(V.renewal("n1", "s1", id: "s1.2", purchasedMs: 100_000, expiresMs: 200_000))
        try world.notify(V.refund("n2", "s1", term: "s1", fraction: 0.5, atMs: 150_000))
        #expect(world.balance(owner) == 1_500)
        #expect(world.history(owner).last?.ref == "s1")
        // A refund of a term never seen grants and takes nothing; when the term comes, it is
        // granted and taken back at once (as the refund says).
        try world.notify(V.refund("n3", "s1", term: "s1.3", atMs: 160_000))
        #expect(world.balance(owner) == 1_500)
        try world.notify(V.renewal("n4", "s1", id: "s1.3", purchasedMs: 200_000, expiresMs: 300_000))
        #expect(world.balance(owner) == 1_500)
        #expect(world.currencyProblems() == [])
    }

    @Test func aRevokeTakesBackEveryTerm() throws {
        var (world, owner) = try Self.subscribed()
        try world.notify(V.renewal("n1", "s1", id: "s1.2", purchasedMs: 100_000, expiresMs: 200_000))
        try world.notify(V.renewal("n2", "s1", id: "s1.3", purchasedMs: 200_000, expiresMs: 300_000))
        try world.notify(V.refund("n3", "s1", term: "s1.2", fraction: 0.5, atMs: 250_000))
        #expect(world.balance(owner) == 2_500)
        try world.notify(V.revoke("n4", "s1", atMs: 260_000))
        #expect(world.balance(owner) == 0)
        let revokes = world.history(owner).filter { $0.source == .revoke }
        #expect(Set(revokes.map(\.ref)) == ["s1", "s1.2", "s1.3"])
        #expect(revokes.map(\.amount).reduce(0, +) == -2_500)
        #expect(revokes.first { $0.ref == "s1.2" }?.amount == -500)
        // Nothing undoes a revoke: a reversal gives nothing back.
        try world.notify(V.reversal("n5", "s1", term: "s1.2", atMs: 270_000))
        #expect(world.balance(owner) == 0)
        #expect(world.currencyProblems() == [])
    }

    @Test func aRevokeOfAConsumableTakesItsGrant() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        try world.report(owner, V.oneTime("c1"))
        try world.notify(V.refund("n1", "c1", term: "c1", fraction: 0.25, atMs: 2_000))
        #expect(world.balance(owner) == 750)
        try world.notify(V.reversal("n2", "c1", term: "c1", atMs: 3_000))
        #expect(world.balance(owner) == 1_000)
        try world.notify(V.revoke("n3", "c1", atMs: 4_000))
        #expect(world.balance(owner) == 0)
        #expect(world.history(owner).map(\.source) == [.purchase, .refund, .refundReversed, .revoke])
        #expect(world.currencyProblems() == [])
    }

    @Test func aClawBackComesFromTheGranteeEvenAfterATransfer() throws {
        var (world, first) = try Self.subscribed()
        let second = try world.create()
        try world.restore(second, [V.subscription("s1")])
        try world.notify(V.renewal("n1", "s1", id: "s1.2", purchasedMs: 100_000, expiresMs: 200_000))
        #expect(world.balance(first) == 1_000)
        #expect(world.balance(second) == 1_000)
        try world.notify(V.refund("n2", "s1", term: "s1", atMs: 150_000))
        #expect(world.balance(first) == 0)
        #expect(world.balance(second) == 1_000)
        try world.notify(V.revoke("n3", "s1", atMs: 160_000))
        #expect(world.balance(second) == 0)
        #expect(world.currencyProblems() == [])
    }

    @Test func aRefundOfATermGrantedToAMergedProfileTakesFromTheProfileItMergedInto() throws {
        var world = PurchaseWorld.withCurrencies(login: .alias)
        let identified = try world.create("alice")
        let anonymous = try world.create()
        try world.report(anonymous, V.subscription("s1"))
        try world.identify(anonymous, "alice")
        #expect(world.balance(identified) == 1_000)
        #expect(world.state.currencies.termGrants["test:s1"]?.profile == anonymous)
        try world.notify(V.refund("n1", "s1", term: "s1", fraction: 0.5, atMs: 2_000))
        #expect(world.balance(identified) == 500)
        #expect(world.history(identified).last?.source == .refund)
        try world.notify(V.reversal("n2", "s1", term: "s1", atMs: 3_000))
        #expect(world.balance(identified) == 1_000)
        let events = world.currencyEvents.suffix(2)
        #expect(events.allSatisfy { $0.profileID == identified })
        #expect(world.currencyProblems() == [])
    }

    @Test func aRefundWhileUnownedIsOwedAndAClaimCreditsTheRest() throws {
        var world = PurchaseWorld.withCurrencies()
        let token = fixedToken(90)
        try world.notify(C.purchaseNotification("n1", V.subscription("s1", token: token)))
        try world.notify(V.refund("n2", "s1", term: "s1", fraction: 0.5, atMs: 2_000))
        let pending = try #require(world.state.currencies.termGrants["test:s1"])
        #expect(pending.profile == nil)
        #expect(pending.lines == [TermGrant.Line(currency: V.coins, granted: 1_000, owedBack: 500, takenBack: 0)])
        #expect(world.state.currencies.histories.isEmpty)

        let owner = try world.create(token: token)
        #expect(world.balance(owner) == 500, "granted minus owed")
        #expect(world.history(owner).count == 1)
        #expect(world.state.currencies.termGrants["test:s1"]?.lines.first?.takenBack == 500)
        // The reversal gives back what the refund owed; a full refund then takes it all.
        try world.notify(V.reversal("n3", "s1", term: "s1", atMs: 3_000))
        #expect(world.balance(owner) == 1_000)
        try world.notify(V.refund("n4", "s1", term: "s1", atMs: 4_000))
        #expect(world.balance(owner) == 0)
        #expect(world.currencyProblems() == [])
        #expect(world.replayed == world.state)
    }

    @Test func aFullyRefundedUnownedTermCreditsNothingWhenClaimed() throws {
        var world = PurchaseWorld.withCurrencies()
        let token = fixedToken(91)
        try world.notify(C.purchaseNotification("n1", V.subscription("s1", token: token)))
        try world.notify(V.revoke("n2", "s1", atMs: 2_000))
        let owner = try world.create(token: token)
        #expect(world.balance(owner) == 0)
        #expect(world.history(owner).isEmpty)
        #expect(world.currencyEvents.isEmpty)
        #expect(world.currencyProblems() == [])
    }
    /// A reversal at the maximum gives back only what fits; what it could not give back stays
    /// taken, so a second refund of the term takes nothing more: all refunds of a term together
    /// never take back more than it granted.
    @Test func refundsNeverTakeBackMoreThanTheTermGranted() throws {
        var (world, owner) = try Self.subscribed()
        try world.notify(V.refund("n1", "s1", term: "s1", atMs: 2_000))
        #expect(world.balance(owner) == 0)
        try world.transact(owner, CurrencyLedger.balanceMax, key: "fill")
        try world.notify(V.reversal("n2", "s1", term: "s1", atMs: 3_000))
        #expect(world.balance(owner) == CurrencyLedger.balanceMax, "nothing fits")
        try world.transact(owner, -5_000, key: "spend")
        try world.notify(V.refund("n3", "s1", term: "s1", atMs: 4_000))
        #expect(world.balance(owner) == CurrencyLedger.balanceMax - 5_000)
        let taken = world.history(owner).filter { $0.ref == "s1" }.map(\.amount).reduce(0, +)
        #expect(taken >= 0, "the term's entries together never take more than it granted")
        #expect(world.currencyProblems() == [])
    }

    /// A claim credits what fits under the maximum, and the term counts as having granted only
    /// that: a later refund takes back no currency the claim never credited.
    @Test func aClaimAtTheMaximumCreditsWhatFits() throws {
        var world = PurchaseWorld.withCurrencies()
        try world.notify(C.purchaseNotification("n1", V.subscription("s1")))
        let owner = try world.create()
        try world.transact(owner, CurrencyLedger.balanceMax - 400, key: "fill")
        try world.report(owner, V.subscription("s1"))
        #expect(world.balance(owner) == CurrencyLedger.balanceMax)
        #expect(world.history(owner).last?.amount == 400)
        try world.transact(owner, -10_000, key: "spend")
        try world.notify(V.refund("n2", "s1", term: "s1", atMs: 2_000))
        #expect(world.balance(owner) == CurrencyLedger.balanceMax - 10_400)
        #expect(world.currencyProblems() == [])
    }
}
