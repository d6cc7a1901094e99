import GatehouseBase
import GatehouseCore
@testable import GatehouseRuntime
import GatehouseStorage
import Testing

/// Fixtures shared by the purchase coding suites.
enum PurchaseFixtures {
    static let profile = ProfileID(high: 0x0102030405060708, low: 0x090A0B0C0D0E0F10, tag: 0x111213)
    static let token = AppAccountToken(high: 0x0102030405060708, low: 0x090A0B0C0D0E0F10)

    /// A subscription with every optional field set: two terms (the second half refunded), two
    /// refund marks (one for a term not yet known), grace, and the status before the refund.
    static let subscription = Subscription(
        store: "app_store", originalTransactionID: "o1", productID: "m", status: .refunded, expiresMs: 200,
        graceExpiresMs: 300, willRenew: false, periodType: .trial, environment: .sandbox,
        terms: [
            SubscriptionTerm(transactionID: "t1", purchasedMs: 0, expiresMs: 100, price: 1.5),
            SubscriptionTerm(transactionID: "t2", purchasedMs: 100, expiresMs: 200, price: 2, refundedFraction: 0.5),
        ],
        lastEventMs: 150, statusBeforeRefund: .grace, statusMs: 120, willRenewMs: 110, productMs: 0,
        storeGraceExpiresMs: 300,
        refundMarks: ["t2": .init(fraction: 0.5, atMs: 150), "t0": .init(fraction: 1, atMs: 140)])

    /// Half refunded.
    static let ownedPurchase = HeldPurchase(
        OneTimePurchase(store: "test", transactionID: "tx", productID: "lifetime", purchasedMs: 50, price: 1.5,
                        environment: .production, refunded: true, refundedFraction: 0.5),
        owner: profile, token: nil)

    /// A family member's copy, revoked.
    static let unownedPurchase = HeldPurchase(
        OneTimePurchase(store: "test", transactionID: "ty", productID: "coins", purchasedMs: -1, price: 0,
                        environment: .sandbox, revoked: true, familyShared: true),
        owner: nil, token: token)

    /// One detail of every kind.
    static let everyDetail = [
        EventDetail("s", .string("x")),
        EventDetail("i", .int(-3)),
        EventDetail("p", .profiles([profile])),
        EventDetail("ss", .strings(["a", "b"])),
        EventDetail("b", .bool(true)),
    ]

    /// Changes of every kind tags 9–13 stand for, with and without their optional parts.
    static let everyNewChange: [ProjectState.Change] = [
        .subscriptionStored(HeldSubscription(subscription, owner: profile, token: token)),
        .subscriptionStored(HeldSubscription(subscription, owner: nil, token: token)),
        .subscriptionStored(HeldSubscription(subscription, owner: nil, token: nil)),
        .purchaseStored(ownedPurchase),
        .purchaseStored(unownedPurchase),
        .grantStored(profile, PromotionalGrant(entitlementID: "pro", grantedMs: 10, expiresMs: 20, lapsed: true)),
        .grantStored(profile, PromotionalGrant(entitlementID: "gold", grantedMs: 10, expiresMs: nil, revoked: true)),
        .notificationSeen(store: "app_store", id: "n-1"),
        .eventRecorded(.transfer, nil, everyDetail),
        .eventRecorded(.promotionalGrant, profile, []),
        .eventRecorded(.expiration, profile, [EventDetail("empty", .strings([])), EventDetail("none", .profiles([]))]),
    ]
}

/// The exact bytes of the change records purchases added (tags 9–13): what old logs hold must
/// keep meaning the same. A change here is a format change (docs/data-format.md, "Runtime records").
@Suite struct PurchaseRecordGoldenBytes {
    typealias F = PurchaseFixtures

