import GatehouseBase
@testable import GatehouseCore
import Testing

// The ledger's dense storage (CurrencyHistories, IdempotencyTable, TransactionName) answers as
// the dictionaries it replaced did: same records, same equality of keys, same forget order.

private let day: Int64 = 86_400_000
private let kept = Retention.standard.idempotencyMs

private func answer(_ profile: ProfileID, _ amount: Int64, atMs: Int64, reason: String? = nil, sequence: Int = 1)
    -> IdempotencyRecord
{
    IdempotencyRecord(profile: profile, currency: "COINS", amount: amount, reason: reason, transactionID: "vct_\(sequence)_0",
                      balance: amount, atMs: atMs)
}

private let alice = ProfileID(high: 1, low: 2, tag: 3)
private let bob = ProfileID(high: 4, low: 5, tag: 3)

@Suite struct TransactionNameStorage {
    @Test(arguments: ["vct_0_0", "vct_1_0", "vct_42_7", "vct_18446744073709551615_4294967294"])
    func anIdTheRulesMakeIsKeptAsNumbersAndSpelledTheSame(_ id: String) throws {
        var arena = TextArena()
        let name = TransactionName(id, arena: &arena)
        #expect(name.index != TransactionName.spelled && arena.count == 0)
        #expect(name.spelled(in: arena) == id)
    }

    @Test(arguments: [(0, 0), (1, 0), (42, 7), (999_999_999, 0), (1_000_000_000, 1), (UInt64.max, UInt32.max - 1)])
    func spellingOnTheStackIsTheSpelledString(_ sequence: UInt64, _ index: UInt32) {
        let spelled = TransactionName.spell(sequence: sequence, index: index)
        #expect(spelled == "vct_\(sequence)_\(index)")
        #expect(TransactionName.withSpelling(sequence: sequence, index: index) { Array($0) } == Array(spelled.utf8))
        #expect(TransactionName(sequence: sequence, index: index).withUTF8(in: TextArena()) { Array($0) } == Array(spelled.utf8))
    }

    @Test(arguments: ["t1", "", "vct_", "vct_1", "vct_1_", "vct__1", "vct_01_0", "vct_1_00", "vct_1_0x", "vct_-1_0",
                      "vct_18446744073709551616_0", "vct_1_4294967295", "VCT_1_0", "vct_1_0_0", "vct_١_0"])
    func anyOtherIdIsKeptAsText(_ id: String) throws {
        var arena = TextArena()
        let name = TransactionName(id, arena: &arena)
        #expect(name.index == TransactionName.spelled)
        #expect(name.spelled(in: arena) == id)
    }
}

