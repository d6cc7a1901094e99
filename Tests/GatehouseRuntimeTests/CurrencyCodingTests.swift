import GatehouseBase
import GatehouseCore
@testable import GatehouseRuntime
import GatehouseStorage
import Testing

/// Fixtures shared by the currency coding suites.
enum CurrencyFixtures {
    static let profile = PurchaseFixtures.profile
    static let profileHex = "0102030405060708090a0b0c0d0e0f10111213"
    /// Sorts before `profile`.
    static let profileZero = ProfileID(high: 0, low: 1, tag: 0x111213)
    static let profileZeroHex = "0000000000000000" + "0000000000000001" + "111213"

    /// A short string as written: one length byte, then its UTF-8 bytes.
    static func str(_ text: String) -> String { PurchaseRecordGoldenBytes.str(text) }

    static let refundMovement = CurrencyMovement(currency: "COINS", amount: -30, source: .refund, ref: "t2")
    static let transactionMovement = CurrencyMovement(currency: "COINS", amount: 300, source: .transaction, ref: "k-1",
                                                      reason: "bonus ü")
    static let pendingGrant = TermGrant(term: "test:c1", purchase: PurchaseKey(store: "test", id: "c1"), profile: nil,
                                        lines: [TermGrant.Line(currency: "COINS", granted: 500)])
    static let creditedGrant = TermGrant(
        term: "app_store:t2", purchase: PurchaseKey(store: "app_store", id: "o1"), profile: profile,
        lines: [TermGrant.Line(currency: "COINS", granted: 100, owedBack: 50, takenBack: 40),
                TermGrant.Line(currency: "GEMS", granted: 5, owedBack: 2, takenBack: 2)])
    static let recordWithReason = IdempotencyRecord(profile: profile, currency: "COINS", amount: -20, reason: "refund of order 17",
                                                    transactionID: "vct_4_0", balance: 80, atMs: 1_700_000_000_000)
    static let recordWithoutReason = IdempotencyRecord(profile: profile, currency: "GEMS", amount: 5, reason: nil,
                                                       transactionID: "vct_2_0", balance: 5, atMs: 7)

    /// Changes of every kind tags 14–16 stand for, with and without their optional parts.
    static let everyCurrencyChange: [ProjectState.Change] = [
        .balanceChanged(profile, refundMovement),
        .balanceChanged(profileZero, transactionMovement),
        .termGrantStored(pendingGrant),
        .termGrantStored(creditedGrant),
        .termGrantStored(TermGrant(term: "test:x", purchase: PurchaseKey(store: "test", id: "x"), profile: profileZero, lines: [])),
        .idempotencyRecorded("order-17", recordWithReason),
        .idempotencyRecorded("k", recordWithoutReason),
    ]

    /// The golden state's body (`RecordGoldenBytes.state`) up to its currency ledger.
    static let bodyBeforeLedger = String(RecordGoldenBytes.goldenCreated.dropFirst(2).dropLast(6))

    /// The golden state's body with `ledger` (hex) as its currency ledger.
    static func body(ledger: String) -> [UInt8] { Hex.decode(bodyBeforeLedger + ledger)! }

    /// A signed varint as written (zigzag, then LEB128), for hand-made damaged bytes.
    static func varint(_ value: Int64) -> String {
        var writer = ByteWriter()
        writer.writeVarInt(value)
        return Hex.encode(writer.bytes)
    }

    /// One history entry as the ledger writes it.
    static func entry(_ id: String, amount: Int64, balance: Int64, source: String = "transaction", ref: String = "k",
                      atMs: Int64 = 3) -> String {
        str(id) + varint(amount) + varint(balance) + str(source) + str(ref) + varint(atMs)
    }

    /// One term grant (one line of 10 COINS) as the ledger writes it.
    static func grant(_ term: String, id: String) -> String {
        str(term) + str("test") + str(id) + "00" + "01" + str("COINS") + varint(10) + "00" + "00"
    }

    /// One idempotency record as the ledger writes it.
    static func key(_ key: String) -> String {
        str(key) + profileHex + str("COINS") + varint(10) + "00" + str("vct_1_0") + varint(10) + varint(3)
    }
}

/// The exact bytes of the change records currencies added (tags 14–16) and of the ledger in a
/// snapshot body: what old logs and snapshots hold must keep meaning the same. A change here is
/// a format change (docs/data-format.md, "Runtime records and snapshot bodies").
@Suite struct CurrencyRecordGoldenBytes {
    typealias F = CurrencyFixtures

