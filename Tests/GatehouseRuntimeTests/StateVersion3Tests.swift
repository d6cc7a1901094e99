import GatehouseBase
import GatehouseCore
@testable import GatehouseRuntime
import GatehouseStorage
import Testing

/// A small state with a bit of everything state version 3 lays out: profiles, an alias token,
/// events of several detail kinds (with and without a profile and a customer user id, time
/// going back), a purchase and a currency history.
enum Version3Fixtures {
    static let profileA = ProfileID(high: 0x0102030405060708, low: 0x090A0B0C0D0E0F10, tag: 0x111213)
    static let profileB = ProfileID(high: 0x1112131415161718, low: 0x191A1B1C1D1E1F20, tag: 0x111213)
    static let profileAHex = "0102030405060708090a0b0c0d0e0f10111213"
    static let profileBHex = "1112131415161718191a1b1c1d1e1f20111213"

    /// Project `acme` with its keys' digests all `aa` and `bb`, and its config (entitlement `pro`,
    /// currency `C`) as the first change.
    static var configured: ProjectState {
        var state = ProjectState(
            id: try! ProjectID(validating: "acme"), name: "Acme", createdMs: 0,
            keys: KeyDigests(publicKey: SecretDigest(bytes: [UInt8](repeating: 0xAA, count: 32))!,
                             secretKey: SecretDigest(bytes: [UInt8](repeating: 0xBB, count: 32))!))
        state.apply(.init([.configReplaced(ProjectConfig(entitlements: [EntitlementDefinition(id: "pro")],
                                                         currencies: [CurrencyDefinition(code: "C")]))], atMs: 1))
        return state
    }

    static var state: ProjectState {
        var state = configured
        state.apply(.init([
            .profileCreated(Profile(id: profileA, customerUserID: "al", token: AppAccountToken(high: 1, low: 2),
                                    createdMs: 2, lastSeenMs: 2, cursor: 0)),
            .profileCreated(Profile(id: profileB, customerUserID: nil, token: AppAccountToken(high: 3, low: 4),
                                    createdMs: 2, lastSeenMs: 2, cursor: 0)),
        ], atMs: 2))
        state.apply(.init([.profileMerged(from: profileB, into: profileA)], atMs: 3))
        state.apply(.init([
            .eventRecorded(.initialPurchase, profileA, [
                EventDetail("store", .string("test")),
                EventDetail("expires_ms", .int(-1)),
                EventDetail("x", .bool(true)),
                EventDetail("original_transaction_ids", .strings(["o"])),
            ]),
            .eventRecorded(.promotionalRevoke, nil, []),
        ], atMs: 5))
        state.apply(.init([
            .purchaseStored(HeldPurchase(OneTimePurchase(store: "test", transactionID: "t", productID: "p", purchasedMs: 4,
                                                         price: 1, environment: .sandbox), owner: profileA, token: nil)),
            .balanceChanged(profileA, CurrencyMovement(currency: "C", amount: 3, source: .purchase, ref: "t")),
        ], atMs: 4))
        return state
    }

    /// A short string as written.
    static func str(_ text: String) -> String { PurchaseRecordGoldenBytes.str(text) }

    /// A varint as written.
    static func varint(_ value: Int) -> String {
        var writer = ByteWriter()
        writer.writeVarUInt(UInt64(value))
        return Hex.encode(writer.bytes)
    }

    /// The body of `state` with `events` (hex) as its events section.
    static func body(events: String) -> [UInt8] {
        var sections = StateCoding.sectionBytes(of: state)
        sections[1] = Hex.decode(events)!
        return StateCoding.body(sections: sections)
    }

