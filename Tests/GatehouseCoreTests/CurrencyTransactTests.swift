import GatehouseBase
@testable import GatehouseCore
import Testing

// PROTOCOL.md, "Virtual currencies" (`currency.transact`) and DESIGN.md: idempotent by key,
// never below 0 (`insufficient_funds`, changing nothing), never above 2,000,000,000
// (`bad_request`); every change of a balance is one history entry and one
// `VIRTUAL_CURRENCY_TRANSACTION` event.

private typealias V = CurrencyCatalogue

@Suite("currency.transact")
struct CurrencyTransact {
    private static func expectError(_ code: ErrorCode, _ body: () throws(GatehouseError) -> Void,
                                    sourceLocation: SourceLocation = #_sourceLocation) -> GatehouseError?
    {
        do {
            try body()
            Issue.record("expected \(code)", sourceLocation: sourceLocation)
            return nil
        } catch {
            #expect(error.code == code, sourceLocation: sourceLocation)
            return error
        }
    }

    @Test func aCreditAndADebitEachMakeOneEntryAndOneEvent() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create("carol")
        let credit = try world.transact(owner, V.gems, 500, key: "k1", reason: "welcome")
        #expect(credit.balance == 500)
        #expect(!credit.replayed)
        #expect(credit.profileID == owner)
        #expect(credit.transactionID == "vct_\(world.state.sequence)_0")
        #expect(world.history(owner, V.gems).map(\.transactionID) == [credit.transactionID])
        #expect(world.state.currencies.history(of: owner, V.gems, limit: 10).first?.transactionID == credit.transactionID)

        let event = try #require(world.currencyEvents.last)
        #expect(world.currencyEvents.count == 1)
        #expect(event.profileID == owner)
        #expect(event.customerUserID == "carol")
        #expect(event.detail("transaction_id") == .string(credit.transactionID))
        #expect(event.detail("currency") == .string(V.gems))
        #expect(event.detail("amount") == .int(500))
        #expect(event.detail("balance") == .int(500))
        #expect(event.detail("source") == .string("transaction"))
        #expect(event.detail("ref") == .string("k1"))
        #expect(event.detail("reason") == .string("welcome"))

        world.nowMs = 5_000
        let debit = try world.transact(owner, V.gems, -200, key: "k2")
        #expect(debit.balance == 300)
        #expect(debit.transactionID != credit.transactionID)
        let entry = try #require(world.history(owner, V.gems).last)
        #expect(entry == CurrencyEntry(transactionID: debit.transactionID, amount: -200, balance: 300, source: .transaction,
                                       ref: "k2", atMs: 5_000))
        #expect(world.currencyEvents.count == 2)
        #expect(world.currencyEvents.last?.detail("amount") == .int(-200))
        #expect(world.currencyEvents.last?.detail("reason") == nil)
        #expect(world.balance(owner, V.coins) == 0, "other currencies untouched")
        // Newest first, at most `limit`.
        #expect(try world.state.currencyHistory(profile: owner, currency: V.gems, limit: 1).map(\.transactionID)
            == [debit.transactionID])
        #expect(world.currencyProblems() == [])
    }

    @Test func anOverdraftIsInsufficientFundsWithTheBalanceAndChangesNothing() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        try world.transact(owner, 300, key: "k1")
        let before = world.state
        let error = Self.expectError(.insufficientFunds) { () throws(GatehouseError) in
            _ = try world.state.transact(profile: owner, currency: V.coins, amount: -301, key: "k2", reason: nil, nowMs: world.nowMs)
        }
        #expect(error?.details == [.balance(300)])
        let empty = Self.expectError(.insufficientFunds) { () throws(GatehouseError) in
            _ = try world.state.transact(profile: owner, currency: V.gems, amount: -1, key: "k3", reason: nil, nowMs: world.nowMs)
        }
        #expect(empty?.details == [.balance(0)])
        #expect(world.state == before)
        // The refused key is not used up; the whole balance may go.
        let all = try world.transact(owner, -300, key: "k2")
        #expect(all.balance == 0)
        #expect(world.balance(owner) == 0)
        #expect(world.currencyProblems() == [])
    }

    @Test func aCreditPastTheMaximumIsBadRequestAndChangesNothing() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        try world.transact(owner, CurrencyLedger.balanceMax - 10, key: "k1")
        let before = world.state
        for amount: Int64 in [11, CurrencyLedger.balanceMax, CurrencyLedger.balanceMax + 1, 0, -CurrencyLedger.balanceMax - 1] {
            _ = Self.expectError(.badRequest) { () throws(GatehouseError) in
                _ = try world.state.transact(profile: owner, currency: V.coins, amount: amount, key: "k2", reason: nil,
                                             nowMs: world.nowMs)
            }
        }
        #expect(world.state == before)
        #expect(try world.transact(owner, 10, key: "k2").balance == CurrencyLedger.balanceMax)
        // A grant at the maximum records only what fits (nothing here).
        try world.report(owner, V.oneTime("c1"))
        #expect(world.balance(owner) == CurrencyLedger.balanceMax)
        #expect(world.currencyProblems() == [])
    }

    @Test func theSameKeyAndBodyReplaysTheFirstAnswerWithAnEmptyBatch() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        let first = try world.transact(owner, 100, key: "k1", reason: "r")
        try world.transact(owner, 50, key: "k2")
        let before = world.state
        let replay = try world.state.transact(profile: owner, currency: V.coins, amount: 100, key: "k1", reason: "r",
                                              nowMs: world.nowMs + 1)
        #expect(replay.replayed)
        #expect(replay.batch.changes.isEmpty)
        #expect(replay.transactionID == first.transactionID)
        #expect(replay.balance == 100, "the first result, not today's balance")
        #expect(world.state == before)
        #expect(world.balance(owner) == 150)
    }

    @Test func theSameKeyWithAnotherBodyIsConflict() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        let other = try world.create()
        try world.transact(owner, 100, key: "k1", reason: "r")
        let before = world.state
        let variants: [(ProfileID, String, Int64, String?)] = [
            (owner, V.coins, 101, "r"), (owner, V.gems, 100, "r"), (owner, V.coins, 100, nil), (owner, V.coins, 100, "s"),
            (other, V.coins, 100, "r"), (owner, V.coins, -100, "r"),
        ]
        for (profile, currency, amount, reason) in variants {
            _ = Self.expectError(.conflict) { () throws(GatehouseError) in
                _ = try world.state.transact(profile: profile, currency: currency, amount: amount, key: "k1", reason: reason,
                                             nowMs: world.nowMs)
            }
        }
        #expect(world.state == before)
    }

    @Test func anUnknownCurrencyOrProfileIsNotFound() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        let deleted = try world.create()
        try world.delete(deleted)
        _ = Self.expectError(.notFound) { () throws(GatehouseError) in
            _ = try world.state.transact(profile: owner, currency: "DOUBLOONS", amount: 1, key: "k", reason: nil, nowMs: 0)
        }
        _ = Self.expectError(.notFound) { () throws(GatehouseError) in
            _ = try world.state.transact(profile: deleted, currency: V.coins, amount: 1, key: "k", reason: nil, nowMs: 0)
        }
        _ = Self.expectError(.notFound) { () throws(GatehouseError) in
            _ = try world.state.currencyHistory(profile: owner, currency: "DOUBLOONS", limit: 10)
        }
        #expect(world.state.currencies.idempotency.isEmpty)
    }

    @Test func anAliasTransactsOnTheProfileItMergedInto() throws {
        var world = PurchaseWorld.withCurrencies(login: .alias)
        let identified = try world.create("dana")
        let anonymous = try world.create()
        try world.transact(anonymous, 40, key: "before-merge")
        try world.identify(anonymous, "dana")
        let decision = try world.transact(anonymous, 2, key: "after-merge")
        #expect(decision.profileID == identified)
        #expect(world.balance(identified) == 42)
        #expect(world.history(identified).map(\.source) == [.merge, .transaction])
        #expect(world.currencyProblems() == [])
        #expect(world.replayed == world.state)
    }

    @Test func aBatchWithSeveralChangesNamesEachInOrder() throws {
        var world = PurchaseWorld.withCurrencies()
        let owner = try world.create()
        // One report of mixed_monthly: two currencies, two entries, `vct_<seq>_0` and `_1`.
        try world.report(owner, V.subscription("m1", product: "mixed_monthly"))
        let sequence = world.state.sequence
        let ids = (world.history(owner, V.coins) + world.history(owner, V.stars)).map(\.transactionID)
        #expect(ids == ["vct_\(sequence)_0", "vct_\(sequence)_1"])
        #expect(world.currencyEvents.compactMap { $0.detail("transaction_id") } == ids.map { .string($0) })
        #expect(world.currencyProblems() == [])
    }
}