@Suite struct IdempotencyTableBehaviour {
    @Test func growingKeepsEveryKeyAndItsAnswer() {
        var table = IdempotencyTable()
        func expected(_ n: Int) -> IdempotencyRecord {
            answer(alice, Int64(n + 1), atMs: Int64(n), reason: n % 3 == 0 ? nil : "r\(n)")
        }
        for n in 0..<20_000 { table.remember("key-\(n)", expected(n), keptMs: kept) }
        #expect(table.count == 20_000)
        for n in stride(from: 0, to: 20_000, by: 7) { #expect(table.record(forKey: "key-\(n)") == expected(n)) }
        #expect(table.record(forKey: "key-20000") == nil && table.record(forKey: "") == nil)
    }

    @Test func keysWithTheSameHashBitsAreTwoKeys() throws {
        // Two keys whose 32 hash bits collide (one in about 4 billion pairs: a birthday search
        // finds one among a few hundred thousand keys).
        var seen: [UInt32: String] = [:]
        var pair: (String, String)?
        for n in 0..<2_000_000 {
            var key = "collide-\(n)"
            let hash = key.withUTF8 { TextKeyIndex.hash(bytes: $0) }
            if let other = seen.updateValue(key, forKey: hash) {
                pair = (other, key)
                break
            }
        }
        let (first, second) = try #require(pair)
        var table = IdempotencyTable()
        table.remember(first, answer(alice, 1, atMs: 0), keptMs: kept)
        #expect(table.record(forKey: second) == nil)
        table.remember(second, answer(bob, 2, atMs: 1), keptMs: kept)
        #expect(table.count == 2)
        #expect(table.record(forKey: first) == answer(alice, 1, atMs: 0))
        #expect(table.record(forKey: second) == answer(bob, 2, atMs: 1))
        // The first forgotten, the second is found past the hole it left.
        table.remember("later", answer(alice, 3, atMs: kept + 1), keptMs: kept)
        #expect(table.record(forKey: first) == nil)
        #expect(table.record(forKey: second) == answer(bob, 2, atMs: 1))
    }

    @Test func keysCompareAsStringsDo() {
        var table = IdempotencyTable()
        table.remember("caf\u{E9}", answer(alice, 1, atMs: 0), keptMs: kept)
        #expect(table.record(forKey: "cafe\u{301}") == answer(alice, 1, atMs: 0), "é composed or not is one key")
        table.remember("\u{212A}elvin", answer(alice, 2, atMs: 1), keptMs: kept)
        #expect(table.record(forKey: "Kelvin") == answer(alice, 2, atMs: 1), "the Kelvin sign is K")
        table.remember("Kelvin", answer(bob, 3, atMs: 2), keptMs: kept)
        #expect(table.count == 2)
        #expect(table.record(forKey: "\u{212A}elvin") == answer(bob, 3, atMs: 2))
        #expect(table.all.map(\.key) == ["caf\u{E9}", "\u{212A}elvin"], "a replaced key keeps its first spelling")
        #expect(table.record(forKey: "cafe") == nil && table.record(forKey: "kelvin") == nil)
    }

    @Test func keysAreListedInStringOrder() {
        var table = IdempotencyTable()
        let keys = ["b", "a", "ab", "A", "z\u{E9}", "ze", "\u{1F600}", "a b", "10", "9"]
        for (n, key) in keys.enumerated() { table.remember(key, answer(alice, 1, atMs: Int64(n)), keptMs: kept) }
        #expect(table.sortedByKey.map(\.key) == keys.sorted())
    }

    @Test func keysAreForgottenOldestFirstOnceTheirWindowIsOver() {
        var table = IdempotencyTable()
        for n in 0..<3_000 { table.remember("old-\(n)", answer(alice, 1, atMs: Int64(n)), keptMs: kept) }
        table.remember("new-0", answer(alice, 1, atMs: kept + 1_500), keptMs: kept)
        // Keys at 0 … 1,499 are more than a window older; 1,500 is exactly a window older and stays.
        #expect(table.count == 1_501)
        #expect(table.record(forKey: "old-1499") == nil)
        #expect(table.record(forKey: "old-1500") == answer(alice, 1, atMs: 1_500))
        // After the forgotten ones are dropped from storage, the rest are still found.
        table.remember("new-1", answer(alice, 1, atMs: kept + 2_800), keptMs: kept)
        #expect(table.count == 202)
        #expect((2_800..<3_000).allSatisfy { table.record(forKey: "old-\($0)") == answer(alice, 1, atMs: Int64($0)) })
        #expect(table.record(forKey: "new-0") != nil && table.record(forKey: "old-2799") == nil)
    }

    /// A map and its forget order, step by step, as the model: what is older than the window
    /// before a key goes first (a replaced key keeps its place in the order with its new time).
    private struct Model {
        var records: [String: IdempotencyRecord] = [:]
        var order: [String] = []
        var head = 0

        mutating func remember(_ key: String, _ record: IdempotencyRecord) {
            forget(at: record.atMs)
            if records.updateValue(record, forKey: key) == nil { order.append(key) }
        }

        mutating func forget(at nowMs: Int64) {
            while head < order.count, let stored = records[order[head]], nowMs - stored.atMs > kept {
                records[order[head]] = nil
                head += 1
            }
        }
    }

    @Test(arguments: [1, 2, 3])
    func randomRemembersAnswerAsTheDictionaryDid(seed: UInt64) {
        var random = SplitMix(seed: seed)
        var model = Model()
        var table = IdempotencyTable()
        var now: Int64 = 0
        for step in 0..<20_000 {
            now += Int64(random.next() % UInt64(3 * day))
            let key = "k\(random.next() % 2_000)"
            let record = answer(step % 2 == 0 ? alice : bob, Int64(step % 50 + 1), atMs: now, sequence: step)
            // A replaced key (known and still kept) is rare in practice but must behave the same.
            if model.records[key] == nil || random.next() % 4 == 0 {
                model.remember(key, record)
                table.remember(key, record, keptMs: kept)
            }
            if step % 97 == 0 {
                #expect(table.count == model.records.count)
                for probe in 0..<2_000 where table.record(forKey: "k\(probe)") != model.records["k\(probe)"] {
                    Issue.record("step \(step): k\(probe) answers \(String(describing: table.record(forKey: "k\(probe)")))")
                    return
                }
            }
        }
        var rebuilt = IdempotencyTable()
        let restored = rebuilt.restore(table.all)
        #expect(restored)
        #expect(rebuilt.all.map(\.key) == table.all.sorted { ($0.record.atMs, $0.key) < ($1.record.atMs, $1.key) }.map(\.key))
    }

    @Test func restoringAKeyTwiceIsRefused() {
        var table = IdempotencyTable()
        let restored = table.restore([("k", answer(alice, 1, atMs: 0)), ("k", answer(bob, 1, atMs: 1))])
        #expect(!restored)
    }
}

extension CurrencyHistories {
    /// ``append(_:_:amount:maximum:transaction:source:ref:atMs:kept:)`` keeping as many as the
    /// server does by default.
    mutating func append(_ profile: ProfileID, _ currency: String, amount: Int64, maximum: Int64, transaction: TransactionName,
                         source: CurrencySource, ref: String, atMs: Int64) -> (amount: Int64, balance: Int64)?
    {
        append(profile, currency, amount: amount, maximum: maximum, transaction: transaction, source: source, ref: ref,
               atMs: atMs, kept: Retention.standard.historyEntriesPerCurrency)
    }
}

@Suite struct CurrencyHistoriesBehaviour {
    private func profile(_ n: Int) -> ProfileID { ProfileID(high: UInt64(n), low: UInt64(n) &* 31, tag: 9) }