    static func expectGolden(_ change: ProjectState.Change, _ golden: String,
                             sourceLocation: SourceLocation = #_sourceLocation) throws {
        try PurchaseRecordGoldenBytes.expectGolden(change, golden, sourceLocation: sourceLocation)
    }

    @Test func balanceChangedRecordWithoutAReason() throws {
        // -30 is zigzag 59.
        let golden = "0e" + F.profileHex + F.str("COINS") + "3b" + F.str("refund") + F.str("t2") + "00"
        try Self.expectGolden(.balanceChanged(F.profile, F.refundMovement), golden)
    }

    @Test func balanceChangedRecordWithAReason() throws {
        // 300 is zigzag 600; the reason's length counts UTF-8 bytes (ü takes two).
        let golden = "0e" + F.profileZeroHex + F.str("COINS") + "d804" + F.str("transaction") + F.str("k-1")
            + "01" + "08626f6e757320c3bc"
        try Self.expectGolden(.balanceChanged(F.profileZero, F.transactionMovement), golden)
    }

    @Test func termGrantStoredRecordOfAnUnownedPurchase() throws {
        // Term, purchase (store, id), no profile, one line: COINS, granted 500 (zigzag 1000),
        // nothing owed or taken back.
        let golden = "0f" + F.str("test:c1") + F.str("test") + F.str("c1") + "00"
            + "01" + F.str("COINS") + "e807" + "00" + "00"
        try Self.expectGolden(.termGrantStored(F.pendingGrant), golden)
    }

    @Test func termGrantStoredRecordWithAProfileAndTwoLines() throws {
        let golden = "0f" + F.str("app_store:t2") + F.str("app_store") + F.str("o1") + "01" + F.profileHex
            + "02"
            + F.str("COINS") + "c801" + "64" + "50"  // granted 100, owed back 50, taken back 40
            + F.str("GEMS") + "0a" + "04" + "04"  // granted 5, owed back 2, taken back 2
        try Self.expectGolden(.termGrantStored(F.creditedGrant), golden)
    }

    @Test func idempotencyRecordedRecordWithAReason() throws {
        // Key, profile, currency, amount -20 (zigzag 39), the reason, the answer's transaction id
        // and balance 80 (zigzag 160), at 1,700,000,000,000 ms.
        let golden = "10" + F.str("order-17") + F.profileHex + F.str("COINS") + "27" + "01" + F.str("refund of order 17")
            + F.str("vct_4_0") + "a001" + "80a0abfef962"
        try Self.expectGolden(.idempotencyRecorded("order-17", F.recordWithReason), golden)
    }

    @Test func idempotencyRecordedRecordWithoutAReason() throws {
        let golden = "10" + F.str("k") + F.profileHex + F.str("GEMS") + "0a" + "00" + F.str("vct_2_0") + "0a" + "0e"
        try Self.expectGolden(.idempotencyRecorded("k", F.recordWithoutReason), golden)
    }

