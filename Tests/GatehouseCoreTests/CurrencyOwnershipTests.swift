import GatehouseBase
@testable import GatehouseCore
import Testing

// DESIGN.md, "Virtual currencies", rule 2 (each term grants once per currency, project-wide: a
// redelivered notification, a repeated report, a restore or a merge never grants twice) with
// "Who owns a purchase": currency already granted stays where it was granted; a purchase held
// unowned grants nothing until a profile takes its token, then once.

private typealias C = PurchaseCatalogue
private typealias V = CurrencyCatalogue

@Suite("Each term grants once, project-wide")
struct CurrencyOncePerTerm {
    @Test func aRedeliveredNotificationNeverGrantsTwice() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        let first = V.subscription("s1", token: world.token(of: owner))
        try world.notify(C.purchaseNotification("n1", first))
        #expect(world.balance(owner) == 1_000)
        // The same id again, and the same purchase under new ids.
        #expect(try world.notify(C.purchaseNotification("n1", first)).applied == false)
        try world.notify(C.purchaseNotification("n1-again", first))
        try world.notify(C.purchaseNotification("n1-third", first, atMs: 5_000))
        #expect(world.balance(owner) == 1_000)
        let renewal = V.renewal("n2", "s1", id: "s1.2", purchasedMs: 100_000, expiresMs: 200_000)
        try world.notify(renewal)
        #expect(try world.notify(renewal).applied == false)
        try world.notify(V.renewal("n2-again", "s1", id: "s1.2", purchasedMs: 100_000, expiresMs: 200_000))
        // A recover naming the same term is no new term either.
        try world.notify(C.notification("n2-recover", "s1", atMs: 100_001,
                                        .recover(C.term("s1.2", purchasedMs: 100_000, expiresMs: 200_000))))
        #expect(world.balance(owner) == 2_000)
        #expect(world.history(owner).map(\.ref) == ["s1", "s1.2"])
        #expect(world.currencyProblems() == [])
    }

    @Test func aRepeatedReportOrRestoreNeverGrantsTwice() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        let first = V.subscription("s1")
        let second = V.subscription("s1", id: "s1.2", purchasedMs: 100_000, expiresMs: 200_000)
        try world.report(owner, first)
        try world.report(owner, first)
        try world.report(owner, second)
        try world.report(owner, second)
        try world.restore(owner, [first, second, second, first])
        try world.notify(C.purchaseNotification("n1", first))
        #expect(world.balance(owner) == 2_000)
        #expect(world.history(owner).map(\.source) == [.purchase, .renewal])
        #expect(world.currencyProblems() == [])
    }

    @Test func aRestoreInOneRequestOfSeveralNewTermsGrantsEachOnce() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        let terms = [V.subscription("s1"), V.subscription("s1", id: "s1.2", purchasedMs: 100_000, expiresMs: 200_000),
                     V.subscription("s1", id: "s1.3", purchasedMs: 200_000, expiresMs: 300_000)]
        try world.restore(owner, terms + terms)
        #expect(world.history(owner).map(\.ref) == ["s1", "s1.2", "s1.3"])
        #expect(world.history(owner).map(\.source) == [.purchase, .renewal, .renewal])
        #expect(world.balance(owner) == 3_000)
        #expect(world.currencyProblems() == [])
    }

    @Test func aTransferLeavesWhatWasGrantedAndTheNextRenewalGrantsTheNewOwner() throws {
        var world = PurchaseWorld.withCurrencies()
        let first = try world.create()
        let second = try world.create()
        let purchase = V.subscription("s1")
        try world.report(first, purchase)
        try world.report(first, V.oneTime("c1"))
        #expect(world.balance(first) == 2_000)
        let decision = try world.restore(second, [purchase, V.oneTime("c1")])
        #expect(decision.transferredFrom == [first])
        #expect(world.owner("s1") == second)
        #expect(world.owner("c1") == second)
        #expect(world.balance(first) == 2_000, "currency already granted stays where it was granted")
        #expect(world.balance(second) == 0, "a restore never grants a term again")
        try world.report(second, purchase)
        try world.notify(C.purchaseNotification("n-again", purchase))
        #expect(world.balance(second) == 0)

        try world.notify(V.renewal("n2", "s1", id: "s1.2", purchasedMs: 100_000, expiresMs: 200_000))
        #expect(world.balance(second) == 1_000)
        #expect(world.balance(first) == 2_000)
        #expect(world.history(second).map(\.source) == [.renewal])
        // Moving back grants nothing either.
        try world.restore(first, [purchase])
        #expect(world.balance(first) == 2_000)
        #expect(world.balance(second) == 1_000)
        #expect(world.currencyProblems() == [])
    }

    @Test func aMergeBetweenTwoDeliveriesNeverGrantsTwice() throws {
        var world = PurchaseWorld.withCurrencies(login: .alias)
        let identified = try world.create("alice")
        let anonymous = try world.create()
        let purchase = V.subscription("s1", token: world.token(of: anonymous))
        try world.notify(C.purchaseNotification("n1", purchase))
        #expect(world.balance(anonymous) == 1_000)
        try world.transact(identified, 300, key: "k1")
        try world.identify(anonymous, "alice")
        #expect(world.state.profiles.canonicalID(anonymous) == identified)
        // Balances are added: one `merge` entry naming the profile merged in.
        #expect(world.balance(identified) == 1_300)
        #expect(world.history(identified).last.map { [$0.amount] } == [1_000])
        #expect(world.history(identified).last?.source == .merge)
        #expect(world.history(identified).last?.ref == anonymous.description)
        #expect(world.state.currencies.histories[anonymous] == nil)
        // The same purchase delivered and reported again grants nothing.
        try world.notify(C.purchaseNotification("n1-redelivered", purchase))
        try world.report(identified, purchase)
        try world.restore(anonymous, [purchase])
        #expect(world.balance(identified) == 1_300)
        // Its next term grants the profile it merged into.
        try world.notify(V.renewal("n2", "s1", id: "s1.2", purchasedMs: 100_000, expiresMs: 200_000))
        #expect(world.balance(identified) == 2_300)
        #expect(world.currencyProblems() == [])
    }

    @Test func aDeletedProfileTakesItsBalancesAndItsTermsNeverGrantAgain() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        let other = try world.create()
        let purchase = V.subscription("s1")
        try world.report(owner, purchase)
        try world.delete(owner)
        #expect(world.state.currencies.histories[owner] == nil)
        #expect(world.owner("s1") == nil)
        // Unowned now: its next term waits, and goes to whoever claims it; the first never again.
        try world.notify(V.renewal("n2", "s1", id: "s1.2", purchasedMs: 100_000, expiresMs: 200_000))
        try world.restore(other, [purchase])
        #expect(world.owner("s1") == other)
        #expect(world.balance(other) == 1_000)
        #expect(world.history(other).map(\.ref) == ["s1.2"])
        // A refund of the first term has no one to take from.
        try world.notify(V.refund("n3", "s1", term: "s1", atMs: 150_000))
        #expect(world.balance(other) == 1_000)
        #expect(world.currencyProblems() == [])
        #expect(world.replayed == world.state)
    }
}

