import GatehouseBase
@testable import GatehouseCore
import Testing

/// What grows with the write rate is bounded (DESIGN.md, "Virtual currencies"; PROTOCOL.md, "The
/// event feed"): each currency's history keeps its newest entries, idempotency keys and store
/// notification ids their window, the feed its 7 days within a cap. Each table is driven by a
/// steady flow across its window with a moved clock: once it is full, what it holds stays
/// bounded, and the work a write costs (what moves, never time) does not grow with the table.
@Suite struct Retention_ {
    static let coins = CurrencyCatalogue.coins

    static func retention(history: Int = 1_000, idempotencyMs: Int64 = Retention.standard.idempotencyMs,
                          feedAgeMs: Int64 = Retention.standard.feedAgeMs, feedEvents: Int = 10_000_000) -> Retention
    {
        var retention = Retention()
        retention.historyEntriesPerCurrency = history
        retention.idempotencyMs = idempotencyMs
        retention.feedAgeMs = feedAgeMs
        retention.feedEventsMax = feedEvents
        return retention
    }

    @Test func theDefaultsAreTheProtocols() {
        #expect(Retention.standard.historyEntriesPerCurrency == 1_000)
        #expect(Retention.standard.idempotencyMs == 24 * 3_600_000)
        #expect(Retention.standard.feedAgeMs == 7 * 86_400_000)
        #expect(Retention.standard.feedEventsMax == 10_000_000)
    }

    @Test func aProfileKeepsItsNewestHistoryEntriesInEachCurrency() throws {
        var world = PurchaseWorld.withCurrencies(retention: Self.retention(history: 5))
        let alice = try world.create("alice")
        for n in 1...12 { try world.transact(alice, Int64(n), key: "k\(n)") }
        try world.transact(alice, CurrencyCatalogue.gems, 3, key: "g1")
        let history = world.history(alice)
        #expect(history.map(\.amount) == [8, 9, 10, 11, 12], "the newest five, oldest first")
        #expect(history.last?.balance == 78 && world.balance(alice) == 78, "the balance is every credit's, kept or not")
        #expect(history.first.map(\.balance) == Int64(36), "1 + 2 + … + 8: what the dropped entries left, and the first kept")
        #expect(world.history(alice, CurrencyCatalogue.gems).map(\.amount) == [3], "each currency keeps its own")
        let shown = try world.state.currencyHistory(profile: alice, currency: Self.coins, limit: 1_000)
        #expect(shown.map(\.amount) == [12, 11, 10, 9, 8])
        // A debit still sees the whole balance, and the replay rebuilds the same lists.
        try world.transact(alice, -78, key: "all")
        #expect(world.balance(alice) == 0 && world.history(alice).count == 5)
        #expect(world.replayed == world.state)
    }

    @Test func aMergeAddsATrimmedBalanceWhole() throws {
        var world = PurchaseWorld.withCurrencies(retention: Self.retention(history: 3))
        let guest = try world.create()
        for n in 1...10 { try world.transact(guest, 10, key: "g\(n)") }
        let alice = try world.create("alice")
        try world.transact(alice, 1, key: "a1")
        try world.identify(guest, "alice")
        #expect(world.balance(alice) == 101, "the guest's 100 move whole, though it kept three entries")
        #expect(world.history(alice).map(\.amount) == [1, 100])
        #expect(world.replayed == world.state)
    }

    /// Many profiles credited in turn, far more entries than their lists keep: the entries held
    /// stay within twice what the lists keep, and compacting moves at most one entry for each
    /// entry an append dropped.
    @Test func aSteadyFlowOfCreditsKeepsTheHistoriesBoundedAndMovesLittle() {
        var histories = CurrencyHistories()
        let kept = 50
        let profiles = (0..<200).map { ProfileID(high: UInt64($0), low: 7, tag: 1) }
        var appends = 0
        for round in 0..<400 {
            for (number, profile) in profiles.enumerated() {
                _ = histories.append(profile, Self.coins, amount: 1, maximum: 1_000_000,
                                     transaction: TransactionName(sequence: UInt64(round), index: UInt32(number)),
                                     source: .transaction, ref: "r", atMs: Int64(round), kept: kept)
                appends += 1
            }
            #expect(histories.entries.count <= 2 * kept * profiles.count + 4_096)
        }
        #expect(histories.entriesMoved > 0, "the lists were compacted")
        #expect(histories.entriesMoved <= appends, "each move pays for an entry dropped")
        for profile in profiles {
            let list = histories.list(profile, Self.coins)
            #expect(list?.count == UInt32(kept) && list?.balance == 400)
            #expect(list.map { histories.all(of: $0).map(\.balance) } == Array(351...400))
        }
    }