    /// A ledger of two profiles' histories, a pending and a credited term grant and two keys,
    /// as the last part of a snapshot body: histories by profile then currency, grants by term,
    /// keys by key.
    @Test func currencyLedgerInASnapshotBody() throws {
        func entry(_ id: String, _ amount: Int64, _ balance: Int64, _ source: CurrencySource, _ ref: String, _ atMs: Int64)
            -> CurrencyEntry {
            CurrencyEntry(transactionID: id, amount: amount, balance: balance, source: source, ref: ref, atMs: atMs)
        }
        let ledger = CurrencyLedger(
            histories: [
                F.profile: [
                    "GEMS": [entry("vct_1_1", 5, 5, .renewal, "t2", 5)],
                    "COINS": [entry("vct_1_0", 100, 100, .purchase, "t1", 5), entry("vct_2_0", -30, 70, .refund, "t1", 6)],
                ],
                F.profileZero: [
                    "GEMS": [entry("vct_3_0", 7, 7, .transaction, "j", 7), entry("vct_4_0", -2, 5, .transaction, "k", 8)],
                ],
            ],
            termGrants: [
                TermGrant(term: "test:t1", purchase: PurchaseKey(store: "test", id: "t1"), profile: F.profile,
                          lines: [TermGrant.Line(currency: "COINS", granted: 100, owedBack: 30, takenBack: 30)]),
                TermGrant(term: "test:c9", purchase: PurchaseKey(store: "test", id: "c9"), profile: nil,
                          lines: [TermGrant.Line(currency: "COINS", granted: 500)]),
            ],
            idempotency: [
                "k": IdempotencyRecord(profile: F.profileZero, currency: "GEMS", amount: -2, reason: "gift", transactionID: "vct_4_0",
                                       balance: 5, atMs: 8),
                "j": IdempotencyRecord(profile: F.profileZero, currency: "GEMS", amount: 7, reason: nil, transactionID: "vct_3_0",
                                       balance: 7, atMs: 7),
            ])
        let histories = "03"
            + F.profileZeroHex + F.str("GEMS") + "02"
            + F.str("vct_3_0") + "0e" + "0e" + F.str("transaction") + F.str("j") + "0e"  // +7, balance 7, at 7 ms
            + F.str("vct_4_0") + "03" + "0a" + F.str("transaction") + F.str("k") + "10"  // -2, balance 5, at 8 ms
            + F.profileHex + F.str("COINS") + "02"
            + F.str("vct_1_0") + "c801" + "c801" + F.str("purchase") + F.str("t1") + "0a"  // +100, balance 100, at 5 ms
            + F.str("vct_2_0") + "3b" + "8c01" + F.str("refund") + F.str("t1") + "0c"  // -30, balance 70, at 6 ms
            + F.profileHex + F.str("GEMS") + "01"
            + F.str("vct_1_1") + "0a" + "0a" + F.str("renewal") + F.str("t2") + "0a"  // +5, balance 5, at 5 ms
        let grants = "02"
            + F.str("test:c9") + F.str("test") + F.str("c9") + "00" + "01" + F.str("COINS") + "e807" + "00" + "00"
            + F.str("test:t1") + F.str("test") + F.str("t1") + "01" + F.profileHex + "01" + F.str("COINS") + "c801" + "3c" + "3c"
        let keys = "02"
            + F.str("j") + F.profileZeroHex + F.str("GEMS") + "0e" + "00" + F.str("vct_3_0") + "0e" + "0e"
            + F.str("k") + F.profileZeroHex + F.str("GEMS") + "03" + "01" + F.str("gift") + F.str("vct_4_0") + "0a" + "10"
        let golden = F.bodyBeforeLedger + histories + grants + keys

        let base = RecordGoldenBytes.state
        let state = ProjectState(id: base.id, name: base.name, createdMs: base.createdMs, keys: base.keys,
                                 keyGenerations: base.keyGenerations, config: base.config, sequence: base.sequence,
                                 configCursor: base.configCursor, profiles: base.profiles, events: base.events,
                                 purchases: base.purchases, currencies: ledger)
        // A version 3 body holds the ledger as its last section, byte for byte as version 2 did.
        let written = Hex.encode(StateCoding.sectionBytes(of: state)[3])
        #expect(written == histories + grants + keys, "\(written)")
        let decoded = try StateCoding.decode(try #require(Hex.decode(golden)))
        #expect(decoded == state)
        #expect(decoded.currencies.balance(of: F.profile, "COINS") == 70)
        #expect(decoded.currencies.balance(of: F.profileZero, "GEMS") == 5)
    }
}

/// Currency changes read back exactly what was written; a state whose ledger the real rules
/// built survives a snapshot body (its pending grants still credit their claimer), writes the
/// same bytes every time, and damaged ledgers are refused.
@Suite struct CurrencyRecordCoding {
    typealias F = CurrencyFixtures
    typealias B = CurrencyStateBuilder

    @Test(arguments: CurrencyFixtures.everyCurrencyChange)
    func everyCurrencyChangeRoundTrips(_ change: ProjectState.Change) throws {
        let record = RuntimeRecord.projectChanged(7, .init([change], atMs: 1_700_000_000_000))
        #expect(try RuntimeRecord(record.logRecord) == record)
    }

    @Test func aBatchOfEveryCurrencyChangeRoundTrips() throws {
        let record = RuntimeRecord.projectChanged(7, .init(F.everyCurrencyChange, atMs: -1))
        #expect(try RuntimeRecord(record.logRecord) == record)
    }

    @Test func everyBatchTheRulesDecidedRoundTrips() throws {
        let (_, batches) = try B.build()
        let changes = batches.flatMap(\.changes)
        #expect(changes.contains { if case .balanceChanged = $0 { true } else { false } })
        #expect(changes.contains { if case .termGrantStored = $0 { true } else { false } })
        #expect(changes.contains { if case .idempotencyRecorded = $0 { true } else { false } })
        for batch in batches {
            let record = RuntimeRecord.projectChanged(2, batch)
            #expect(try RuntimeRecord(record.logRecord) == record)
        }
    }

