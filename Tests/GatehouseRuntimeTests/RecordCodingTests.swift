import GatehouseBase
import GatehouseCore
@testable import GatehouseRuntime
import GatehouseStorage
import Testing

/// The runtime's log records and snapshot bodies read back exactly what was written, and
/// damaged bytes are refused rather than guessed at.
@Suite struct RecordCoding {
    static let keys = KeyDigests(publicKey: SecretDigest(secret: "pk"), secretKey: SecretDigest(secret: "sk"))

    static var fullConfig: ProjectConfig {
        ProjectConfig(
            entitlements: [EntitlementDefinition(id: "pro"), EntitlementDefinition(id: "gold")],
            products: [
                ProductDefinition(id: "pro_monthly", type: .subscription, entitlements: ["pro"],
                                  grants: [CurrencyGrant(currency: "COINS", amount: 100, on: .both)]),
                ProductDefinition(id: "lifetime", type: .nonConsumable, entitlements: ["pro", "gold"]),
            ],
            currencies: [CurrencyDefinition(code: "COINS", name: "Coins")],
            offerings: [OfferingDefinition(id: "default", isDefault: true,
                                           packages: [PackageDefinition(id: "m", type: .monthly, product: "pro_monthly")])],
            login: .switch, restore: .keep, gracePeriodMs: 86_400_000,
            stores: StoreSettings(test: true, appStore: AppStoreSettings(bundleID: "com.example", environment: .sandbox, appAppleID: 42))
        )
    }

    static let profileA = ProfileID(high: 1, low: 2, tag: 3)
    static let profileB = ProfileID(high: 4, low: 5, tag: 3)
    static let tokenA = AppAccountToken(high: 6, low: 7)
    static let tokenB = AppAccountToken(high: 8, low: 9)
    static let installA = InstallID(high: 10, low: 11)
    static let installB = InstallID(high: 12, low: 13)

    static var state: ProjectState {
        var state = ProjectState(id: try! ProjectID(validating: "acme"), name: "Acme Ünïcode", createdMs: 1_700_000_000_000, keys: keys)
        state.apply(.init([.configReplaced(fullConfig)], atMs: 1))
        state.apply(.init([.keyRotated(.public, SecretDigest(secret: "pk2"))], atMs: 2))
        state.apply(.init([
            .profileCreated(Profile(id: profileA, customerUserID: "alice", token: tokenA, createdMs: 3, lastSeenMs: 3, cursor: 0)),
            .profileCreated(Profile(id: profileB, customerUserID: nil, token: tokenB, createdMs: 3, lastSeenMs: 3, cursor: 0)),
            .attributesUpdated(profileB, [.init(key: "$email", value: "b@x.io")]),
        ], atMs: 3))
        state.apply(.init([.profileMerged(from: profileB, into: profileA)], atMs: 4))
        return state
    }

    @Test(arguments: [
        RuntimeRecord.projectCreated(7, state),
        .projectDeleted(9),
        .projectRestored(11, snapshotFile: "restore-1-abc.snap", replacing: 7),
        .projectRestored(12, snapshotFile: "restore-2-def.snap", replacing: nil),
        .projectChanged(7, .init([.configReplaced(fullConfig)], atMs: 5)),
        .projectChanged(7, .init([.configReplaced(.empty), .keyRotated(.secret, SecretDigest(secret: "sk2"))], atMs: -5)),
        .projectChanged(7, .init([
            .profileCreated(Profile(id: profileA, customerUserID: "ü", token: tokenA, aliases: [profileB],
                                    attributes: ["a": ProfileAttribute(value: "1", updatedMs: 5),
                                                 "b": ProfileAttribute(value: "2", updatedMs: -7)],
                                    createdMs: 1, lastSeenMs: 2, cursor: 3)),
            .profileCreated(Profile(id: profileB, customerUserID: nil, token: tokenB, installID: installA,
                                    mergedInstallIDs: [installB, installA], createdMs: 1, lastSeenMs: 1, cursor: 0)),
            .customerUserIDAssigned(profileA, "alice"),
            .tokenAssigned(profileA, tokenB),
            .profileMerged(from: profileB, into: profileA),
            .attributesUpdated(profileA, [.init(key: "k", value: nil), .init(key: "j", value: "v"),
                                          .init(key: "t", value: "w", updatedMs: 1_700_000_000_123),
                                          .init(key: "d", value: nil, updatedMs: -1)]),
            .profileDeleted(profileB),
        ], atMs: 1_700_000_000_000)),
        .projectChanged(7, .init([], atMs: 0)),
    ])
    func everyRecordRoundTrips(_ record: RuntimeRecord) throws {
        #expect(try RuntimeRecord(record.logRecord) == record)
    }