    @Test func entriesAreKeptPerProfileAndCurrencyNewestFirst() {
        var histories = CurrencyHistories()
        for n in 0..<10 {
            _ = histories.append(alice, n % 2 == 0 ? "COINS" : "GEMS", amount: Int64(n + 1), maximum: 100,
                                 transaction: TransactionName(sequence: UInt64(n), index: 0), source: .transaction, ref: "ref-\(n)",
                                 atMs: Int64(n))
        }
        let coins = histories.list(alice, "COINS")
        #expect(coins?.balance == 1 + 3 + 5 + 7 + 9 && coins?.count == 5)
        let newest = coins.map { histories.newest(of: $0, limit: 2) } ?? []
        #expect(newest == [
            CurrencyEntry(transactionID: "vct_8_0", amount: 9, balance: 25, source: .transaction, ref: "ref-8", atMs: 8),
            CurrencyEntry(transactionID: "vct_6_0", amount: 7, balance: 16, source: .transaction, ref: "ref-6", atMs: 6),
        ])
        #expect(histories.lists(of: alice).map(\.currency) == ["COINS", "GEMS"])
        #expect(histories.list(bob, "COINS") == nil && histories.list(alice, "GOLD") == nil)
    }

    @Test func anEntryHoldsWhatFitsAndNothingMovesNoEntry() {
        var histories = CurrencyHistories()
        #expect(histories.append(alice, "COINS", amount: -5, maximum: 100, transaction: TransactionName(sequence: 1, index: 0),
                                 source: .refund, ref: "t", atMs: 0) == nil)
        #expect(histories.isEmpty, "no empty list is made")
        let moved = histories.append(alice, "COINS", amount: 150, maximum: 100, transaction: TransactionName(sequence: 2, index: 3),
                                     source: .merge, ref: "", atMs: 1)
        #expect(moved?.amount == 100 && moved?.balance == 100)
        #expect(histories.list(alice, "COINS").map { histories.all(of: $0) } == [
            CurrencyEntry(transactionID: "vct_2_3", amount: 100, balance: 100, source: .merge, ref: "", atMs: 1),
        ])
    }

    @Test func removedProfilesGoAndTheRestSurviveCompaction() {
        var histories = CurrencyHistories()
        // Lists read back from storage may hold ids spelled as text; appended entries are numbers.
        for n in 0..<3_000 {
            let restored = histories.restore(profile(n), n % 5 == 0 ? "GEMS" : "COINS", [
                CurrencyEntry(transactionID: "spelled-\(n)", amount: 1, balance: 1, source: .transaction, ref: "r0-\(n)", atMs: 0),
            ])
            #expect(restored)
        }
        for round in 1..<3 {
            for n in 0..<3_000 {
                _ = histories.append(profile(n), n % 5 == 0 ? "GEMS" : "COINS", amount: Int64(round + 1), maximum: 1_000,
                                     transaction: TransactionName(sequence: UInt64(round), index: UInt32(n)), source: .transaction,
                                     ref: "r\(round)-\(n)", atMs: Int64(round))
            }
        }
        for n in 0..<3_000 where n % 3 != 0 { histories.remove(profile(n)) }
        #expect(histories.lists.count == 1_000)
        for n in stride(from: 0, to: 3_000, by: 3) {
            let currency = n % 5 == 0 ? "GEMS" : "COINS"
            let all = histories.list(profile(n), currency).map { histories.all(of: $0) } ?? []
            #expect(all.map(\.transactionID) == ["spelled-\(n)", "vct_1_\(n)", "vct_2_\(n)"])
            #expect(all.map(\.ref) == ["r0-\(n)", "r1-\(n)", "r2-\(n)"] && all.map(\.balance) == [1, 3, 6])
        }
        #expect(histories.list(profile(1), "COINS") == nil)
    }

    @Test func aRestoredListIsLikeTheAppendedOne() {
        var appended = CurrencyHistories()
        for n in 0..<4 {
            _ = appended.append(alice, "COINS", amount: 10, maximum: 100, transaction: TransactionName(sequence: UInt64(n), index: 1),
                                source: .renewal, ref: "t\(n)", atMs: Int64(n))
        }
        let entries = appended.list(alice, "COINS").map { appended.all(of: $0) } ?? []
        var restored = CurrencyHistories()
        let first = restored.restore(alice, "COINS", entries)
        let twice = restored.restore(alice, "COINS", entries)
        let empty = restored.restore(bob, "COINS", [])
        #expect(first)
        #expect(!twice, "a list twice")
        #expect(!empty, "an empty list")
        #expect(restored.list(alice, "COINS").map { restored.all(of: $0) } == entries)
        #expect(restored.list(alice, "COINS")?.balance == 40)
    }
}