    /// Decodes `bytes` one section after the other, then side by side: both must agree.
    static func decodeBothWays(_ bytes: [UInt8]) throws -> ProjectState {
        let sequential = Result { try StateCoding.decode(bytes, parallelFrom: .max) }
        let parallel = Result { try StateCoding.decode(bytes, parallelFrom: 0) }
        switch (sequential, parallel) {
        case (.success(let one), .success(let other)):
            #expect(one == other)
            return one
        case (.failure(let one), .failure(let other)):
            #expect(one is ByteReaderError && other is ByteReaderError)
            throw one
        default:
            Issue.record("the two ways disagree: \(sequential) \(parallel)")
            throw ByteReaderError.invalid("disagreement", at: 0)
        }
    }
}

/// The exact bytes of a state version 3 body. A change here is a format change
/// (docs/data-format.md, "Project state" and "Events (state version 3)").
@Suite struct StateVersion3GoldenBytes {
    typealias F = Version3Fixtures

    static let head = head(limits: "")

    /// Section 0 in state version 4: the config (layout 2) ends with the limits (1000, zigzag 2000).
    static let headVersion4 = head(limits: "d00f")

    /// Section 0 in state version 5: the profile in layout 2, with no install id (`00` after the
    /// token), no merged install ids (`00` after the aliases), no attributes, and its attributes
    /// cursor (0) after the part cursors.
    static let headVersion5 = head(limits: "d00f", profileLayout: 2)

    /// Section 0 in state version 7: the config (layout 4) ends with no webhooks and no OneSignal
    /// (`00 00` after the limits), and the head with an empty outbox (no endpoints, no owed
    /// events: `00 00` after the alias tokens).
    static let headVersion7 = head(limits: "d00f" + "00" + "00", profileLayout: 2) + "00" + "00"

    /// Section 0 in state version 8: as version 7's, the config (layout 5) ending with no Stripe
    /// and no web settings (`00 00` after OneSignal), and the head with no pending web purchases
    /// (`00` after the outbox).
    static let headVersion8 = head(limits: "d00f" + "00" + "00" + "00" + "00", profileLayout: 2) + "00" + "00" + "00"

    /// Section 0 in state version 9: as version 8's, the web purchases ending with no Stripe
    /// payment links, invoice links or refunds (`00 00 00`), no link key, no redemption links and
    /// no Checkout Sessions (`00 00 00`).
    static let headVersion9 = headVersion8 + String(repeating: "00", count: 6)

    static func head(limits: String, profileLayout: Int = 1) -> String {
        let layout2 = profileLayout == 2
        return F.str("acme") + F.str("Acme") + "00" + String(repeating: "aa", count: 32) + String(repeating: "bb", count: 32)
        + "01" + "01"  // key generations
        // Entitlements, products, currencies (code and name), offerings, login, restore, grace,
        // test store, App Store.
        + "01" + F.str("pro") + "00" + "01" + F.str("C") + F.str("C") + "00" + F.str("alias") + F.str("transfer") + "00" + "00" + "00"
        + limits
        + "05" + "01"  // sequence 5, config cursor 1
        // One profile: A, "al", token (1, 2), B its alias, no attributes, created at 2 ms, last seen
        // at 3 (the merge); cursors: identity 3 (the merge), entitlements 2, currencies and
        // purchases 5 (the purchase).
        + "01" + F.profileAHex + "01" + F.str("al") + "0100000000000000" + "0200000000000000" + (layout2 ? "00" : "")
        + "01" + F.profileBHex + (layout2 ? "00" : "") + "00"
        + "04" + "06" + "03" + "02" + "05" + "05" + (layout2 ? "00" : "")
        + "01" + "0300000000000000" + "0400000000000000" + F.profileAHex  // B's token (3, 4) resolves to A
    }

