@testable import GatehouseCore
import Testing

// What a snapshot reads of the state, lent from the dense stores, comes in the order the
// built values came in: histories by profile then currency, grants by term, purchases by key,
// profiles by id, whatever order they were learnt in.

private let alice = ProfileID(high: 1, low: 2, tag: 3)
private let bob = ProfileID(high: 4, low: 5, tag: 3)

/// A history entry, or a term grant, as plain values, to compare what is lent with what is built.
private struct Lent: Equatable {
    var text: [String]
    var numbers: [Int64]

    init(_ text: [String], _ numbers: [Int64]) {
        self.text = text
        self.numbers = numbers
    }
}

private func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

@Suite struct LedgerLentInSnapshotOrder {
    private func entries(_ ids: [String], ref: String) -> [CurrencyEntry] {
        var balance: Int64 = 0
        return ids.enumerated().map { number, id in
            balance += Int64(number + 1)
            return CurrencyEntry(transactionID: id, amount: Int64(number + 1), balance: balance, source: .transaction, ref: ref,
                                 atMs: Int64(number))
        }
    }

    /// Bob's lists are restored before Alice's and GEMS before COINS; ids the rules make and
    /// hand-made ones, and a list of three entries, all come back as `forEachHistory` builds them.
    @Test func historiesAreLentAsForEachHistoryBuildsThem() {
        var ledger = CurrencyLedger()
        _ = ledger.restoreHistory(of: bob, "GEMS", entries(["vct_9_0"], ref: "b"))
        _ = ledger.restoreHistory(of: alice, "GEMS", entries(["vct_3_1", "hand-made", "vct_12345678901234_2"], ref: "ré"))
        _ = ledger.restoreHistory(of: alice, "COINS", entries(["vct_1_0"], ref: ""))
        var built: [Lent] = []
        ledger.forEachHistory { profile, currency, entries in
            built.append(Lent([currency], [Int64(profile.high), Int64(entries.count)]))
            for entry in entries {
                built.append(Lent([entry.transactionID, entry.source.rawValue, entry.ref], [entry.amount, entry.balance, entry.atMs]))
            }
        }
        var lent: [Lent] = []
        ledger.forEachStoredHistory { profile, currency, count in
            lent.append(Lent([currency], [Int64(profile.high), Int64(count)]))
        } entry: { entry in
            lent.append(Lent([string(entry.transactionID), entry.source.rawValue, string(entry.ref)],
                             [entry.amount, entry.balance, entry.atMs]))
        }
        #expect(lent == built)
        #expect(lent.map { $0.text[0] }.prefix(2) == ["COINS", "vct_1_0"], "alice's COINS first")
    }

    /// Grants stored out of term order, unowned and owned, with none, one and two lines.
    @Test func termGrantsAreLentAsTermGrantsByTermBuildsThem() {
        var ledger = CurrencyLedger()
        ledger.restoreTermGrants([
            TermGrant(term: "test:b", purchase: PurchaseKey(store: "test", id: "o2"), profile: alice,
                      lines: [TermGrant.Line(currency: "COINS", granted: 10, owedBack: 2, takenBack: 1),
                              TermGrant.Line(currency: "GEMS", granted: 5)]),
            TermGrant(term: "app_store:z", purchase: PurchaseKey(store: "app_store", id: "o3"), profile: nil, lines: []),
            TermGrant(term: "test:a", purchase: PurchaseKey(store: "test", id: "o1"), profile: nil,
                      lines: [TermGrant.Line(currency: "COINS", granted: 100)]),
        ])
        var built: [Lent] = []
        for grant in ledger.termGrantsByTerm {
            built.append(Lent([grant.term, grant.purchase.store, grant.purchase.id], [grant.profile.map { Int64($0.high) } ?? -1,
                                                                                      Int64(grant.lines.count)]))
            for line in grant.lines { built.append(Lent([line.currency], [line.granted, line.owedBack, line.takenBack])) }
        }
        var lent: [Lent] = []
        ledger.forEachStoredTermGrant { grant in
            lent.append(Lent([string(grant.term), grant.store, string(grant.purchaseID)],
                             [grant.profile.map { Int64($0.high) } ?? -1, Int64(grant.lineCount)]))
        } line: { line in
            lent.append(Lent([line.currency], [line.granted, line.owedBack, line.takenBack]))
        }
        #expect(lent == built)
        #expect(ledger.termGrantCount == 3)
    }
}