    /// Incarnation 5, at 7 ms (zigzag 14), one change.
    static let prefix = "05" + "0e" + "01"
    static let profileHex = "0102030405060708090a0b0c0d0e0f10111213"
    /// High half first, each half a little-endian UInt64.
    static let tokenHex = "0807060504030201" + "100f0e0d0c0b0a09"

    /// A short string as written: one length byte, then its UTF-8 bytes.
    static func str(_ text: String) -> String {
        precondition(text.utf8.count < 0x80)
        return Hex.encode([UInt8(text.utf8.count)] + Array(text.utf8))
    }

    /// IEEE 754 doubles by bit pattern, little-endian.
    static let zero = "0000000000000000"
    static let half = "000000000000e03f"
    static let one = "000000000000f03f"
    static let oneAndAHalf = "000000000000f83f"
    static let two = "0000000000000040"

    /// The change as a record writes it, and the golden bytes read back as the change.
    static func expectGolden(_ change: ProjectState.Change, _ golden: String,
                             sourceLocation: SourceLocation = #_sourceLocation) throws {
        let record = RuntimeRecord.projectChanged(5, .init([change], atMs: 7))
        let written = record.logRecord
        #expect(written.kind == 16, sourceLocation: sourceLocation)
        #expect(Hex.encode(written.payload) == prefix + golden, "\(Hex.encode(written.payload))", sourceLocation: sourceLocation)
        let bytes = try #require(Hex.decode(prefix + golden), sourceLocation: sourceLocation)
        #expect(try RuntimeRecord(WALRecord(kind: 16, payload: bytes)) == record, sourceLocation: sourceLocation)
    }

    @Test func subscriptionStoredRecord() throws {
        let held = HeldSubscription(F.subscription, owner: F.profile, token: F.token)
        let golden = "09"
            + "01" + Self.profileHex + "01" + Self.tokenHex
            + Self.str("app_store") + Self.str("o1") + Self.str("m") + Self.str("refunded")
            + "9003"  // expires 200 ms
            + "01" + "d804"  // grace expires 300 ms
            + "00"  // will not renew
            + Self.str("trial") + Self.str("sandbox")
            + "02"
            + Self.str("t1") + "00" + "c801" + Self.oneAndAHalf + Self.zero
            + Self.str("t2") + "c801" + "9003" + Self.two + Self.half
            + "ac02"  // last event 150 ms
            + "01" + Self.str("grace")  // status before the refund
            + "f001" + "dc01" + "00"  // status 120 ms, will renew 110 ms, product 0 ms
            + "01" + "d804"  // the store's grace expiry 300 ms
            + "02" + Self.str("t0") + Self.one + "9802" + Self.str("t2") + Self.half + "ac02"  // marks by transaction id
            + "00"  // not family shared
        try Self.expectGolden(.subscriptionStored(held), golden)
    }

    @Test func subscriptionStoredRecordWithoutOwnerOrToken() throws {
        let subscription = Subscription(
            store: "test", originalTransactionID: "o", productID: "m", status: .active, expiresMs: 1, graceExpiresMs: nil,
            willRenew: true, periodType: .normal, environment: .production, terms: [], lastEventMs: 0,
            statusBeforeRefund: nil, statusMs: 0, willRenewMs: 0, productMs: 0, storeGraceExpiresMs: nil, refundMarks: [:],
            familyShared: true)
        // No owner, no token, expires 1 ms, no grace, renews, no terms, every date 0, no marks,
        // family shared.
        let golden = "09" + "00" + "00" + Self.str("test") + Self.str("o") + Self.str("m") + Self.str("active") + "02" + "00"
            + "01" + Self.str("normal") + Self.str("production") + "00" + "00" + "00" + "00" + "00" + "00" + "00" + "00" + "01"
        try Self.expectGolden(.subscriptionStored(HeldSubscription(subscription, owner: nil, token: nil)), golden)
    }