    @Test func aStateWithCurrenciesRoundTripsThroughASnapshotBody() throws {
        let (state, _) = try B.build()
        let ledger = state.currencies
        // The state holds what the test is about.
        let entries = ledger.histories.values.flatMap(\.values).flatMap { $0 }
        #expect(Set(entries.map(\.source)) == Set(CurrencySource.allCases), "every source in some history")
        #expect(ledger.histories.count == 3 && ledger.histories[B.guest] == nil, "alice, bob, carol; the guest merged away")
        #expect(ledger.termGrants.values.contains { $0.profile == nil && $0.lines.contains { $0.owedBack > 0 } })
        #expect(ledger.termGrants.values.contains { $0.profile == nil && $0.lines.allSatisfy { $0.owedBack == 0 } })
        #expect(ledger.termGrants.values.contains { $0.profile != nil && $0.lines.count == 2 })
        #expect(ledger.termGrants[B.term("c3")]?.profile == B.carol, "credited when carol claimed it")
        #expect(ledger.termGrants[B.term("c1")]?.lines.first?.owedBack == 0, "a refund reversed")
        #expect(ledger.termGrants[B.term("s4")]?.lines.first?.takenBack == 100, "a revoke")
        let reasons = ledger.idempotency.values.map(\.reason)
        #expect(reasons.contains(nil) && reasons.contains { $0 != nil })
        // k1 to k3 are more than a month older than the last batch: forgotten as later ones came.
        #expect(ledger.idempotency.keys.sorted() == ["k4", "k5", "k6", "k7"])
        #expect(ledger.termGrants[B.term("s1-3")]?.lines.map(\.currency) == ["COINS", "GEMS"], "a resubscribe grants both")
        func balances(coins: Int64, gems: Int64) -> [CurrencyBalance] {
            [CurrencyBalance(code: "COINS", balance: coins), CurrencyBalance(code: "GEMS", balance: gems)]
        }
        #expect(state.balances(of: B.alice) == balances(coins: 200, gems: 11))
        #expect(state.balances(of: B.bob) == balances(coins: 100, gems: 0))
        #expect(state.balances(of: B.carol) == balances(coins: 500, gems: 0))

        let decoded = try StateCoding.decode(StateCoding.encode(state))
        #expect(decoded == state)
        #expect(decoded.currencies.histories == ledger.histories)
        #expect(decoded.currencies.termGrants == ledger.termGrants)
        #expect(decoded.currencies.idempotency == ledger.idempotency)
        #expect(decoded.events == state.events)
        for id in [B.alice, B.bob, B.carol, B.guest] {
            #expect(decoded.balances(of: id) == state.balances(of: id))
            for currency in ["COINS", "GEMS"] {
                #expect(try decoded.currencyHistory(profile: id, currency: currency, limit: 1000)
                    == state.currencyHistory(profile: id, currency: currency, limit: 1000))
            }
        }
        let record = RuntimeRecord.projectCreated(4, state)
        #expect(try RuntimeRecord(record.logRecord) == record)
    }

    @Test func equalStatesEncodeToEqualBytes() throws {
        let (state, _) = try B.build()
        let bytes = StateCoding.encode(state)
        #expect(StateCoding.encode(state) == bytes)
        #expect(StateCoding.encode(try StateCoding.decode(bytes)) == bytes)
        // A second state built by the same rules is equal and writes the same bytes.
        let (again, _) = try B.build()
        #expect(again == state)
        #expect(StateCoding.encode(again) == bytes)
        // A ledger rebuilt from its grants in another order writes the same bytes.
        let ledger = state.currencies
        for grants in [ledger.termGrants.values.sorted { $0.term > $1.term }, ledger.termGrants.values.sorted { $0.term < $1.term }] {
            let rebuilt = CurrencyLedger(histories: ledger.histories, termGrants: grants, idempotency: ledger.idempotency)
            #expect(rebuilt == ledger)
            var writer = ByteWriter()
            CurrencyCoding.write(rebuilt, into: &writer)
            #expect(Array(bytes.suffix(writer.count)) == writer.bytes)
        }
    }