@Suite("A purchase held unowned grants when it is claimed")
struct CurrencyClaims {
    @Test func aPurchaseUnderAnUntakenTokenGrantsNothingUntilAProfileTakesTheToken() throws {
        var world = PurchaseWorld.withCurrencies()
        let bystander = try world.create()
        let token = fixedToken(77)
        try world.notify(C.purchaseNotification("n1", V.subscription("s1", token: token)))
        try world.notify(V.renewal("n2", "s1", id: "s1.2", purchasedMs: 100_000, expiresMs: 200_000))
        try world.notify(C.purchaseNotification("n3", V.oneTime("c1", token: token)))
        #expect(world.owner("s1") == nil)
        #expect(world.state.currencies.histories.isEmpty)
        #expect(world.currencyEvents.isEmpty)
        #expect(world.state.currencies.termGrants.values.allSatisfy { $0.profile == nil })
        #expect(world.state.currencies.termGrants.count == 3)
        #expect(world.balance(bystander) == 0)

        let claimer = try world.create(token: token)
        #expect(world.owner("s1") == claimer)
        #expect(world.owner("c1") == claimer)
        #expect(world.balance(claimer) == 3_000)
        #expect(Set(world.history(claimer).map(\.ref)) == ["s1", "s1.2", "c1"], "refs are the terms' transaction ids")
        #expect(world.history(claimer).count == 3)
        #expect(world.state.currencies.termGrants.values.allSatisfy { $0.profile == claimer })
        #expect(world.state.currencies.pendingGrants(of: C.key("s1")).isEmpty)
        // Claimed once: reports, restores and redeliveries add nothing.
        try world.restore(claimer, [V.subscription("s1", token: token), V.oneTime("c1", token: token)])
        try world.notify(C.purchaseNotification("n1-again", V.subscription("s1", token: token)))
        #expect(world.balance(claimer) == 3_000)
        try world.notify(V.renewal("n4", "s1", id: "s1.3", purchasedMs: 200_000, expiresMs: 300_000))
        #expect(world.balance(claimer) == 4_000)
        #expect(world.currencyProblems() == [])
        #expect(world.replayed == world.state)
    }

    @Test func aProfileTakingTheTokenByIdentifyClaimsToo() throws {
        var world = PurchaseWorld.withCurrencies()
        let token = fixedToken(78)
        let anonymous = try world.create()
        try world.notify(C.purchaseNotification("n1", V.subscription("s1", token: token)))
        #expect(world.balance(anonymous) == 0)
        try world.identify(anonymous, "bob", token: token)
        #expect(world.owner("s1") == anonymous)
        #expect(world.balance(anonymous) == 1_000)
        #expect(world.history(anonymous).map(\.ref) == ["s1"])
        #expect(world.currencyProblems() == [])
    }

    @Test func aPurchaseWithoutATokenIsClaimedByTheProfileThatReportsIt() throws {
        var world = PurchaseWorld.withCurrencies()
        try world.notify(C.purchaseNotification("n1", V.subscription("s1")))
        try world.notify(V.renewal("n2", "s1", id: "s1.2", purchasedMs: 100_000, expiresMs: 200_000))
        let reporter = try world.create()
        try world.report(reporter, V.subscription("s1"))
        #expect(world.owner("s1") == reporter)
        #expect(world.balance(reporter) == 2_000)
        #expect(world.history(reporter).map(\.ref) == ["s1", "s1.2"])
        #expect(world.currencyProblems() == [])
        #expect(world.replayed == world.state)
    }
}