    @Test func purchaseStoredRecordOwned() throws {
        let golden = "0a" + "01" + Self.profileHex + "00"
            + Self.str("test") + Self.str("tx") + Self.str("lifetime") + "64" + Self.oneAndAHalf + Self.str("production")
            + "01" + "00" + "00"  // refunded, not revoked, not family shared
            + Self.half  // refunded fraction
        try Self.expectGolden(.purchaseStored(F.ownedPurchase), golden)
    }

    @Test func purchaseStoredRecordUnownedWithAToken() throws {
        let golden = "0a" + "00" + "01" + Self.tokenHex
            + Self.str("test") + Self.str("ty") + Self.str("coins") + "01" + Self.zero + Self.str("sandbox")
            + "00" + "01" + "01"  // not refunded, revoked, family shared
            + Self.zero  // refunded fraction
        try Self.expectGolden(.purchaseStored(F.unownedPurchase), golden)
    }

    @Test func grantStoredRecordWithAnExpiry() throws {
        let grant = PromotionalGrant(entitlementID: "pro", grantedMs: 10, expiresMs: 20, lapsed: true)
        // Granted 10 ms (zigzag 20), expires 20 ms (zigzag 40), not revoked, lapsed.
        let golden = "0b" + Self.profileHex + Self.str("pro") + "14" + "01" + "28" + "00" + "01"
        try Self.expectGolden(.grantStored(F.profile, grant), golden)
    }

    @Test func grantStoredRecordForLife() throws {
        let grant = PromotionalGrant(entitlementID: "gold", grantedMs: 10, expiresMs: nil, revoked: true)
        let golden = "0b" + Self.profileHex + Self.str("gold") + "14" + "00" + "01" + "00"
        try Self.expectGolden(.grantStored(F.profile, grant), golden)
    }

    @Test func notificationSeenRecord() throws {
        try Self.expectGolden(.notificationSeen(store: "app_store", id: "n-1"), "0c" + Self.str("app_store") + Self.str("n-1"))
    }

    @Test func eventRecordedRecordWithNoProfileAndEveryDetailKind() throws {
        let golden = "0d" + Self.str("TRANSFER") + "00" + "05"
            + Self.str("s") + "01" + Self.str("x")
            + Self.str("i") + "02" + "05"  // -3, zigzag 5
            + Self.str("p") + "03" + "01" + Self.profileHex
            + Self.str("ss") + "04" + "02" + Self.str("a") + Self.str("b")
            + Self.str("b") + "05" + "01"
        try Self.expectGolden(.eventRecorded(.transfer, nil, F.everyDetail), golden)
    }

    @Test func eventRecordedRecordWithAProfile() throws {
        let golden = "0d" + Self.str("PROMOTIONAL_GRANT") + "01" + Self.profileHex + "00"
        try Self.expectGolden(.eventRecorded(.promotionalGrant, F.profile, []), golden)
    }

    // MARK: Refusals

