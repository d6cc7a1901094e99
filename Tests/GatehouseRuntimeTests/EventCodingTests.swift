import GatehouseBase
import GatehouseCore
@testable import GatehouseRuntime
import Testing

/// A state version 1 or 2 snapshot's events keep their ids as strings; in memory an event keeps
/// only its cursor and index, so an id that is not `evt_<its cursor>_<n>`, or events out of
/// order, are damage. Version 3 writes no id (``StateVersion3Events``).
@Suite struct EventCodingChecks {
    static let profile = ProfileID(high: 1, low: 2, tag: 3)

    /// Two events of one change: `evt_2_0` and `evt_2_1`.
    static var state: ProjectState {
        let keys = KeyDigests(publicKey: SecretDigest(secret: "pk"), secretKey: SecretDigest(secret: "sk"))
        var state = ProjectState(id: try! ProjectID(validating: "acme"), name: "Acme", createdMs: 0, keys: keys)
        state.apply(.init([.profileCreated(Profile(id: profile, customerUserID: "alice", token: AppAccountToken(high: 4, low: 5),
                                                   createdMs: 1, lastSeenMs: 1, cursor: 0))], atMs: 1))
        state.apply(.init([
            .eventRecorded(.promotionalGrant, profile, [EventDetail("entitlement", .string("pro"))]),
            .eventRecorded(.promotionalRevoke, nil, []),
        ], atMs: 2))
        return state
    }

    /// `state` as state version 2 wrote it: the version, the head, the events with their ids,
    /// the book and the ledger.
    static func version2Body(_ state: ProjectState) throws -> [UInt8] {
        let sections = StateCoding.sectionBytes(of: state)
        var writer = ByteWriter()
        writer.writeVarUInt(2)
        writer.writeRaw(try version2Head(state, written: sections[0]))
        writer.writeArray(state.events) { EventCoding.write($1, into: &$0) }
        writer.writeRaw(sections[2])
        writer.writeRaw(sections[3])
        return writer.bytes
    }

    /// Section 0 as state version 2 laid it out: the head written now (`written`) with its
    /// config in layout 1, which for a config without offerings, webhooks, OneSignal, Stripe or web
    /// settings is layout 5 without the limits and those parts at its end; its one profile in layout 1;
    /// and no outbox after the tokens of merged-away profiles.
    static func version2Head(_ state: ProjectState, written: [UInt8]) throws -> [UInt8] {
        try #require(state.config.offerings.isEmpty && state.config.webhooks.isEmpty && state.config.integrations.oneSignal == nil)
        try #require(state.config.stores.stripe == nil && state.config.web == nil)
        try #require(state.outbox == Outbox())
        var config = ByteWriter()
        ConfigCoding.write(state.config, into: &config)
        var layout4Tail = ByteWriter()
        layout4Tail.writeVarInt(state.config.limits.sdkCreatesPerSecond)
        layout4Tail.writeArray([WebhookSettings]()) { _, _ in }
        for _ in 0..<3 { layout4Tail.writeBool(false) }  // no OneSignal, no Stripe, no web settings
        let layout4 = config.bytes
        var head = written
        // The empty outbox (no endpoints, no owed events) and no pending web purchases.
        try #require(state.web == WebPurchases())
        head.removeLast(3)
        let start = try #require(head.firstRange(of: layout4)).lowerBound
        head.removeSubrange(start + layout4.count - layout4Tail.bytes.count..<start + layout4.count)
        // The profile runs from its id to the tokens of merged-away profiles (none: one byte).
        let profile = try #require(state.profiles.profile(Self.profile))
        var id = ByteWriter()
        ProfileCoding.writeID(profile.id, into: &id)
        let profileStart = try #require(head.firstRange(of: id.bytes)).lowerBound
        head.replaceSubrange(profileStart..<head.count - 1, with: try layout1(profile))
        return head
    }

    /// A profile without attributes in layout 1 (state versions 2–4): no install ids, no
    /// attributes cursor.
    static func layout1(_ profile: Profile) throws -> [UInt8] {
        try #require(profile.attributes.isEmpty && profile.installID == nil && profile.mergedInstallIDs.isEmpty)
        var writer = ByteWriter()
        ProfileCoding.writeID(profile.id, into: &writer)
        writer.writeOptional(profile.customerUserID) { $0.writeString($1) }
        ProfileCoding.writeToken(profile.token, into: &writer)
        writer.writeArray(profile.aliases) { ProfileCoding.writeID($1, into: &$0) }
        writer.writeVarUInt(0)
        writer.writeVarInt(profile.createdMs)
        writer.writeVarInt(profile.lastSeenMs)
        let cursors = profile.cursors
        for cursor in [cursors.identity, cursors.entitlements, cursors.currencies, cursors.purchases] { writer.writeVarUInt(cursor) }
        return writer.bytes
    }

    /// The version 2 body with each written id replaced (same length, so nothing else moves).
    static func body(replacing replacements: [(String, String)]) throws -> [UInt8] {
        var bytes = try version2Body(state)
        for (old, new) in replacements {
            let pattern = [UInt8(old.utf8.count)] + Array(old.utf8)
            let start = try #require((0...(bytes.count - pattern.count)).first { Array(bytes[$0..<$0 + pattern.count]) == pattern })
            bytes.replaceSubrange(start + 1..<start + pattern.count, with: Array(new.utf8))
        }
        return bytes
    }

    @Test func idsRoundTripByteForByte() throws {
        let bytes = StateCoding.encode(Self.state)
        let decoded = try StateCoding.decode(bytes)
        #expect(decoded.events.map(\.id) == ["evt_2_0", "evt_2_1"])
        #expect(decoded.events == Self.state.events)
        #expect(StateCoding.encode(decoded) == bytes)
        let old = try StateCoding.decode(try Self.version2Body(Self.state))
        #expect(old.events.map(\.id) == ["evt_2_0", "evt_2_1"])
        #expect(StateCoding.encode(old) == bytes)
    }

    @Test(arguments: ["evt_3_0", "evt_2_a", "evx_2_0", "evt_02_", "evt_2_-"])
    func anIDNotOfItsCursorIsRefused(_ id: String) throws {
        let bytes = try Self.body(replacing: [("evt_2_0", id)])
        #expect(throws: ByteReaderError.self) { try StateCoding.decode(bytes) }
    }

    @Test func eventsOutOfOrderAreRefused() throws {
        let swapped = try Self.body(replacing: [("evt_2_0", "evt_2_x"), ("evt_2_1", "evt_2_0"), ("evt_2_x", "evt_2_1")])
        #expect(throws: ByteReaderError.self) { try StateCoding.decode(swapped) }
        let twice = try Self.body(replacing: [("evt_2_1", "evt_2_0")])
        #expect(throws: ByteReaderError.self) { try StateCoding.decode(twice) }
        let gap = try Self.body(replacing: [("evt_2_1", "evt_2_7")])
        let read = try StateCoding.decode(gap)
        #expect(read.events.map(\.id) == ["evt_2_0", "evt_2_7"], "indexes may skip")
        #expect(try StateCoding.decode(StateCoding.encode(read)).events.map(\.id) == ["evt_2_0", "evt_2_7"])
    }
}