    /// A list read back longer than the server now keeps (a lower --history-per-currency) is cut
    /// to it by its next append, and keeps being cut from then on.
    @Test func aListReadBackLongerThanItKeepsIsCutOnItsNextAppend() {
        var histories = CurrencyHistories()
        let profile = ProfileID(high: 9, low: 9, tag: 1)
        let stored = (1...20).map {
            CurrencyEntry(transactionID: "vct_\($0)_0", amount: 1, balance: Int64($0), source: .transaction, ref: "r", atMs: Int64($0))
        }
        let restored = histories.restore(profile, Self.coins, stored)
        #expect(restored)
        for n in 21...23 {
            _ = histories.append(profile, Self.coins, amount: 1, maximum: 1_000, transaction: TransactionName(sequence: UInt64(n), index: 0),
                                 source: .transaction, ref: "r", atMs: Int64(n), kept: 5)
            let list = histories.list(profile, Self.coins)
            #expect(list?.count == 5 && list?.balance == Int64(n))
            let balances = list.map { histories.all(of: $0) }?.map(\.balance)
            #expect(balances == Array(Int64(n - 4)...Int64(n)))
        }
    }

    @Test func aKeyIsRememberedForItsWindowOnly() throws {
        let window: Int64 = 60_000
        var world = PurchaseWorld.withCurrencies(retention: Self.retention(idempotencyMs: window))
        let alice = try world.create("alice")
        let first = try world.transact(alice, 5, key: "k")
        world.nowMs += window
        #expect(try world.transact(alice, 5, key: "k").transactionID == first.transactionID)
        world.nowMs += 1
        #expect(try world.transact(alice, 5, key: "k").replayed == false)
        #expect(world.balance(alice) == 10)
        #expect(world.replayed == world.state)
    }

    /// A key a second for ten windows: the table holds one window's keys, and compacting moves
    /// at most one key for each key forgotten.
    @Test func aSteadyFlowOfKeysKeepsOneWindowAndMovesLittle() throws {
        let window: Int64 = 3_000_000
        var world = PurchaseWorld.withCurrencies(retention: Self.retention(idempotencyMs: window))
        let alice = try world.create("alice")
        let writes = 10 * Int(window / 1_000)
        for second in 1...writes {
            world.nowMs += 1_000
            try world.transact(alice, 1, key: "key-\(second)")
            if second > Int(window / 1_000) {
                #expect(world.state.currencies.idempotencyCount == Int(window / 1_000) + 1)
            }
        }
        let moved = world.state.currencies.keysMoved
        #expect(moved > 0 && moved <= writes, "\(moved) keys moved for \(writes) writes")
        #expect(world.balance(alice) == Int64(writes))
    }

    /// A store notification a second for three windows of 30 days would be 7.8 million ids:
    /// the memory is driven directly, a notification an hour, and holds one window's ids.
    @Test func aSteadyFlowOfNotificationIdsKeepsOneWindowAndMovesLittle() {
        var memory = NotificationMemory()
        let hour: Int64 = 3_600_000
        let perWindow = Int(NotificationMemory.keptMs / hour)
        let inserts = 3 * perWindow
        for n in 1...inserts {
            memory.insert(SeenNotification(key: "apple:\(n)", atMs: Int64(n) * hour))
            if n > perWindow { #expect(memory.count == perWindow + 1) }
        }
        #expect(memory.entriesMoved > 0 && memory.entriesMoved <= inserts)
        #expect(memory.contains("apple:\(inserts)") && !memory.contains("apple:\(inserts - perWindow - 1)"))
    }

    /// The feed through the rules: a transaction's event a minute for three weeks keeps one
    /// week's, and a cap smaller than that keeps the newest up to it.
    @Test func theFeedKeepsSevenDaysWithinItsCap() throws {
        for cap in [10_000_000, 2_000] {
            var world = PurchaseWorld.withCurrencies(retention: Self.retention(feedEvents: cap))
            let alice = try world.create("alice")
            let minute: Int64 = 60_000
            let perWeek = Int(Retention.standard.feedAgeMs / minute)
            for n in 1...(3 * perWeek) {
                world.nowMs += minute
                try world.transact(alice, 1, key: "k\(n)")
            }
            let events = world.state.events
            #expect(events.count == min(cap, perWeek + 1), "cap \(cap)")
            #expect(events.allSatisfy { world.nowMs - $0.atMs <= Retention.standard.feedAgeMs })
            #expect(events.last?.type == .virtualCurrencyTransaction)
        }
    }
}