    static func refuses(_ hex: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let bytes = Hex.decode(prefix + hex) else {
            Issue.record("bad fixture", sourceLocation: sourceLocation)
            return
        }
        #expect(throws: ByteReaderError.self, sourceLocation: sourceLocation) {
            try RuntimeRecord(WALRecord(kind: 16, payload: bytes))
        }
    }

    @Test func unknownEventDetailKindIsRefused() {
        let event = "0d" + Self.str("TRANSFER") + "00" + "01" + Self.str("s")
        for kind in ["00", "06", "ff"] { Self.refuses(event + kind + Self.str("x")) }
        // The same bytes with a known kind read.
        let known = Hex.decode(Self.prefix + event + "01" + Self.str("x"))!
        #expect(throws: Never.self) { try RuntimeRecord(WALRecord(kind: 16, payload: known)) }
    }

    /// Tags 1–16 are known (14–16 came with currencies); the fields after each tag here are a
    /// well-formed `notification seen`, so only the tag is wrong.
    @Test func unknownChangeTagIsRefused() {
        let fields = Self.str("app_store") + Self.str("n-1")
        for tag in ["00", "11", "12", "80", "ff"] { Self.refuses(tag + fields) }
        let known = Hex.decode(Self.prefix + "0c" + fields)!
        #expect(throws: Never.self) { try RuntimeRecord(WALRecord(kind: 16, payload: known)) }
    }

    @Test func damagedFieldsAreRefused() {
        // A bool detail that is neither 0 nor 1.
        Self.refuses("0d" + Self.str("TRANSFER") + "00" + "01" + Self.str("b") + "05" + "02")
        // An unknown event type, subscription status and environment.
        Self.refuses("0d" + Self.str("NOPE") + "00" + "00")
        func subscription(status: String, familyShared: String) -> String {
            "09" + "00" + "00" + Self.str("test") + Self.str("o") + Self.str("m") + Self.str(status) + "02" + "00"
                + "01" + Self.str("normal") + Self.str("production") + "00" + "00" + "00" + "00" + "00" + "00" + "00" + "00"
                + familyShared
        }
        func purchase(environment: String, familyShared: String) -> String {
            "0a" + "00" + "00" + Self.str("test") + Self.str("ty") + Self.str("coins") + "01" + Self.zero
                + Self.str(environment) + "00" + "00" + familyShared + Self.zero
        }
        Self.refuses(subscription(status: "frozen", familyShared: "00"))
        Self.refuses(purchase(environment: "staging", familyShared: "00"))
        // A family-shared flag that is neither 0 nor 1.
        Self.refuses(subscription(status: "active", familyShared: "02"))
        Self.refuses(purchase(environment: "sandbox", familyShared: "02"))
        // The same bytes with every field known read.
        for known in [subscription(status: "active", familyShared: "01"), purchase(environment: "sandbox", familyShared: "01")] {
            let bytes = Hex.decode(Self.prefix + known)!
            #expect(throws: Never.self) { try RuntimeRecord(WALRecord(kind: 16, payload: bytes)) }
        }
        // A presence byte that is neither 0 nor 1 (the grant's expiry).
        Self.refuses("0b" + Self.profileHex + Self.str("pro") + "14" + "02" + "28" + "00" + "00")
    }
}

/// Purchases, grants and their events read back exactly what was written, a state full of them
/// survives a snapshot body with its timer queue rebuilt, and damaged bytes are refused.
@Suite struct PurchaseRecordCoding {
    typealias F = PurchaseFixtures

    @Test(arguments: PurchaseFixtures.everyNewChange)
    func everyNewChangeRoundTrips(_ change: ProjectState.Change) throws {
        let record = RuntimeRecord.projectChanged(7, .init([change], atMs: 1_700_000_000_000))
        #expect(try RuntimeRecord(record.logRecord) == record)
    }

    @Test func aBatchOfEveryNewChangeRoundTrips() throws {
        let record = RuntimeRecord.projectChanged(7, .init(F.everyNewChange, atMs: -1))
        #expect(try RuntimeRecord(record.logRecord) == record)
    }

    @Test func everyBatchTheRulesDecidedRoundTrips() throws {
        let (_, batches) = try PurchaseStateBuilder.build()
        #expect(batches.count > 10)
        for batch in batches {
            let record = RuntimeRecord.projectChanged(2, batch)
            #expect(try RuntimeRecord(record.logRecord) == record)
        }
    }