    /// Details end to end, as the log holds them (names the table knows as `0x80` + code).
    static let details =
        // SUBSCRIBER_ALIAS: merged_from (code 9) of kind 3, one id.
        "01" + "89" + "03" + "01" + F.profileBHex
        // INITIAL_PURCHASE: store (0) "test"; expires_ms (4) -1; "x" spelled out, bool true;
        // original_transaction_ids (12), strings ["o"].
        + "04" + "80" + "01" + F.str("test") + "84" + "02" + "01" + F.str("x") + "05" + "01" + "8c" + "04" + "01" + F.str("o")
        // PROMOTIONAL_REVOKE: none.
        + "00"
        // VIRTUAL_CURRENCY_TRANSACTION, as the currency rules write it: transaction_id (3),
        // currency (13), amount (14) 3, balance (15) 3, source (16), ref (17).
        + "06" + "83" + "01" + F.str("vct_5_0") + "8d" + "01" + F.str("C") + "8e" + "02" + "06" + "8f" + "02" + "06" + "90" + "01" + F.str("purchase") + "91" + "01" + F.str("t")

    static let events = "04" + "50" + details
        // evt_3_0: profile written, customer user id written; SUBSCRIBER_ALIAS (12); cursor +3,
        // index 0, at +3 ms; 23 detail bytes.
        + "05" + "0c" + "03" + "00" + "06" + F.profileAHex + F.str("al") + "17"
        // evt_4_0: both as before; INITIAL_PURCHASE (1); cursor +1, index 0, at +2 ms; 20 bytes.
        + "0a" + "01" + "01" + "00" + "04" + "14"
        // evt_4_1: neither; PROMOTIONAL_REVOKE (16); cursor +0, index 1, at +0 ms; 1 byte.
        + "00" + "10" + "00" + "01" + "00" + "01"
        // evt_5_0: both written again (the event before had none); VIRTUAL_CURRENCY_TRANSACTION
        // (14); cursor +1, index 0, at -1 ms; 36 bytes.
        + "05" + "0e" + "01" + "00" + "01" + F.profileAHex + F.str("al") + "24"

    static let book = "00" + "01" + "01" + F.profileAHex + "00" + F.str("test") + F.str("t") + F.str("p") + "08" + "000000000000f03f"
        + F.str("sandbox") + "00" + "00" + "00" + "0000000000000000" + "00" + "00" + "00"

    static let ledger = "01" + F.profileAHex + F.str("C") + "01" + F.str("vct_5_0") + "06" + "06" + F.str("purchase") + F.str("t") + "08"
        + "00" + "00"

    /// The body after its version, with `head` as section 0: the section lengths, then the
    /// sections.
    static func sectionsHex(head: String) -> String {
        let sections = [head, Self.events, Self.book, Self.ledger]
        return sections.map { F.varint($0.count / 2) }.joined() + sections.joined()
    }

    /// Version 9 lays the state out as version 3 did, but for the config (layout 5) and the
    /// profiles (layout 2) in the head, which ends with the outbox and the web purchases.
    @Test func aSmallStateWritesTheseBytes() throws {
        let golden = "09" + Self.sectionsHex(head: Self.headVersion9)
        let written = Hex.encode(StateCoding.encode(F.state))
        #expect(written == golden, "\(written)")
        for (index, section) in StateCoding.sectionBytes(of: F.state).enumerated() {
            #expect(Hex.encode(section) == [Self.headVersion9, Self.events, Self.book, Self.ledger][index], "section \(index)")
        }
        #expect(try F.decodeBothWays(try #require(Hex.decode(golden))) == F.state)
        #expect(try F.decodeBothWays(try #require(Hex.decode("08" + Self.sectionsHex(head: Self.headVersion8)))) == F.state)
        #expect(try F.decodeBothWays(try #require(Hex.decode("07" + Self.sectionsHex(head: Self.headVersion7)))) == F.state)
        #expect(try F.decodeBothWays(try #require(Hex.decode("04" + Self.sectionsHex(head: Self.headVersion4)))) == F.state)
    }