    /// The pending index is not stored: loading rebuilds it from the term grants, so a profile
    /// that takes the token after a restart is credited exactly as before it.
    @Test func pendingGrantsAreCreditedAfterASnapshotBody() throws {
        let (state, _) = try B.build()
        var original = state
        var copy = try StateCoding.decode(StateCoding.encode(state))
        // The server gives a loaded state its limits (they are not stored).
        copy.retention = state.retention
        let dave = ProfileID(high: 50, low: 51, tag: state.profileTag)
        let batch = ProjectState.ChangeBatch([
            .profileCreated(Profile(id: dave, customerUserID: "dave", token: B.strayToken, createdMs: B.endMs,
                                    lastSeenMs: B.endMs, cursor: 0)),
        ], atMs: B.endMs)
        original.apply(batch)
        copy.apply(batch)
        #expect(copy == original)
        // Both pending terms: the coins pack less the half refunded (500 - 250), the subscription's 100.
        #expect(copy.balances(of: dave).first == CurrencyBalance(code: "COINS", balance: 350))
        #expect(copy.currencies.termGrants.values.allSatisfy { $0.profile != nil })
        #expect(StateCoding.encode(copy) == StateCoding.encode(original))
    }

    @Test func aReplayedTransactionChangesNothing() throws {
        let (state, _) = try B.build()
        let replay = try state.transact(profile: B.carol, currency: "GEMS", amount: -1, key: "k7", reason: "undo",
                                        nowMs: B.endMs)
        #expect(replay.replayed && replay.batch.changes.isEmpty)
        #expect(replay.transactionID == state.currencies.idempotency["k7"]?.transactionID)
    }

    @Test func everyTruncationOfAStateWithCurrenciesIsRefused() throws {
        let (state, _) = try B.build()
        let record = RuntimeRecord.projectCreated(3, state).logRecord
        for length in 0..<record.payload.count {
            let cut = WALRecord(kind: record.kind, payload: Array(record.payload.prefix(length)))
            #expect(throws: ByteReaderError.self, "cut at \(length)") { try RuntimeRecord(cut) }
        }
        let body = StateCoding.encode(state)
        for length in 0..<body.count {
            #expect(throws: ByteReaderError.self, "cut at \(length)") { try StateCoding.decode(Array(body.prefix(length))) }
        }
    }

    @Test func everyTruncationOfACurrencyChangeRecordIsRefused() {
        let record = RuntimeRecord.projectChanged(3, .init(F.everyCurrencyChange, atMs: 9)).logRecord
        for length in 0..<record.payload.count {
            let cut = WALRecord(kind: record.kind, payload: Array(record.payload.prefix(length)))
            #expect(throws: ByteReaderError.self, "cut at \(length)") { try RuntimeRecord(cut) }
        }
    }

    @Test func trailingBytesAfterTheLedgerAreRefused() throws {
        let (state, _) = try B.build()
        var body = StateCoding.encode(state)
        body.append(0)
        #expect(throws: ByteReaderError.self) { try StateCoding.decode(body) }
    }
}

/// A ledger the writer could never have produced is damage: refused, never loaded in part.
@Suite struct CurrencyLedgerRefusals {
    typealias F = CurrencyFixtures

    /// The golden state's body with `histories` as its ledger's only part.
    static func body(_ histories: [ProfileID: [String: [CurrencyEntry]]]) -> [UInt8] {
        let base = RecordGoldenBytes.state
        let ledger = CurrencyLedger(histories: histories, termGrants: [], idempotency: [:])
        return StateCoding.encode(ProjectState(
            id: base.id, name: base.name, createdMs: base.createdMs, keys: base.keys, keyGenerations: base.keyGenerations,
            config: base.config, sequence: base.sequence, configCursor: base.configCursor, profiles: base.profiles,
            events: base.events, purchases: base.purchases, currencies: ledger))
    }

    static func entry(_ id: String, _ amount: Int64, _ balance: Int64) -> CurrencyEntry {
        CurrencyEntry(transactionID: id, amount: amount, balance: balance, source: .transaction, ref: "k", atMs: 3)
    }