    @Test func aStateWithPurchasesRoundTripsThroughASnapshotBody() throws {
        let (state, _) = try PurchaseStateBuilder.build()
        let book = state.purchases
        // The state holds what the test is about.
        #expect(book.subscriptions.values.contains { $0.owner == nil && $0.token != nil })
        #expect(book.subscriptions.values.contains { $0.owner != nil && $0.subscription.terms.count == 2 })
        #expect(book.subscriptions.values.contains { !$0.subscription.refundMarks.isEmpty })
        #expect(book.subscriptions.values.contains { $0.subscription.graceExpiresMs != nil })
        #expect(book.oneTimePurchases.values.contains { $0.owner == nil && $0.token != nil })
        #expect(book.oneTimePurchases.values.contains { $0.owner != nil })
        let grants = book.grants.values.flatMap(\.values)
        #expect(grants.contains { $0.revoked } && grants.contains { $0.lapsed } && grants.contains { $0.expiresMs == nil })
        #expect(grants.contains { $0.nextDeadlineMs != nil })
        #expect(book.seenNotifications.count >= 3)
        #expect(state.events.events.contains { $0.profileID == nil })
        #expect(state.events.events.contains { $0.type == .transfer })
        #expect(book.nextDeadlineMs != nil)

        let decoded = try StateCoding.decode(StateCoding.encode(state))
        #expect(decoded == state)
        #expect(decoded.events == state.events)
        #expect(decoded.purchases.subscriptions == book.subscriptions)
        #expect(decoded.purchases.oneTimePurchases == book.oneTimePurchases)
        #expect(decoded.purchases.grants == book.grants)
        #expect(decoded.purchases.seenNotifications == book.seenNotifications)
        for id in [PurchaseStateBuilder.alice, PurchaseStateBuilder.bob] {
            let nowMs = PurchaseStateBuilder.endMs
            #expect(decoded.holdings(of: id, nowMs: nowMs) == state.holdings(of: id, nowMs: nowMs))
            #expect(decoded.purchases.ownsPurchase(id) == book.ownsPurchase(id))
        }
        let record = RuntimeRecord.projectCreated(4, state)
        #expect(try RuntimeRecord(record.logRecord) == record)
    }

    @Test func theTimerQueueIsRebuiltFromASnapshotBody() throws {
        let (state, _) = try PurchaseStateBuilder.build()
        let decoded = try StateCoding.decode(StateCoding.encode(state))
        let next = try #require(state.purchases.nextDeadlineMs)
        #expect(decoded.purchases.nextDeadlineMs == next)
        let probes: [Int64] = [Int64.min, PurchaseStateBuilder.endMs, next - 1, next, next + 1,
                               next + 30 * PurchaseStateBuilder.day, Int64.max]
        for nowMs in probes {
            #expect(decoded.purchases.due(nowMs: nowMs) == state.purchases.due(nowMs: nowMs), "at \(nowMs)")
            #expect(decoded.expireDue(nowMs: nowMs) == state.expireDue(nowMs: nowMs), "at \(nowMs)")
        }
        #expect(state.purchases.due(nowMs: Int64.max).count >= 3, "subscriptions and a grant wait for the timer")

        // Time passing does the same to both, and leaves them equal.
        var original = state
        var copy = decoded
        for nowMs in [next, next + 30 * PurchaseStateBuilder.day] {
            original.apply(original.expireDue(nowMs: nowMs))
            copy.apply(copy.expireDue(nowMs: nowMs))
            #expect(copy == original)
            #expect(copy.purchases.nextDeadlineMs == original.purchases.nextDeadlineMs)
        }
        #expect(original.purchases.due(nowMs: Int64.max).isEmpty)
    }

    @Test func purchasesHeldUnderATokenAreClaimedAfterASnapshotBody() throws {
        let (state, _) = try PurchaseStateBuilder.build()
        var original = state
        var copy = try StateCoding.decode(StateCoding.encode(state))
        let carol = ProfileID(high: 30, low: 31, tag: state.profileTag)
        let batch = ProjectState.ChangeBatch([
            .profileCreated(Profile(id: carol, customerUserID: "carol", token: PurchaseStateBuilder.strayToken,
                                    createdMs: PurchaseStateBuilder.endMs, lastSeenMs: PurchaseStateBuilder.endMs, cursor: 0)),
        ], atMs: PurchaseStateBuilder.endMs)
        original.apply(batch)
        copy.apply(batch)
        #expect(copy == original)
        #expect(!copy.purchases.subscriptions(ownedBy: carol).isEmpty)
        #expect(!copy.purchases.oneTimePurchases(ownedBy: carol).isEmpty)
        let nowMs = PurchaseStateBuilder.endMs
        #expect(copy.holdings(of: carol, nowMs: nowMs) == original.holdings(of: carol, nowMs: nowMs))
    }