@Suite struct PurchasesInKeyOrder {
    private func held(_ store: String, _ id: String) -> HeldPurchase {
        HeldPurchase(OneTimePurchase(store: store, transactionID: id, productID: "lifetime", purchasedMs: 1_000, price: 1,
                                     environment: .production), owner: nil, token: nil)
    }

    /// Two stores, ids learnt out of order, one of them not ASCII: the slots come in
    /// `PurchaseKey` order.
    @Test func slotsComeOrderedByStoreThenID() {
        let learnt = [held("test", "b"), held("app_store", "9"), held("test", "é"), held("test", "a10"), held("app_store", "10"),
                      held("test", "a9")]
        let book = PurchaseBook(subscriptions: [], oneTimePurchases: learnt, grants: [], seenNotifications: [])
        let ordered = book.oneTimePurchaseSlotsByKey.map { book.oneTimePurchases[slot: $0].key }
        #expect(ordered == learnt.map(\.key).sorted())
        #expect(book.subscriptionSlotsByKey.isEmpty)
    }

    @Test func manySlotsComeOrderedByKey() {
        var generator = SystemRandomNumberGenerator()
        let learnt = (0..<2_000).map { held($0 % 3 == 0 ? "test" : "app_store", "t\($0)") }.shuffled(using: &generator)
        let book = PurchaseBook(subscriptions: [], oneTimePurchases: learnt, grants: [], seenNotifications: [])
        #expect(book.oneTimePurchaseSlotsByKey.map { book.oneTimePurchases[slot: $0].key } == learnt.map(\.key).sorted())
    }
}

@Suite struct ProfilesInIDOrder {
    @Test func profilesAreLentInIDOrder() {
        var generator = SystemRandomNumberGenerator()
        let profiles = (0..<500).map { n in
            Profile(id: ProfileID(high: UInt64(n % 7), low: UInt64(n), tag: 7), customerUserID: "user-\(n)",
                    token: AppAccountToken(high: 1, low: UInt64(n)), createdMs: 0, lastSeenMs: 0, cursor: 0)
        }.shuffled(using: &generator)
        let directory = ProfileDirectory(profiles: profiles, aliasTokens: [:])!
        var lent: [Profile] = []
        directory.forEachByID { lent.append($0) }
        #expect(lent == directory.all)
        #expect(lent.map(\.id) == profiles.map(\.id).sorted())
    }
}

@Suite struct PurchasesRebuiltFromStorage {
    private func held(_ id: String, purchasedMs: Int64) -> HeldPurchase {
        HeldPurchase(OneTimePurchase(store: "test", transactionID: id, productID: "lifetime", purchasedMs: purchasedMs, price: 1,
                                     environment: .production), owner: nil, token: nil)
    }

    @Test func insertingAKeyTheTableHoldsChangesNothing() {
        var table = PurchaseTable<HeldPurchase>()
        #expect(table.insert(held("a", purchasedMs: 1)) == 0)
        #expect(table.insert(held("b", purchasedMs: 1)) == 1)
        #expect(table.insert(held("a", purchasedMs: 2)) == nil)
        #expect(table.count == 2 && table[PurchaseKey(store: "test", id: "a")]?.purchase.purchasedMs == 1)
    }

    /// A purchase listed twice (damage) leaves the book one short, which is how a reader knows.
    @Test func aBookRebuiltWithAKeyListedTwiceKeepsTheFirst() {
        let book = PurchaseBook(subscriptions: [], oneTimePurchases: [held("a", purchasedMs: 1), held("a", purchasedMs: 2)],
                                grants: [], seenNotifications: [])
        #expect(book.oneTimePurchases.count == 1)
        #expect(book.oneTimePurchase(PurchaseKey(store: "test", id: "a"))?.purchase.purchasedMs == 1)
    }
}