    @Test func aHistoryWhoseBalancesDoNotAddUpIsRefused() throws {
        let max = CurrencyLedger.balanceMax
        let damaged: [[CurrencyEntry]] = [
            [Self.entry("a", 10, 10), Self.entry("b", 5, 20)],  // 10 + 5 is not 20
            [Self.entry("a", 10, 5)],  // the balance before the first entry would be -5
            [Self.entry("a", -10, max)],  // or past the maximum
            [Self.entry("a", 10, 10), Self.entry("b", -20, -10)],  // adds up, but below 0
            [Self.entry("a", max, max), Self.entry("b", 1, max + 1)],  // adds up, but past the maximum
            [Self.entry("a", -1, -1)],
            [Self.entry("a", 0, 7)],  // a zero amount
        ]
        for history in damaged {
            let body = Self.body([F.profile: ["COINS": [Self.entry("ok", 3, 3)], "GEMS": history]])
            #expect(throws: ByteReaderError.self, "\(history)") { try StateCoding.decode(body) }
        }
        // Histories that add up, up to the maximum and back down to 0, read.
        let good = [Self.entry("a", 10, 10), Self.entry("b", max - 10, max), Self.entry("c", -max, 0)]
        let decoded = try StateCoding.decode(Self.body([F.profile: ["GEMS": good], F.profileZero: ["GEMS": good]]))
        #expect(decoded.currencies.histories[F.profile]?["GEMS"] == good)
        #expect(decoded.currencies.balance(of: F.profile, "GEMS") == 0)
        // A list that kept only its newest entries starts from the balance its older ones left.
        let trimmed = [Self.entry("c", 5, 15), Self.entry("d", -15, 0)]
        let read = try StateCoding.decode(Self.body([F.profile: ["GEMS": trimmed]]))
        #expect(read.currencies.histories[F.profile]?["GEMS"] == trimmed)
    }

    /// An amount near `Int64.max` would overflow the running balance: refused, not trapped on.
    @Test func aHistoryWhoseSumOverflowsIsRefused() {
        let body = CurrencyLedgerRefusals.body([CurrencyFixtures.profile: ["COINS": [
            CurrencyLedgerRefusals.entry("a", 1, 1), CurrencyLedgerRefusals.entry("b", .max, .min),
        ]]])
        #expect(throws: ByteReaderError.self) { try StateCoding.decode(body) }
    }

    @Test func anUnknownCurrencySourceNameIsRefused() throws {
        func ledger(_ source: String) -> String {
            "01" + F.profileHex + F.str("COINS") + "01" + F.entry("vct_1_0", amount: 10, balance: 10, source: source) + "00" + "00"
        }
        for source in ["gift", "Transaction", "refund-reversed", ""] {
            #expect(throws: ByteReaderError.self, "\(source)") { try StateCoding.decode(F.body(ledger: ledger(source))) }
        }
        for source in CurrencySource.allCases {
            let decoded = try StateCoding.decode(F.body(ledger: ledger(source.rawValue)))
            #expect(decoded.currencies.histories[F.profile]?["COINS"]?.first?.source == source)
        }
        // In a balance change record too.
        let prefix = PurchaseRecordGoldenBytes.prefix
        for (source, known) in [("chargeback", false), ("refund_reversed", true)] {
            let hex = prefix + "0e" + F.profileHex + F.str("COINS") + "3b" + F.str(source) + F.str("t2") + "00"
            let record = WALRecord(kind: 16, payload: try #require(Hex.decode(hex)))
            if known {
                #expect(throws: Never.self) { try RuntimeRecord(record) }
            } else {
                #expect(throws: ByteReaderError.self) { try RuntimeRecord(record) }
            }
        }
    }

    @Test func aTermListedTwiceIsRefused() throws {
        let twice = "00" + "02" + F.grant("test:a", id: "a") + F.grant("test:a", id: "b") + "00"
        #expect(throws: ByteReaderError.self) { try StateCoding.decode(F.body(ledger: twice)) }
        let distinct = "00" + "02" + F.grant("test:a", id: "a") + F.grant("test:b", id: "b") + "00"
        #expect(try StateCoding.decode(F.body(ledger: distinct)).currencies.termGrants.count == 2)
    }

    @Test func anIdempotencyKeyListedTwiceIsRefused() throws {
        #expect(throws: ByteReaderError.self) {
            try StateCoding.decode(F.body(ledger: "00" + "00" + "02" + F.key("k") + F.key("k")))
        }
        #expect(try StateCoding.decode(F.body(ledger: "00" + "00" + "02" + F.key("j") + F.key("k"))).currencies.idempotency.count == 2)
    }

    @Test func aHistoryListedTwiceIsRefused() throws {
        let history = F.profileHex + F.str("COINS") + "01" + F.entry("vct_1_0", amount: 10, balance: 10)
        #expect(throws: ByteReaderError.self) { try StateCoding.decode(F.body(ledger: "02" + history + history + "00" + "00")) }
        let other = F.profileHex + F.str("GEMS") + "01" + F.entry("vct_1_0", amount: 10, balance: 10)
        let decoded = try StateCoding.decode(F.body(ledger: "02" + history + other + "00" + "00"))
        #expect(decoded.currencies.histories[F.profile]?.count == 2)
    }
}