    @Test func stateRoundTripsThroughASnapshotBody() throws {
        let decoded = try StateCoding.decode(StateCoding.encode(Self.state))
        #expect(decoded == Self.state)
        #expect(decoded.profiles.profile(Self.profileB)?.id == Self.profileA, "the alias still resolves")
        #expect(decoded.profiles.profile(token: Self.tokenB)?.id == Self.profileA, "the merged token still resolves")
        #expect(decoded.events.events.count == 1)
        #expect(decoded.id == Self.state.id)
        #expect(decoded.name == Self.state.name)
        #expect(decoded.config == Self.state.config)
        #expect(decoded.keys == Self.state.keys)
        #expect(decoded.keyGenerations == Self.state.keyGenerations)
        #expect(decoded.sequence == Self.state.sequence)
        #expect(decoded.configCursor == Self.state.configCursor)
    }

    @Test func everyTruncationOfARecordIsRefused() {
        let bytes = RuntimeRecord.projectCreated(3, Self.state).logRecord
        for length in 0..<bytes.payload.count {
            let cut = WALRecord(kind: bytes.kind, payload: Array(bytes.payload.prefix(length)))
            #expect(throws: ByteReaderError.self) { try RuntimeRecord(cut) }
        }
    }

    @Test func trailingBytesAndUnknownKindsAreRefused() {
        var record = RuntimeRecord.projectDeleted(3).logRecord
        record.payload.append(0)
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(record) }
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(WALRecord(kind: 999, payload: [1])) }
    }

    @Test func snapshotBodyWithAnInvalidConfigIsRefused() {
        var config = ProjectConfig.empty
        config.products = [ProductDefinition(id: "p", type: .subscription, entitlements: ["missing"])]
        let state = ProjectState(id: try! ProjectID(validating: "x"), name: "x", createdMs: 0, keys: Self.keys,
                                 keyGenerations: [.public: 1, .secret: 1], config: config, sequence: 1, configCursor: 1,
                                 profiles: ProfileDirectory(), events: EventLog(), purchases: PurchaseBook())
        #expect(throws: ByteReaderError.self) { try StateCoding.decode(StateCoding.encode(state)) }
    }
}

/// The exact bytes of runtime records: what old logs and snapshots hold must keep meaning the
/// same. A change here is a format change (docs/data-format.md, "Runtime records").
@Suite struct RecordGoldenBytes {
    static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

    static let state = ProjectState(
        id: try! ProjectID(validating: "acme"), name: "Acme", createdMs: 1_700_000_000_000,
        keys: KeyDigests(publicKey: SecretDigest(bytes: [UInt8](repeating: 0xAA, count: 32))!,
                         secretKey: SecretDigest(bytes: [UInt8](repeating: 0xBB, count: 32))!),
        keyGenerations: [.public: 2, .secret: 1],
        config: ProjectConfig(entitlements: [EntitlementDefinition(id: "pro")],
                              products: [ProductDefinition(id: "m", type: .subscription, entitlements: ["pro"],
                                                           grants: [CurrencyGrant(currency: "C", amount: 5, on: .renewal)])],
                              currencies: [CurrencyDefinition(code: "C")]),
        sequence: 3, configCursor: 2, profiles: ProfileDirectory(), events: EventLog(), purchases: PurchaseBook()
    )

    @Test func projectCreatedRecord() {
        let record = RuntimeRecord.projectCreated(1, Self.state).logRecord
        #expect(record.kind == 1)
        #expect(Self.hex(record.payload) == Self.goldenCreatedVersion9, "\(Self.hex(record.payload))")
    }