    /// Version 6: the config in layout 3, no outbox; it reads with an empty one.
    @Test func theVersion6BodyStillReads() throws {
        let decoded = try F.decodeBothWays(try #require(Hex.decode("06" + Self.sectionsHex(head: Self.headVersion5))))
        #expect(decoded == F.state)
        #expect(decoded.outbox == Outbox())
        #expect(Hex.encode(StateCoding.encode(decoded)) == "09" + Self.sectionsHex(head: Self.headVersion9))
    }

    @Test func theVersion4BodyStillReads() throws {
        let decoded = try F.decodeBothWays(try #require(Hex.decode("04" + Self.sectionsHex(head: Self.headVersion4))))
        #expect(decoded == F.state)
        #expect(Hex.encode(StateCoding.encode(decoded)) == "09" + Self.sectionsHex(head: Self.headVersion9))
    }

    @Test func theVersion3BodyStillReads() throws {
        let decoded = try F.decodeBothWays(try #require(Hex.decode("03" + Self.sectionsHex(head: Self.head))))
        #expect(decoded == F.state)
        #expect(decoded.events.map(\.id) == ["evt_3_0", "evt_4_0", "evt_4_1", "evt_5_0"])
        #expect(decoded.events[1].details == F.state.events[1].details)
    }
}

/// Event type codes are stored (docs/data-format.md): a type never changes code.
@Suite struct EventTypeCodes {
    @Test func theCodesNeverChange() {
        let types: [EventType] = [
            .initialPurchase, .renewal, .productChange, .cancellation, .uncancellation, .billingIssue, .expiration,
            .nonRenewingPurchase, .refund, .refundReversed, .transfer, .subscriberAlias, .purchaseRedeemed,
            .virtualCurrencyTransaction, .promotionalGrant, .promotionalRevoke, .test,
        ]
        #expect(types.count == EventType.allCases.count)
        for (place, type) in types.enumerated() {
            #expect(EventLogCoding.code(of: type) == UInt8(place + 1))
            #expect(EventLogCoding.types[place + 1] == type)
        }
        #expect(EventLogCoding.types[0] == nil && EventLogCoding.types[types.count + 1] == nil)
    }
}

/// Version 3 bodies read back what was written, one section after the other or side by side.
@Suite struct StateVersion3RoundTrips {
    typealias F = Version3Fixtures

    @Test func aSmallStateRoundTrips() throws {
        let bytes = StateCoding.encode(F.state)
        let decoded = try F.decodeBothWays(bytes)
        #expect(decoded == F.state)
        #expect(decoded.events == F.state.events)
        #expect(decoded.profiles.profile(F.profileB)?.id == F.profileA)
        #expect(StateCoding.encode(decoded) == bytes)
        #expect(try RuntimeRecord(RuntimeRecord.projectCreated(2, F.state).logRecord) == .projectCreated(2, F.state))
    }

    @Test func statesTheRulesBuiltRoundTrip() throws {
        for state in [try PurchaseStateBuilder.build().0, try CurrencyStateBuilder.build().0, EventCodingChecks.state] {
            let bytes = StateCoding.encode(state)
            let decoded = try F.decodeBothWays(bytes)
            #expect(decoded == state)
            #expect(decoded.events == state.events)
            #expect(StateCoding.encode(decoded) == bytes)
        }
    }

    /// A big state takes the side-by-side paths both ways and gives the same bytes and state.
    @Test func aStateBigEnoughToEncodeSideBySideRoundTrips() throws {
        var state = F.state
        let profiles = (0..<StateCoding.parallelEncodingProfiles).map { number in
            ProjectState.Change.profileCreated(Profile(
                id: ProfileID(high: UInt64(number), low: 7, tag: 0x111213), customerUserID: "u\(number)",
                token: AppAccountToken(high: UInt64(number), low: 9), createdMs: 6, lastSeenMs: 6, cursor: 0))
        }
        state.apply(.init(profiles, atMs: 6))
        state.apply(.init((0..<300).map { .eventRecorded(.renewal, ProfileID(high: UInt64($0), low: 7, tag: 0x111213),
                                                          [EventDetail("product_id", .string("m"))]) }, atMs: 7))
        try Self.expectEncodedSideBySide(state)
        #expect(StateCoding.encodeParts(F.state) == [StateCoding.encode(F.state)], "a small state's body is one part")
    }

    /// A state with few profiles but a long history is big too: it takes the side-by-side path
    /// and gives the same bytes.
    @Test func aFewProfilesWithALongHistoryEncodeSideBySide() throws {
        var state = F.state
        let profile = ProfileID(high: 1, low: 7, tag: 0x111213)
        state.apply(.init([.profileCreated(Profile(id: profile, customerUserID: "u", token: AppAccountToken(high: 1, low: 9),
                                                   createdMs: 6, lastSeenMs: 6, cursor: 0))], atMs: 6))
        let events = (0..<(StateCoding.parallelEncodingBytes / 256)).map { _ in
            ProjectState.Change.eventRecorded(.renewal, profile, [EventDetail("product_id", .string("m"))])
        }
        state.apply(.init(events, atMs: 7))
        #expect(state.profiles.count < StateCoding.parallelEncodingProfiles)
        try Self.expectEncodedSideBySide(state)
    }

    /// `state`'s body is made section by section, the same bytes as one writer makes, and reads
    /// back both ways as `state`.
    private static func expectEncodedSideBySide(_ state: ProjectState, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bytes = StateCoding.encode(state)
        var small = ByteWriter()
        StateCoding.write(state, into: &small)
        #expect(small.bytes == bytes, sourceLocation: sourceLocation)
        let parts = StateCoding.encodeParts(state)
        #expect(parts.count == 1 + StateCoding.sectionCount, "the table, then each section", sourceLocation: sourceLocation)
        #expect(parts.flatMap { $0 } == bytes, sourceLocation: sourceLocation)
        #expect(try F.decodeBothWays(bytes) == state, sourceLocation: sourceLocation)
    }
}

/// A damaged version 3 body is refused with an error, never trapped on and never loaded in part.
@Suite struct StateVersion3Damage {
    typealias F = Version3Fixtures

    static var parts: [[UInt8]] { StateCoding.sectionBytes(of: F.state) }

    /// A body with `lengths` in its table and `parts` after it.
    static func body(lengths: [Int], parts: [[UInt8]]) -> [UInt8] {
        var writer = ByteWriter()
        writer.writeVarUInt(StateCoding.version)
        for length in lengths { writer.writeVarUInt(UInt64(length)) }
        for part in parts { writer.writeRaw(part) }
        return writer.bytes
    }

    @Test func everyTruncationIsRefused() {
        let bytes = StateCoding.encode(F.state)
        for length in 0..<bytes.count {
            #expect(throws: ByteReaderError.self, "cut at \(length)") { try F.decodeBothWays(Array(bytes.prefix(length))) }
        }
    }

    @Test func aWrongSectionLengthIsRefused() {
        let parts = Self.parts
        let lengths = parts.map(\.count)
        for section in 0..<StateCoding.sectionCount {
            for change in [-1, 1] {
                var wrong = lengths
                wrong[section] += change
                #expect(throws: ByteReaderError.self, "section \(section) \(change)") {
                    try F.decodeBothWays(Self.body(lengths: wrong, parts: parts))
                }
                // The boundary moved, the total kept: a section ends early or runs into the next.
                guard section + 1 < StateCoding.sectionCount else { continue }
                wrong[section + 1] -= change
                #expect(throws: ByteReaderError.self, "section \(section) \(change), moved") {
                    try F.decodeBothWays(Self.body(lengths: wrong, parts: parts))
                }
            }
        }
        #expect(throws: ByteReaderError.self) { try F.decodeBothWays(Self.body(lengths: lengths, parts: parts) + [0]) }
    }

    @Test func aSectionWithTrailingBytesIsRefused() {
        for section in 0..<StateCoding.sectionCount {
            var parts = Self.parts
            parts[section].append(0)
            #expect(throws: ByteReaderError.self, "section \(section)") {
                try F.decodeBothWays(Self.body(lengths: parts.map(\.count), parts: parts))
            }
        }
        #expect(throws: Never.self) { try F.decodeBothWays(Self.body(lengths: Self.parts.map(\.count), parts: Self.parts)) }
    }