    @Test func equalStatesEncodeToEqualBytes() throws {
        let (state, _) = try PurchaseStateBuilder.build()
        let bytes = StateCoding.encode(state)
        #expect(StateCoding.encode(state) == bytes)
        #expect(StateCoding.encode(try StateCoding.decode(bytes)) == bytes)
        let copy = try StateCoding.decode(bytes)
        #expect(RuntimeRecord.projectCreated(1, state).logRecord == RuntimeRecord.projectCreated(1, copy).logRecord)
    }

    @Test func aBookBuiltInAnotherOrderEncodesToTheSameBytes() throws {
        let (state, _) = try PurchaseStateBuilder.build()
        let book = state.purchases
        let grants = book.grants.flatMap { entry in entry.value.values.map { (entry.key, $0) } }
        let reversed = PurchaseBook(
            subscriptions: book.subscriptions.values.sorted { $0.key > $1.key },
            oneTimePurchases: book.oneTimePurchases.values.sorted { $0.key > $1.key },
            grants: grants.sorted { ($0.0, $0.1.entitlementID) > ($1.0, $1.1.entitlementID) },
            seenNotifications: book.seenNotifications, formerSources: book.formerSources)
        let forward = PurchaseBook(
            subscriptions: book.subscriptions.values.sorted { $0.key < $1.key },
            oneTimePurchases: book.oneTimePurchases.values.sorted { $0.key < $1.key },
            grants: grants.sorted { ($0.0, $0.1.entitlementID) < ($1.0, $1.1.entitlementID) },
            seenNotifications: book.seenNotifications, formerSources: book.formerSources)
        #expect(reversed == book && forward == book)
        func with(_ purchases: PurchaseBook) -> ProjectState {
            ProjectState(id: state.id, name: state.name, createdMs: state.createdMs, keys: state.keys,
                         keyGenerations: state.keyGenerations, config: state.config, sequence: state.sequence,
                         configCursor: state.configCursor, profiles: state.profiles, events: state.events, purchases: purchases)
        }
        #expect(StateCoding.encode(with(reversed)) == StateCoding.encode(state))
        #expect(StateCoding.encode(with(forward)) == StateCoding.encode(state))
        #expect(with(reversed).purchases.nextDeadlineMs == book.nextDeadlineMs)
    }