/// A project state built the way the server builds one: each batch decided by a public rule of
/// GatehouseCore, then applied. Its ledger holds every history source, owned, credited and
/// pending term grants (one of them half refunded while pending), and keys with and without a
/// reason.
enum CurrencyStateBuilder {
    static let day: Int64 = 86_400_000
    static let month = 30 * day
    static let startMs: Int64 = 1_700_000_000_000
    static let projectID = try! ProjectID(validating: "acme")
    static let alice = ProfileID(high: 10, low: 11, tag: ProfileID.tag(for: projectID))
    static let bob = ProfileID(high: 20, low: 21, tag: ProfileID.tag(for: projectID))
    static let carol = ProfileID(high: 30, low: 31, tag: ProfileID.tag(for: projectID))
    /// Anonymous; merged into alice when it identifies as her.
    static let guest = ProfileID(high: 40, low: 41, tag: ProfileID.tag(for: projectID))
    /// What is bought under it waits for carol, who takes it when she is created.
    static let carolToken = AppAccountToken(high: 4, low: 4)
    /// A token no profile holds while the state is built: what it carries stays pending.
    static let strayToken = AppAccountToken(high: 3, low: 3)
    /// The time of the last batch.
    static let endMs = startMs + 3 * month

    static var config: ProjectConfig {
        ProjectConfig(
            entitlements: [EntitlementDefinition(id: "pro")],
            products: [
                ProductDefinition(id: "pro_monthly", type: .subscription, entitlements: ["pro"],
                                  grants: [CurrencyGrant(currency: "GEMS", amount: 5, on: .renewal),
                                           CurrencyGrant(currency: "COINS", amount: 100, on: .purchase)]),
                ProductDefinition(id: "coins_pack", type: .consumable,
                                  grants: [CurrencyGrant(currency: "COINS", amount: 500, on: .purchase)]),
            ],
            currencies: [CurrencyDefinition(code: "COINS", name: "Coins"), CurrencyDefinition(code: "GEMS")],
            login: .alias, restore: .transfer, stores: StoreSettings(test: true))
    }

    static func term(_ transactionID: String) -> String { TermGrant.key(store: "test", transactionID: transactionID) }

    static func subscription(_ id: String, original: String, purchasedMs: Int64, token: AppAccountToken? = nil) -> StoreTransaction {
        StoreTransaction(store: "test", kind: .subscription, transactionID: id, originalTransactionID: original,
                         productID: "pro_monthly", purchasedMs: purchasedMs, expiresMs: purchasedMs + month, token: token,
                         price: 4.99, currency: "USD", periodType: .normal, environment: .sandbox)
    }

    static func coins(_ id: String, purchasedMs: Int64, token: AppAccountToken? = nil, familyShared: Bool = false)
        -> StoreTransaction {
        StoreTransaction(store: "test", kind: .oneTime, transactionID: id, originalTransactionID: id, productID: "coins_pack",
                         purchasedMs: purchasedMs, expiresMs: 0, token: token, price: 9.99, currency: "EUR",
                         periodType: .normal, environment: .production, familyShared: familyShared)
    }

    static func profile(_ id: ProfileID, _ customerUserID: String?, token: AppAccountToken, atMs: Int64) -> ProjectState.Change {
        .profileCreated(Profile(id: id, customerUserID: customerUserID, token: token, createdMs: atMs, lastSeenMs: atMs, cursor: 0))
    }