    /// Events section hex: `count`, the details, then each event's fields.
    static func events(_ count: Int, details: String, _ fields: String...) -> [UInt8] {
        let detailBytes = Hex.decode(details)!
        var writer = ByteWriter()
        writer.writeVarUInt(UInt64(count))
        writer.writeVarUInt(UInt64(detailBytes.count))
        return F.body(events: Hex.encode(writer.bytes) + details + fields.joined())
    }

    /// One detail: `store` (code 0), a string.
    static let store = "01" + "80" + "01" + "0474657374"

    @Test func wellFormedHandMadeEventsRead() throws {
        // evt_2_0 and evt_2_3 (indexes may skip), no profile; then evt_9_0 of profile A.
        let state = try F.decodeBothWays(Self.events(
            3, details: Self.store + "00" + "01" + "91" + "01" + "00",
            "00" + "02" + "02" + "00" + "02" + "08", "00" + "0f" + "00" + "03" + "01" + "01",
            "01" + "10" + "07" + "00" + "00" + F.profileAHex + "04"))
        #expect(state.events.map(\.id) == ["evt_2_0", "evt_2_3", "evt_9_0"])
        #expect(state.events.map(\.atMs) == [1, 0, 0])
        #expect(state.events[0].details == [EventDetail("store", .string("test"))])
        #expect(state.events[2].details == [EventDetail("ref", .string(""))])
        #expect(state.events[2].profileID == F.profileA)
    }