    @Test func everyTruncationOfAStateWithPurchasesIsRefused() throws {
        let (state, _) = try PurchaseStateBuilder.build()
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

    @Test func everyTruncationOfANewChangeRecordIsRefused() {
        let record = RuntimeRecord.projectChanged(3, .init(F.everyNewChange, atMs: 9)).logRecord
        for length in 0..<record.payload.count {
            let cut = WALRecord(kind: record.kind, payload: Array(record.payload.prefix(length)))
            #expect(throws: ByteReaderError.self, "cut at \(length)") { try RuntimeRecord(cut) }
        }
    }

    /// A book listing one subscription twice can only come from a damaged or hand-made file;
    /// read with the later entry winning, the rebuilt timer queue would keep the earlier entry's
    /// deadline on top (`nextDeadlineMs` naming a moment at which nothing is due).
    @Test func aBookListingASubscriptionTwiceIsRefused() throws {
        func held(_ id: String, _ status: SubscriptionStatus) -> HeldSubscription {
            HeldSubscription(Subscription(
                store: "test", originalTransactionID: id, productID: "m", status: status, expiresMs: 100, graceExpiresMs: nil,
                willRenew: true, periodType: .normal, environment: .sandbox, terms: [], lastEventMs: 0, statusBeforeRefund: nil,
                statusMs: 0, willRenewMs: 0, productMs: 0, storeGraceExpiresMs: nil, refundMarks: [:]), owner: nil, token: nil)
        }
        /// The golden state's body with its empty book (five arrays) replaced by a book holding
        /// `subscriptions`.
        func body(_ subscriptions: [HeldSubscription]) -> [UInt8] {
            var book = ByteWriter()
            book.writeArray(subscriptions) { PurchaseCoding.write($1, into: &$0) }
            for _ in 0..<4 { book.writeArray([UInt8]()) { $0.writeUInt8($1) } }
            var sections = StateCoding.sectionBytes(of: RecordGoldenBytes.state)
            sections[2] = book.bytes
            return StateCoding.body(sections: sections)
        }
        #expect(throws: ByteReaderError.self) { try StateCoding.decode(body([held("o", .active), held("o", .expired)])) }
        // Two different subscriptions in the same bytes read.
        let decoded = try StateCoding.decode(body([held("o", .active), held("p", .expired)]))
        #expect(decoded.purchases.subscriptions.count == 2)
    }

    @Test func trailingBytesAfterThePurchaseBookAreRefused() throws {
        let (state, _) = try PurchaseStateBuilder.build()
        var record = RuntimeRecord.projectCreated(3, state).logRecord
        record.payload.append(0)
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(record) }
    }
}

/// A project state built the way the server builds one: each batch decided by a public rule of
/// GatehouseCore, then applied.
enum PurchaseStateBuilder {
    static let day: Int64 = 86_400_000
    static let startMs: Int64 = 1_700_000_000_000
    static let projectID = try! ProjectID(validating: "acme")
    static let alice = ProfileID(high: 10, low: 11, tag: ProfileID.tag(for: projectID))
    static let bob = ProfileID(high: 20, low: 21, tag: ProfileID.tag(for: projectID))
    static let aliceToken = AppAccountToken(high: 1, low: 1)
    static let bobToken = AppAccountToken(high: 2, low: 2)
    /// A token no profile holds while the state is built: what it carries is held unowned.
    static let strayToken = AppAccountToken(high: 3, low: 3)
    /// The time of the last batch.
    static let endMs = startMs + 40 * day

    static var config: ProjectConfig {
        ProjectConfig(
            entitlements: [EntitlementDefinition(id: "pro"), EntitlementDefinition(id: "gold")],
            products: [
                ProductDefinition(id: "pro_monthly", type: .subscription, entitlements: ["pro"]),
                ProductDefinition(id: "lifetime", type: .nonConsumable, entitlements: ["pro", "gold"]),
                ProductDefinition(id: "coins", type: .consumable),
            ],
            restore: .transfer, gracePeriodMs: 3 * day, stores: StoreSettings(test: true))
    }

    static func subscription(_ id: String, original: String, purchasedMs: Int64, expiresMs: Int64, token: AppAccountToken? = nil,
                             price: Double = 4.99, periodType: SubscriptionPeriodType = .normal) -> StoreTransaction {
        StoreTransaction(store: "test", kind: .subscription, transactionID: id, originalTransactionID: original,
                         productID: "pro_monthly", purchasedMs: purchasedMs, expiresMs: expiresMs, token: token, price: price,
                         currency: "USD", periodType: periodType, environment: .sandbox)
    }

    static func oneTime(_ id: String, product: String, purchasedMs: Int64, token: AppAccountToken? = nil) -> StoreTransaction {
        StoreTransaction(store: "test", kind: .oneTime, transactionID: id, originalTransactionID: id, productID: product,
                         purchasedMs: purchasedMs, expiresMs: 0, token: token, price: 9.99, currency: "EUR",
                         periodType: .normal, environment: .production)
    }