    /// The final state and every batch applied to reach it, in order.
    static func build() throws -> (ProjectState, [ProjectState.ChangeBatch]) {
        var state = ProjectState(id: projectID, name: "Acme", createdMs: startMs, keys: RecordCoding.keys)
        // Keys kept a month (a server may keep them longer than the default day): the state
        // keeps some and has forgotten others.
        state.retention.idempotencyMs = month
        var batches: [ProjectState.ChangeBatch] = []
        func apply(_ batch: ProjectState.ChangeBatch) {
            precondition(!batch.changes.isEmpty, "every step here changes something")
            state.apply(batch)
            batches.append(batch)
        }
        func report(_ profile: ProfileID, _ transaction: StoreTransaction, atMs: Int64) throws {
            apply(try state.reportPurchase(profile: profile, transaction: transaction, nowMs: atMs).batch)
        }
        func notify(_ id: String, _ original: String, atMs: Int64, _ event: StoreNotification.Event) throws {
            let notification = StoreNotification(store: "test", notificationID: id, originalTransactionID: original, atMs: atMs,
                                                 event: event)
            apply(try state.notify(notification, nowMs: atMs).batch)
        }
        func transact(_ profile: ProfileID, _ currency: String, _ amount: Int64, key: String, reason: String?, atMs: Int64) throws {
            let decision = try state.transact(profile: profile, currency: currency, amount: amount, key: key, reason: reason,
                                              nowMs: atMs)
            precondition(!decision.replayed)
            apply(decision.batch)
        }

        let t = startMs
        apply(.init([try state.replaceConfig(with: config, random: SeededRandomSource(seed: 1))], atMs: t))
        apply(.init([
            profile(alice, "alice", token: AppAccountToken(high: 1, low: 1), atMs: t),
            profile(bob, "bob", token: AppAccountToken(high: 2, low: 2), atMs: t),
            profile(guest, nil, token: AppAccountToken(high: 5, low: 5), atMs: t),
        ], atMs: t))

        // Alice: a first paid term (100 COINS), a renewal (5 GEMS) half refunded (2 taken back),
        // then a credit and a debit by her backend.
        try report(alice, subscription("s1", original: "s1", purchasedMs: t), atMs: t)
        try report(alice, subscription("s1-2", original: "s1", purchasedMs: t + month), atMs: t + month)
        try notify("n1", "s1", atMs: t + month + 1, .change(.refund(transactionID: "s1-2", fraction: 0.5)))
        try transact(alice, "COINS", 50, key: "k1", reason: "welcome bonus", atMs: t + month + 2)
        try transact(alice, "COINS", -120, key: "k2", reason: nil, atMs: t + month + 3)

        // Bob: a coins pack (500), mostly spent, refunded (only the 100 left is taken back), the
        // refund reversed (the 100 given back); a subscription revoked (its 100 taken back); a
        // family member's coins pack (no grant).
        let b = t + month + 10
        try report(bob, coins("c1", purchasedMs: b), atMs: b)
        try transact(bob, "COINS", -400, key: "k3", reason: "spent in the shop", atMs: b + 1)
        try notify("n2", "c1", atMs: b + 2, .change(.refund(transactionID: "c1", fraction: 1)))
        try notify("n3", "c1", atMs: b + 3, .change(.refundReversed(transactionID: "c1")))
        try report(bob, subscription("s4", original: "s4", purchasedMs: b + 4), atMs: b + 4)
        try notify("n4", "s4", atMs: b + 5, .change(.revoke))
        try report(bob, coins("c4", purchasedMs: b + 6, familyShared: true), atMs: b + 6)

        // Bought under tokens no profile holds: grants wait. One pack is half refunded while it
        // waits; carol then takes her token and is credited.
        let p = t + 2 * month
        try notify("n5", "c2", atMs: p, .purchase(coins("c2", purchasedMs: p, token: strayToken)))
        try notify("n6", "c2", atMs: p + 1, .change(.refund(transactionID: "c2", fraction: 0.5)))
        try notify("n7", "s2", atMs: p + 2, .purchase(subscription("s2", original: "s2", purchasedMs: p + 2, token: strayToken)))
        try notify("n8", "c3", atMs: p + 3, .purchase(coins("c3", purchasedMs: p + 3, token: carolToken)))
        apply(.init([profile(carol, "carol", token: carolToken, atMs: p + 4)], atMs: p + 4))

        // Alice resubscribes (a store purchase of a known subscription): 100 COINS and 5 GEMS.
        try notify("n9", "s1", atMs: p + 5, .purchase(subscription("s1-3", original: "s1", purchasedMs: p + 5)))

        // The guest earns coins and gems, then identifies as alice: merged, its balances added.
        // Carol credits and debits a gem (a history back at 0).
        try transact(guest, "COINS", 70, key: "k4", reason: "guest reward", atMs: p + 5)
        try transact(guest, "GEMS", 3, key: "k5", reason: nil, atMs: p + 6)
        try transact(carol, "GEMS", 1, key: "k6", reason: nil, atMs: p + 7)
        try transact(carol, "GEMS", -1, key: "k7", reason: "undo", atMs: p + 8)
        let merge = try state.identify(profile: guest, customerUserID: "alice", token: nil, nowMs: endMs,
                                       random: SeededRandomSource(seed: 7))
        precondition(merge.mergedFrom == [guest])
        apply(merge.batch)
        return (state, batches)
    }
}