    @Test func anUnknownDetailNameCodeIsRefused() {
        // Code 18 (0x92) is past the table; 17 (0x91, `ref`) is its last.
        #expect(throws: ByteReaderError.self) {
            try F.decodeBothWays(Self.events(1, details: "01" + "92" + "01" + "00", "00" + "02" + "02" + "00" + "00" + "04"))
        }
        #expect(throws: Never.self) {
            try F.decodeBothWays(Self.events(1, details: "01" + "91" + "01" + "00", "00" + "02" + "02" + "00" + "00" + "04"))
        }
    }

    @Test func malformedDetailsAreRefused() {
        let damaged = [
            "01" + "80" + "09" + "00",  // an unknown kind
            "01" + "80" + "05" + "02",  // a bool that is not 0 or 1
            "01" + "02" + "ff" + "fe" + "01" + "00",  // a name that is not UTF-8
            "02" + "80" + "01" + "00",  // two details, one there
        ]
        for details in damaged {
            let fields = "00" + "02" + "02" + "00" + "00" + F.varint(details.count / 2)
            #expect(throws: ByteReaderError.self, "\(details)") { try F.decodeBothWays(Self.events(1, details: details, fields)) }
        }
    }

    @Test func detailLengthsThatDoNotMatchAreRefused() {
        let fields = { (length: String) in "00" + "02" + "02" + "00" + "00" + length }
        for length in ["07", "09", "00", "63"] {  // the details are 8 bytes
            #expect(throws: ByteReaderError.self, "\(length)") { try F.decodeBothWays(Self.events(1, details: Self.store, fields(length))) }
        }
        // Detail bytes no event holds.
        #expect(throws: ByteReaderError.self) { try F.decodeBothWays(Self.events(1, details: Self.store + "00", fields("08"))) }
        #expect(throws: Never.self) { try F.decodeBothWays(Self.events(1, details: Self.store, fields("08"))) }
    }

    @Test func unknownTypeCodesAndFlagsAreRefused() {
        for code in ["00", "12", "ff"] {
            #expect(throws: ByteReaderError.self, "\(code)") {
                try F.decodeBothWays(Self.events(1, details: "00", "00" + code + "02" + "00" + "00" + "01"))
            }
        }
        for flags in ["03", "0c", "10", "80"] {
            #expect(throws: ByteReaderError.self, "\(flags)") {
                try F.decodeBothWays(Self.events(1, details: "00", flags + "02" + "02" + "00" + "00" + "01" + F.profileAHex + "00"))
            }
        }
    }

    /// "As before" on the first event, or after one with none, names nothing.
    @Test func asBeforeWithNothingBeforeIsRefused() {
        for flags in ["02", "08"] {
            #expect(throws: ByteReaderError.self, "\(flags)") {
                try F.decodeBothWays(Self.events(1, details: "00", flags + "02" + "02" + "00" + "00" + "01"))
            }
            #expect(throws: ByteReaderError.self, "\(flags) after none") {
                try F.decodeBothWays(Self.events(2, details: "0000", "00" + "02" + "02" + "00" + "00" + "01",
                                                 flags + "02" + "01" + "00" + "00" + "01"))
            }
        }
    }

    @Test func eventsOutOfOrderAreRefused() {
        let first = "00" + "02" + "02" + "01" + "00" + "01"  // evt_2_1
        for second in [
            "00" + "02" + "00" + "01" + "00" + "01",  // evt_2_1 again
            "00" + "02" + "00" + "00" + "00" + "01",  // evt_2_0 after evt_2_1
        ] {
            #expect(throws: ByteReaderError.self, "\(second)") { try F.decodeBothWays(Self.events(2, details: "0000", first, second)) }
        }
        #expect(throws: Never.self) {
            try F.decodeBothWays(Self.events(2, details: "0000", first, "00" + "02" + "00" + "02" + "00" + "01"))
        }
    }

    @Test func badDeltasAndIndexesAreRefused() {
        let maxVarUInt = "ffffffffffffffffff01"
        let maxVarInt = "feffffffffffffffff01"  // zigzag of Int64.max
        let damaged: [(Int, [String])] = [
            // The cursor passes UInt64.max.
            (2, ["00" + "02" + maxVarUInt + "00" + "00" + "01", "00" + "02" + "01" + "00" + "00" + "01"]),
            // An index past UInt32.
            (1, ["00" + "02" + "01" + "8080808010" + "00" + "01"]),
            // A varint of eleven bytes.
            (1, ["00" + "02" + "ffffffffffffffffffff01" + "00" + "00" + "01"]),
        ]
        for (count, fields) in damaged {
            let details = String(repeating: "00", count: count)
            #expect(throws: ByteReaderError.self, "\(fields)") {
                try F.decodeBothWays(Self.events(count, details: details, fields[0], fields.count > 1 ? fields[1] : ""))
            }
        }
        // Up to the limits, the same fields read.
        #expect(throws: Never.self) {
            try F.decodeBothWays(Self.events(1, details: "00", "00" + "02" + maxVarUInt + "ffffffff0f" + maxVarInt + "01"))
        }
    }

    /// Times differ by whatever they differ by: the differences wrap, and every time comes back.
    @Test func timesFarApartRoundTrip() throws {
        var log = EventLog()
        for (number, atMs) in [Int64.max, .min, 0, .max, -1].enumerated() {
            log.append(Event(cursor: UInt64(number + 1), index: 0, type: .renewal, profileID: nil, customerUserID: nil, atMs: atMs,
                             details: []))
        }
        var writer = ByteWriter()
        EventLogCoding.write(log, into: &writer)
        var reader = ByteReader(writer.bytes)
        #expect(try EventLogCoding.read(&reader) == log)
        #expect(reader.isAtEnd)
    }

    @Test func moreEventsThanTheSectionHoldsAreRefused() {
        for count in [2, 3, 1 << 40] {
            #expect(throws: ByteReaderError.self, "\(count)") {
                try F.decodeBothWays(Self.events(count, details: "0000", "00" + "02" + "02" + "00" + "00" + "01"))
            }
        }
    }
}
