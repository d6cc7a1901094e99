import GatehouseBase
@testable import GatehouseCore
import Testing

// DESIGN.md, "Virtual currencies", rules 1–3 and the triggers: only a paid term grants; the first
// paid term fires `purchase`, later auto-renewed terms `renewal`, `both` either; a resubscribe
// fires `purchase` and a currency with only a `renewal` grant gets that instead, never both.
// `mixed_monthly` grants each trigger to its own currency, so one term checks all three.

private typealias C = PurchaseCatalogue
private typealias V = CurrencyCatalogue

/// A way a subscription gets a term (or does not), as the steps that lead to it: the last step
/// is the one whose grants are measured.
enum TermCase: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case paidFirstCharge
    case freeTrial
    case firstPaidAfterTrial
    case renewal
    case recoveredWithNewTerm
    case resubscribeAfterLapse
    case familySharedFirstCharge
    case familySharedRenewal
    case zeroAmountFirstCharge
    case zeroAmountRenewal
    case statusChangesOnly

    var testDescription: String { rawValue }

    /// The source the measured step's grant of a currency granted `on` has; `nil`: it grants nothing.
    func source(on trigger: GrantTrigger) -> CurrencySource? {
        switch self {
        case .paidFirstCharge, .firstPaidAfterTrial: trigger.firesOnPurchase ? .purchase : nil
        case .renewal, .recoveredWithNewTerm: trigger.firesOnRenewal ? .renewal : nil
        case .resubscribeAfterLapse: .purchase
        case .freeTrial, .familySharedFirstCharge, .familySharedRenewal, .zeroAmountFirstCharge, .zeroAmountRenewal,
             .statusChangesOnly: nil
        }
    }

    /// The transaction id of the measured term.
    var measuredTerm: String {
        switch self {
        case .paidFirstCharge, .freeTrial, .familySharedFirstCharge, .zeroAmountFirstCharge, .statusChangesOnly: "s1"
        case .firstPaidAfterTrial, .renewal, .recoveredWithNewTerm, .familySharedRenewal, .zeroAmountRenewal: "s1.2"
        case .resubscribeAfterLapse: "s1.r"
        }
    }

    /// Runs the steps before the measured one.
    func prepare(_ world: inout PurchaseWorld, _ owner: ProfileID) throws {
        switch self {
        case .paidFirstCharge, .freeTrial, .familySharedFirstCharge, .zeroAmountFirstCharge:
            break
        case .firstPaidAfterTrial:
            try world.report(owner, V.subscription("s1", product: "mixed_monthly", price: 0, periodType: .trial))
        case .renewal, .recoveredWithNewTerm, .zeroAmountRenewal, .statusChangesOnly:
            try world.report(owner, V.subscription("s1", product: "mixed_monthly"))
        case .resubscribeAfterLapse:
            try world.report(owner, V.subscription("s1", product: "mixed_monthly"))
            try world.notify(C.notification("n-expire", "s1", atMs: 100_000, .expire))
        case .familySharedRenewal:
            try world.report(owner, V.subscription("s1", product: "mixed_monthly", familyShared: true))
        }
    }

    /// The measured step.
    func measure(_ world: inout PurchaseWorld, _ owner: ProfileID) throws {
        let next = C.term("s1.2", purchasedMs: 100_000, expiresMs: 200_000)
        switch self {
        case .paidFirstCharge:
            try world.report(owner, V.subscription("s1", product: "mixed_monthly"))
        case .freeTrial:
            try world.report(owner, V.subscription("s1", product: "mixed_monthly", price: 0, periodType: .trial))
        case .familySharedFirstCharge:
            try world.report(owner, V.subscription("s1", product: "mixed_monthly", familyShared: true))
        case .zeroAmountFirstCharge:
            try world.report(owner, V.subscription("s1", product: "mixed_monthly", price: 0))
        case .firstPaidAfterTrial, .renewal, .familySharedRenewal:
            try world.notify(C.notification("n-renew", "s1", atMs: 100_000, .renewal(next)))
        case .recoveredWithNewTerm:
            try world.notify(C.notification("n-issue", "s1", atMs: 99_000, .billingIssue(graceExpiresMs: nil)))
            try world.notify(C.notification("n-recover", "s1", atMs: 100_000, .recover(next)))
        case .zeroAmountRenewal:
            try world.notify(C.notification("n-renew", "s1", atMs: 100_000,
                                            .renewal(C.term("s1.2", purchasedMs: 100_000, expiresMs: 200_000, price: 0))))
        case .statusChangesOnly:
            for (index, event) in [SubscriptionEvent.cancel, .uncancel, .billingIssue(graceExpiresMs: 150_000), .recover(nil),
                                   .productChange(newProductID: "big_monthly"), .expire].enumerated()
            {
                try world.notify(C.notification("n-status-\(index)", "s1", atMs: 2_000 + Int64(index), event))
            }
        case .resubscribeAfterLapse:
            try world.notify(C.purchaseNotification(
                "n-resubscribe", V.subscription("s1", id: "s1.r", product: "mixed_monthly", purchasedMs: 150_000, expiresMs: 250_000)))
        }
    }
}

@Suite("Which terms grant, on which trigger")
struct CurrencyGrantTable {
    /// The currency `mixed_monthly` grants on each trigger, and how much.
    static func currency(on trigger: GrantTrigger) -> (code: String, amount: Int64) {
        switch trigger {
        case .purchase: (V.coins, 100)
        case .renewal: (V.gems, 10)
        case .both: (V.stars, 1)
        }
    }