    /// The final state and every batch applied to reach it, in order.
    static func build() throws -> (ProjectState, [ProjectState.ChangeBatch]) {
        var state = ProjectState(id: projectID, name: "Acme", createdMs: startMs, keys: RecordCoding.keys)
        var batches: [ProjectState.ChangeBatch] = []
        func apply(_ batch: ProjectState.ChangeBatch) {
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

        apply(.init([try state.replaceConfig(with: config, random: SeededRandomSource(seed: 1))], atMs: startMs))
        apply(.init([
            .profileCreated(Profile(id: alice, customerUserID: "alice", token: aliceToken, createdMs: startMs,
                                    lastSeenMs: startMs, cursor: 0)),
            .profileCreated(Profile(id: bob, customerUserID: nil, token: bobToken, createdMs: startMs,
                                    lastSeenMs: startMs, cursor: 0)),
        ], atMs: startMs))

        // Alice's subscription: bought, renewed (two terms), its renewal half refunded.
        let month = 30 * day
        try report(alice, subscription("s1", original: "s1", purchasedMs: startMs, expiresMs: startMs + month), atMs: startMs)
        try report(alice, subscription("s1-2", original: "s1", purchasedMs: startMs + month, expiresMs: startMs + 2 * month),
                   atMs: startMs + month)
        try notify("n1", "s1", atMs: startMs + month + 1, .change(.refund(transactionID: "s1-2", fraction: 0.5)))

        // Bob's free trial runs into a billing issue: grace until its end plus the project's grace period.
        let trialEnd = startMs + month + 7 * day
        try report(bob, subscription("s2", original: "s2", purchasedMs: startMs + month, expiresMs: trialEnd, price: 0,
                                     periodType: .trial), atMs: startMs + month)
        try notify("n2", "s2", atMs: trialEnd, .change(.billingIssue(graceExpiresMs: nil)))

        // Bought under a token no profile holds: held unowned, with events for no profile.
        try notify("n3", "s3", atMs: trialEnd,
                   .purchase(subscription("s3", original: "s3", purchasedMs: trialEnd, expiresMs: trialEnd + month,
                                          token: strayToken)))
        try notify("n4", "c1", atMs: trialEnd, .purchase(oneTime("c1", product: "coins", purchasedMs: trialEnd, token: strayToken)))

        // Alice buys for life; Bob restores it and takes it (TRANSFER); Alice buys coins.
        try report(alice, oneTime("l1", product: "lifetime", purchasedMs: trialEnd), atMs: trialEnd)
        apply(try state.restorePurchases(profile: bob, transactions: [oneTime("l1", product: "lifetime", purchasedMs: trialEnd)],
                                         nowMs: trialEnd + 1).batch)
        try report(alice, oneTime("c2", product: "coins", purchasedMs: trialEnd + 2), atMs: trialEnd + 2)

        // Grants: for life then revoked, for life, one that lapses, one still running.
        let grantMs = startMs + 39 * day
        apply(try state.grantEntitlement(profile: alice, entitlement: "gold", expiresMs: nil, nowMs: grantMs).batch)
        apply(try state.grantEntitlement(profile: alice, entitlement: "pro", expiresMs: nil, nowMs: grantMs).batch)
        apply(try state.revokeEntitlement(profile: alice, entitlement: "gold", nowMs: grantMs).batch)
        apply(try state.grantEntitlement(profile: bob, entitlement: "gold", expiresMs: grantMs + 1, nowMs: grantMs).batch)
        apply(try state.grantEntitlement(profile: bob, entitlement: "pro", expiresMs: grantMs + 20 * day, nowMs: grantMs).batch)
        let expired = state.expireDue(nowMs: grantMs + 1)
        precondition(!expired.changes.isEmpty, "Bob's gold grant lapses")
        apply(expired)
        apply(.init([], atMs: endMs))
        return (state, batches)
    }
}