@Suite struct CurrencyLedgerViews {
    @Test func historiesShowAsTheDictionaryTheyWere() {
        let entry = CurrencyEntry(transactionID: "vct_1_0", amount: 5, balance: 5, source: .purchase, ref: "t1", atMs: 1)
        let dictionary: [ProfileID: [String: [CurrencyEntry]]] = [alice: ["COINS": [entry], "GEMS": [entry]], bob: ["GEMS": [entry]]]
        let ledger = CurrencyLedger(histories: dictionary, termGrants: [], idempotency: [:])
        #expect(ledger.histories.dictionary == dictionary)
        #expect(ledger.histories.count == 2 && !ledger.histories.isEmpty && ledger.historyCount == 3)
        #expect(ledger.histories[alice] == dictionary[alice] && ledger.histories[ProfileID(high: 9, low: 9, tag: 9)] == nil)
        var order: [String] = []
        ledger.forEachHistory { profile, currency, _ in order.append("\(profile == alice ? "alice" : "bob") \(currency)") }
        #expect(order == ["alice COINS", "alice GEMS", "bob GEMS"], "profile then currency order (alice < bob)")
        #expect(CurrencyLedger(histories: ledger.histories, termGrants: [], idempotency: [:]) == ledger)
    }
}

/// A small deterministic generator for the property tests.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct TermGrantTableBehaviour {
    private func grant(_ term: String, profile: ProfileID?, lines: [(String, Int64)], purchase: String = "o1") -> TermGrant {
        TermGrant(term: term, purchase: PurchaseKey(store: String(term.prefix { $0 != ":" }), id: purchase), profile: profile,
                  lines: lines.map { TermGrant.Line(currency: $0.0, granted: $0.1) })
    }

    @Test func grantsAreFoundByTermAsTheyWereStored() {
        var table = TermGrantTable()
        func lines(_ n: Int) -> [(String, Int64)] {
            switch n % 3 {
            case 0: []
            case 1: [("COINS", Int64(n))]
            default: [("COINS", 1), ("GEMS", 2), ("GOLD", Int64(n))]
            }
        }
        let stored: [TermGrant] = (0..<5_000).map { n in
            grant("test:\(n)", profile: n % 2 == 0 ? alice : nil, lines: lines(n), purchase: "p\(n / 2)")
        }
        for item in stored { table.store(item) }
        #expect(table.count == 5_000)
        #expect(table.all == stored)
        #expect(table["test:5000"] == nil && table["app_store:1"] == nil)
        #expect(table.sortedByTerm.map(\.term) == stored.map(\.term).sorted())
    }

    @Test func aGrantStoredAgainChangesInPlace() {
        var table = TermGrantTable()
        table.store(grant("test:a", profile: nil, lines: [("COINS", 10), ("GEMS", 5)]))
        table.store(grant("test:b", profile: nil, lines: [("COINS", 1), ("GEMS", 1)]))
        var credited = grant("test:a", profile: bob, lines: [("COINS", 10), ("GEMS", 5)], purchase: "o2")
        credited.lines[1].owedBack = 2
        credited.lines[1].takenBack = 1
        table.store(credited)
        #expect(table["test:a"] == credited && table.count == 2)
        let fewer = grant("test:a", profile: nil, lines: [("GEMS", 7)])
        table.store(fewer)
        #expect(table["test:a"] == fewer)
        let more = grant("test:a", profile: alice, lines: [("A", 1), ("B", 2), ("C", 3)])
        table.store(more)
        #expect(table["test:a"] == more)
        #expect(table["test:b"] == grant("test:b", profile: nil, lines: [("COINS", 1), ("GEMS", 1)]), "its neighbour untouched")
    }

    @Test func termsCompareAsStringsDo() {
        var table = TermGrantTable()
        table.store(grant("test:caf\u{E9}", profile: nil, lines: [("COINS", 1)]))
        #expect(table["test:cafe\u{301}"]?.lines.first?.granted == 1)
        table.store(grant("test:cafe\u{301}", profile: alice, lines: [("COINS", 2)]))
        #expect(table.count == 1 && table.all.first?.term == "test:caf\u{E9}" && table.all.first?.profile == alice)
    }

    @Test func aLedgerRefusesATermListedTwice() {
        var ledger = CurrencyLedger()
        let twice = ledger.restoreTermGrants([grant("test:a", profile: nil, lines: []), grant("test:a", profile: alice, lines: [])])
        #expect(!twice)
        #expect(ledger.termGrants.count == 1)
    }
}