    @Test func version8ProjectCreatedRecordStillDecodes() throws {
        let record = WALRecord(kind: 1, payload: try #require(Hex.decode(Self.goldenCreatedVersion8)))
        #expect(try RuntimeRecord(record) == .projectCreated(1, Self.state))
    }

    @Test func version7ProjectCreatedRecordStillDecodes() throws {
        let record = WALRecord(kind: 1, payload: try #require(Hex.decode(Self.goldenCreatedVersion7)))
        #expect(try RuntimeRecord(record) == .projectCreated(1, Self.state))
    }

    @Test func version6ProjectCreatedRecordStillDecodes() throws {
        let record = WALRecord(kind: 1, payload: try #require(Hex.decode(Self.goldenCreatedVersion6)))
        #expect(try RuntimeRecord(record) == .projectCreated(1, Self.state))
    }

    @Test func version4ProjectCreatedRecordStillDecodes() throws {
        let record = WALRecord(kind: 1, payload: try #require(Hex.decode(Self.goldenCreatedVersion4)))
        #expect(try RuntimeRecord(record) == .projectCreated(1, Self.state))
    }

    @Test func version3ProjectCreatedRecordStillDecodes() throws {
        let record = WALRecord(kind: 1, payload: try #require(Hex.decode(Self.goldenCreatedVersion3)))
        #expect(try RuntimeRecord(record) == .projectCreated(1, Self.state))
    }

    @Test func version2ProjectCreatedRecordStillDecodes() throws {
        let record = WALRecord(kind: 1, payload: try #require(Hex.decode(Self.goldenCreated)))
        #expect(try RuntimeRecord(record) == .projectCreated(1, Self.state))
    }

    @Test func smallRecords() {
        #expect(RuntimeRecord.projectDeleted(300).logRecord.kind == 2)
        #expect(Self.hex(RuntimeRecord.projectDeleted(300).logRecord.payload) == "ac02")
        let restored = RuntimeRecord.projectRestored(5, snapshotFile: "r.snap", replacing: 4).logRecord
        #expect(restored.kind == 3)
        #expect(Self.hex(restored.payload) == "0506722e736e61700104")
        let rotated = RuntimeRecord.projectChanged(5, .init([.keyRotated(.secret, SecretDigest(bytes: [UInt8](repeating: 1, count: 32))!)],
                                                            atMs: 3)).logRecord
        #expect(rotated.kind == 16)
        // incarnation 5, at 3 ms (zigzag 6), one change: tag 2, "secret", the digest.
        #expect(Self.hex(rotated.payload) == "05" + "06" + "01" + "02" + "06736563726574" + String(repeating: "01", count: 32))
        let profile = ProfileID(high: 0x0102030405060708, low: 0x090A0B0C0D0E0F10, tag: 0x111213)
        let merged = RuntimeRecord.projectChanged(5, .init([.profileMerged(from: profile, into: profile)], atMs: 0)).logRecord
        #expect(Self.hex(merged.payload) == "05" + "00" + "01" + "06" + String(repeating: "0102030405060708090a0b0c0d0e0f10111213", count: 2))
    }

    /// The empty purchase book: subscriptions, one-time purchases, grants, seen notification ids,
    /// former sources (five empty arrays).
    static let emptyBook = "00" + "00" + "00" + "00" + "00"
    /// The empty currency ledger: histories, term grants, idempotency keys (three empty arrays).
    static let emptyLedger = "00" + "00" + "00"

    /// State version 2: incarnation 1, version 2, the fields, no events, then an empty purchase
    /// book and an empty currency ledger.
    static let goldenCreated = "01020461636d650441636d6580a0abfef962" + String(repeating: "aa", count: 32) + String(repeating: "bb", count: 32)
        + "0201" + "010370726f" + "01016d0c737562736372697074696f6e010370726f0101430a0772656e6577616c" + "0101430143" + "00"
        + "05616c696173087472616e73666572" + "00" + "00" + "00" + "03" + "02" + "00" + "00" + "00"
        + emptyBook + emptyLedger

    /// Section 0 of the golden state: the fields of version 2 after the version, up to its
    /// events.
    static let head = headStart + "03" + "02" + "00" + "00"
    /// The head up to the end of its config (layout 1).
    static let headStart = "0461636d650441636d6580a0abfef962" + String(repeating: "aa", count: 32)
        + String(repeating: "bb", count: 32)
        + "0201" + "010370726f" + "01016d0c737562736372697074696f6e010370726f0101430a0772656e6577616c" + "0101430143" + "00"
        + "05616c696173087472616e73666572" + "00" + "00" + "00"
    /// Section 0 in state version 4: its config (layout 2) ends with the limits (1000, zigzag 2000).
    static let headVersion4 = headStart + "d00f" + "03" + "02" + "00" + "00"
    /// Section 0 in state version 7: its config (layout 4) has no webhooks and no OneSignal after
    /// the limits, and the outbox (no endpoints, no owed events) follows the alias tokens.
    static let headVersion7 = headStart + "d00f" + "00" + "00" + "03" + "02" + "00" + "00" + "00" + "00"
    /// Section 0 in state version 8: its config (layout 5) has no Stripe and no web settings
    /// after OneSignal, and no pending web purchases follow the outbox.
    static let headVersion8 = headStart + "d00f" + "00" + "00" + "00" + "00" + "03" + "02" + "00" + "00" + "00" + "00" + "00"
    /// Section 0 in state version 9: as version 8's, the web purchases ending with no Stripe
    /// payment links, invoice links or refunds, no link key, no redemption links and no Checkout
    /// Sessions.
    static let headVersion9 = headVersion8 + String(repeating: "00", count: 6)

    /// State version 3: incarnation 1, version 3, the section lengths (148, 2, 5, 3), then the
    /// head, the events (no events, no detail bytes), the empty book and the empty ledger.
    static let goldenCreatedVersion3 = "01" + "03" + "9401" + "02" + "05" + "03" + head + "00" + "00" + emptyBook + emptyLedger

    /// State version 4: laid out as version 3, the config in layout 2 (section 0 is 150 bytes).
    static let goldenCreatedVersion4 = "01" + "04" + "9601" + "02" + "05" + "03" + headVersion4 + "00" + "00" + emptyBook
        + emptyLedger

    /// State version 6: with no profiles, laid out as version 4 (version 5 changed the profiles'
    /// layout, `StateVersion5Tests.swift` has a body with profiles; version 6 the config's, whose
    /// layout 3 is layout 2's bytes for a config without the App Store).
    static let goldenCreatedVersion6 = "01" + "06" + "9601" + "02" + "05" + "03" + headVersion4 + "00" + "00" + emptyBook
        + emptyLedger

    /// State version 7: as version 6 with the config in layout 4 and the outbox in the head
    /// (section 0 is 154 bytes).
    static let goldenCreatedVersion7 = "01" + "07" + "9a01" + "02" + "05" + "03" + headVersion7 + "00" + "00" + emptyBook
        + emptyLedger

    /// State version 8: as version 7 with the config in layout 5 and the web purchases (section 0
    /// is 157 bytes).
    static let goldenCreatedVersion8 = "01" + "08" + "9d01" + "02" + "05" + "03" + headVersion8 + "00" + "00" + emptyBook
        + emptyLedger

    /// State version 9, which is written: as version 8 with Stripe's links and refunds and the
    /// redemption links and sessions at the end of the web purchases (section 0 is 163 bytes).
    static let goldenCreatedVersion9 = "01" + "09" + "a301" + "02" + "05" + "03" + headVersion9 + "00" + "00" + emptyBook
        + emptyLedger

    /// The same record as state version 1 wrote it (before purchases): no purchase book, no
    /// currency ledger.
    static let goldenCreatedVersion1 = "01010461636d650441636d6580a0abfef962" + String(repeating: "aa", count: 32)
        + String(repeating: "bb", count: 32)
        + "0201" + "010370726f" + "01016d0c737562736372697074696f6e010370726f0101430a0772656e6577616c" + "0101430143" + "00"
        + "05616c696173087472616e73666572" + "00" + "00" + "00" + "03" + "02" + "00" + "00" + "00"

    @Test func version1ProjectCreatedRecordStillDecodes() throws {
        let record = WALRecord(kind: 1, payload: try #require(Hex.decode(Self.goldenCreatedVersion1)))
        let decoded = try RuntimeRecord(record)
        #expect(decoded == .projectCreated(1, Self.state))
        guard case .projectCreated(_, let state) = decoded else { Issue.record("not a created record"); return }
        #expect(state.purchases == PurchaseBook())
        #expect(state.purchases.subscriptions.isEmpty && state.purchases.oneTimePurchases.isEmpty)
        #expect(state.purchases.grants.isEmpty && state.purchases.seenNotifications.isEmpty)
        #expect(state.purchases.nextDeadlineMs == nil)
        #expect(state.currencies == CurrencyLedger())
        #expect(state.currencies.histories.isEmpty && state.currencies.termGrants.isEmpty)
        #expect(state.currencies.idempotency.isEmpty)
        // Written again, it is the version 9 record: sections, the empty book and ledger appended.
        #expect(Self.hex(RuntimeRecord.projectCreated(1, state).logRecord.payload) == Self.goldenCreatedVersion9)
    }

    /// A version 1 event stored its profile id bare (no presence byte).
    @Test func version1EventKeepsItsProfileID() throws {
        let profile = ProfileID(high: 0x0102030405060708, low: 0x090A0B0C0D0E0F10, tag: 0x111213)
        let id = "0102030405060708090a0b0c0d0e0f10111213"
        let fields = "0461636d650441636d6580a0abfef962" + String(repeating: "aa", count: 32) + String(repeating: "bb", count: 32)
            + "0201" + "010370726f" + "01016d0c737562736372697074696f6e010370726f0101430a0772656e6577616c" + "0101430143" + "00"
            + "05616c696173087472616e73666572" + "00" + "00" + "00" + "03" + "02" + "00" + "00"
        // One event: "evt_3_0", cursor 3, SUBSCRIBER_ALIAS, the id, no customer user id, at 4 ms,
        // one detail "merged_from" of kind 3 holding the id.
        let event = "076576745f335f30" + "03" + "10" + Hex.encode(Array("SUBSCRIBER_ALIAS".utf8)) + id + "00" + "08"
            + "01" + "0b" + Hex.encode(Array("merged_from".utf8)) + "03" + "01" + id
        let state = try StateCoding.decode(try #require(Hex.decode("01" + fields + "01" + event)))
        let expected = Event(id: "evt_3_0", cursor: 3, type: .subscriberAlias, profileID: profile, customerUserID: nil, atMs: 4,
                             details: [EventDetail("merged_from", .profiles([profile]))])
        #expect(state.events.events == [expected])
        #expect(state.purchases == PurchaseBook())
        #expect(state.currencies == CurrencyLedger())
        // Version 2 wrote the id as an optional, then the empty book and the empty ledger.
        let event2 = "076576745f335f30" + "03" + "10" + Hex.encode(Array("SUBSCRIBER_ALIAS".utf8)) + "01" + id + "00" + "08"
            + "01" + "0b" + Hex.encode(Array("merged_from".utf8)) + "03" + "01" + id
        #expect(try StateCoding.decode(try #require(Hex.decode("02" + fields + "01" + event2 + Self.emptyBook + Self.emptyLedger)))
            == state)
        // Version 9 (the events as version 3 lays them out): one event; its details (one detail, `merged_from` as code 0x89, kind 3, one
        // id: 23 bytes); flags 1 (profile id written), type code 12, cursor +3, index 0, at +4 ms,
        // the id, 23 detail bytes.
        let events3 = "01" + "17" + "01" + "89" + "03" + "01" + id + "01" + "0c" + "03" + "00" + "08" + id + "17"
        #expect(Self.hex(StateCoding.encode(state))
            == "09" + "a301" + "32" + "05" + "03" + Self.headVersion9 + events3 + Self.emptyBook + Self.emptyLedger)
    }

    @Test func newerStateVersionIsRefused() throws {
        var bytes = try #require(Hex.decode(Self.goldenCreatedVersion9))
        bytes[1] = 10
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(WALRecord(kind: 1, payload: bytes)) }
        bytes[1] = 0
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(WALRecord(kind: 1, payload: bytes)) }
    }

    /// A version 1 body ends after the events: a book (or a book and a ledger) after them is
    /// trailing bytes, not read as version 2 parts.
    @Test func version1BodyFollowedByABookIsRefused() throws {
        for tail in [Self.emptyBook, Self.emptyBook + Self.emptyLedger] {
            let bytes = try #require(Hex.decode(Self.goldenCreatedVersion1 + tail))
            #expect(throws: ByteReaderError.self) { try RuntimeRecord(WALRecord(kind: 1, payload: bytes)) }
        }
    }

    /// A version 2 body must carry both: one that ends after the purchase book is cut short.
    @Test func version2BodyWithoutTheLedgerIsRefused() throws {
        let bytes = try #require(Hex.decode(Self.goldenCreated))
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(WALRecord(kind: 1, payload: Array(bytes.dropLast(3)))) }
        #expect(throws: Never.self) { try RuntimeRecord(WALRecord(kind: 1, payload: bytes)) }
    }
}