    @Test(arguments: TermCase.allCases, GrantTrigger.allCases)
    func aTermGrantsExactlyWhatItsKindFires(_ termCase: TermCase, _ trigger: GrantTrigger) throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        try termCase.prepare(&world, owner)
        let (currency, amount) = Self.currency(on: trigger)
        let before = world.history(owner, currency)
        let eventsBefore = world.currencyEvents.count
        try termCase.measure(&world, owner)
        let added = Array(world.history(owner, currency).dropFirst(before.count))

        if let source = termCase.source(on: trigger) {
            #expect(world.balance(owner, currency) == (before.last?.balance ?? 0) + amount)
            #expect(added.map(\.amount) == [amount], "one entry of exactly the grant")
            #expect(added.first?.source == source)
            #expect(added.first?.ref == termCase.measuredTerm)
        } else {
            #expect(added.isEmpty, "nothing granted, got \(added)")
            #expect(world.balance(owner, currency) == (before.last?.balance ?? 0))
        }
        // The other currencies follow their own triggers; every change has its one event.
        let expectedEntries = GrantTrigger.allCases.filter { termCase.source(on: $0) != nil }.count
        #expect(world.currencyEvents.count - eventsBefore == expectedEntries)
        #expect(world.currencyProblems() == [])
    }

    /// A resubscribe gives each currency one grant: the `purchase` one, else the `renewal` one.
    @Test func aResubscribeGrantsEachCurrencyOnceNeverBoth() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        try TermCase.resubscribeAfterLapse.prepare(&world, owner)
        #expect(world.balances(owner) == [V.coins: 100, V.gems: 0, V.stars: 1])
        try TermCase.resubscribeAfterLapse.measure(&world, owner)
        #expect(world.balances(owner) == [V.coins: 200, V.gems: 10, V.stars: 2])
        // A product granting one currency on `both`: one grant of it, not two.
        try world.report(owner, V.subscription("b1", product: "big_monthly"))
        try world.notify(C.notification("n-b-expire", "b1", atMs: 100_000, .expire))
        try world.notify(C.purchaseNotification("n-b-re", V.subscription("b1", id: "b1.r", purchasedMs: 150_000, expiresMs: 250_000)))
        #expect(world.balance(owner) == 200 + 2_000)
        #expect(world.history(owner).suffix(2).map(\.amount) == [1_000, 1_000])
        #expect(world.currencyProblems() == [])
    }

    @Test func theFirstPaidTermAfterATrialFiresPurchaseAndTheNextFiresRenewal() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        try TermCase.firstPaidAfterTrial.prepare(&world, owner)
        try TermCase.firstPaidAfterTrial.measure(&world, owner)
        try world.notify(V.renewal("n3", "s1", id: "s1.3", purchasedMs: 200_000, expiresMs: 300_000))
        #expect(world.history(owner, V.coins).map(\.ref) == ["s1.2"])
        #expect(world.history(owner, V.gems).map(\.ref) == ["s1.3"])
        #expect(world.history(owner, V.stars).map(\.source) == [.purchase, .renewal])
        #expect(world.balances(owner) == [V.coins: 100, V.gems: 10, V.stars: 2])
    }

    @Test func aProductWithoutGrantsGrantsNothing() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        try world.report(owner, V.subscription("p1", product: "pro_monthly"))
        try world.notify(V.renewal("n1", "p1", id: "p1.2", purchasedMs: 100_000, expiresMs: 200_000))
        try world.report(owner, V.oneTime("l1", product: "lifetime"))
        #expect(world.balances(owner).values.allSatisfy { $0 == 0 })
        #expect(world.state.currencies.termGrants.isEmpty)
        #expect(world.currencyEvents.isEmpty)
    }
}

@Suite("A one-time purchase grants once")
struct OneTimeCurrencyGrant {
    @Test func aConsumableGrantsItsPurchaseGrantOnceHoweverOftenItArrives() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        let pack = V.oneTime("c1", token: world.token(of: owner))
        try world.report(owner, pack)
        #expect(world.balance(owner) == 1_000)
        #expect(world.history(owner).map(\.source) == [.purchase])
        #expect(world.history(owner).map(\.ref) == ["c1"])
        try world.report(owner, pack)
        try world.restore(owner, [pack, pack])
        try world.notify(C.purchaseNotification("n1", pack))
        try world.notify(C.purchaseNotification("n2", pack))
        #expect(world.balance(owner) == 1_000)
        #expect(world.history(owner).count == 1)
        #expect(world.currencyEvents.count == 1)
        // Another pack is another purchase.
        try world.report(owner, V.oneTime("c2"))
        #expect(world.balance(owner) == 2_000)
        #expect(world.currencyProblems() == [])
    }

    @Test(arguments: [false, true])
    func aFamilySharedOrFreeConsumableGrantsNothing(_ familyShared: Bool) throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        try world.report(owner, V.oneTime("c1", price: familyShared ? 4.99 : 0, familyShared: familyShared))
        #expect(world.balance(owner) == 0)
        #expect(world.history(owner).isEmpty)
        #expect(world.oneTime("c1") != nil)
        #expect(world.state.currencies.termGrants.isEmpty)
    }

    @Test func aFamilySharedSubscriptionNeverGrantsNorClawsBack() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        try world.report(owner, V.subscription("f1", familyShared: true))
        try world.notify(V.renewal("n1", "f1", id: "f1.2", purchasedMs: 100_000, expiresMs: 200_000))
        try world.transact(owner, 50, key: "k")
        try world.notify(V.refund("n2", "f1", term: "f1.2", atMs: 150_000))
        try world.notify(V.revoke("n3", "f1", atMs: 160_000))
        #expect(world.balance(owner) == 50)
        #expect(world.history(owner).map(\.source) == [.transaction])
    }
}
