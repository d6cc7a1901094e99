import GatehouseBase
import GatehouseCore
@testable import GatehouseRuntime
import GatehouseStorage
import Testing

/// A state with what state version 5 added: install ids (a profile's own, and one merged into
/// it), attributes with their times, and the attributes cursor.
enum Version5Fixtures {
    typealias F = Version3Fixtures

    static let installA = InstallID(high: 0x0A, low: 0x0B)
    static let installB = InstallID(high: 0x0C, low: 0x0D)
    static let installAHex = "0a00000000000000" + "0b00000000000000"
    static let installBHex = "0c00000000000000" + "0d00000000000000"

    static var state: ProjectState {
        var state = F.configured
        state.apply(.init([
            .profileCreated(Profile(id: F.profileA, customerUserID: "al", token: AppAccountToken(high: 1, low: 2),
                                    installID: installA, createdMs: 2, lastSeenMs: 2, cursor: 0)),
            .profileCreated(Profile(id: F.profileB, customerUserID: nil, token: AppAccountToken(high: 3, low: 4),
                                    installID: installB, createdMs: 2, lastSeenMs: 2, cursor: 0)),
        ], atMs: 2))
        state.apply(.init([.attributesUpdated(F.profileA, [.init(key: "plan", value: "gold", updatedMs: 1)])], atMs: 3))
        state.apply(.init([.attributesUpdated(F.profileB, [.init(key: "$email", value: "b@x.io")])], atMs: 4))
        state.apply(.init([.profileMerged(from: F.profileB, into: F.profileA)], atMs: 5))
        return state
    }

    /// Section 0 of `state` in state versions 5 and 6.
    static let head = head(outbound: "", outbox: "")

    /// Section 0 of `state` in state version 7: no webhooks and no OneSignal after the limits,
    /// an empty outbox at the end.
    static let headVersion7 = head(outbound: "00" + "00", outbox: "00" + "00")

    /// Section 0 of `state` in state version 8: as version 7's, with no Stripe and no web
    /// settings after OneSignal, and no pending web purchases after the outbox.
    static let headVersion8 = head(outbound: "00" + "00" + "00" + "00", outbox: "00" + "00" + "00")

    /// Section 0 of `state` in state version 9: as version 8's, with no Stripe links or refunds,
    /// no link key, no redemption links and no Checkout Sessions at the end.
    static let headVersion9 = headVersion8 + String(repeating: "00", count: 6)

    static func head(outbound: String, outbox: String) -> String {
        F.str("acme") + F.str("Acme") + "00" + String(repeating: "aa", count: 32) + String(repeating: "bb", count: 32)
        + "01" + "01"  // key generations
        // The config: entitlements, products, currencies, offerings, login, restore, grace, test
        // store, App Store, limits.
        + "01" + F.str("pro") + "00" + "01" + F.str("C") + F.str("C") + "00" + F.str("alias") + F.str("transfer") + "00" + "00" + "00"
        + "d00f" + outbound
        + "05" + "01"  // sequence 5, config cursor 1
        // One profile: A, "al", token (1, 2), its install id, B its alias, B's install id merged
        // into it, two attributes by key ($email set at 4 ms came with B, plan at 1 ms), created at
        // 2 ms, last seen at 5 (the merge); cursors: identity 5, the other parts 2; attributes
        // cursor 5 (the merge brought one).
        + "01" + F.profileAHex + "01" + F.str("al") + "0100000000000000" + "0200000000000000" + "01" + installAHex
        + "01" + F.profileBHex + "01" + installBHex
        + "02" + F.str("$email") + F.str("b@x.io") + "08" + F.str("plan") + F.str("gold") + "02"
        + "04" + "0a" + "05" + "02" + "02" + "02" + "05"
        + "01" + "0300000000000000" + "0400000000000000" + F.profileAHex  // B's token (3, 4) resolves to A
        + outbox
    }
}

/// The exact bytes of what state version 5 changed, and what the versions before it still mean.
/// A change here is a format change (docs/data-format.md, "Profile", "Project state").
@Suite struct StateVersion5GoldenBytes {
    typealias F = Version3Fixtures
    typealias V = Version5Fixtures

    /// Version 5's head is version 6's for a config without the App Store.
    @Test func version5And6BodiesStillRead() throws {
        var sections = StateCoding.sectionBytes(of: V.state)
        sections[0] = try #require(Hex.decode(V.head))
        var body = StateCoding.body(sections: sections)
        for version: UInt8 in [5, 6] {
            body[0] = version
            #expect(try F.decodeBothWays(body) == V.state, "version \(version)")
        }
    }

    @Test func theHeadHoldsInstallIDsAttributeTimesAndTheAttributesCursor() throws {
        let sections = StateCoding.sectionBytes(of: V.state)
        #expect(Hex.encode(sections[0]) == V.headVersion9, "\(Hex.encode(sections[0]))")
        let body = StateCoding.encode(V.state)
        #expect(body.first == UInt8(StateCoding.version), "written as the newest version, whose head lays the profiles out as version 5's")
        let decoded = try F.decodeBothWays(body)
        #expect(decoded == V.state)
        #expect(StateCoding.encode(decoded) == body)
        let alice = try #require(decoded.profiles.profile(F.profileA))
        #expect(alice.installID == V.installA && alice.mergedInstallIDs == [V.installB])
        #expect(alice.attributes == ["plan": ProfileAttribute(value: "gold", updatedMs: 1),
                                     "$email": ProfileAttribute(value: "b@x.io", updatedMs: 4)])
        #expect(alice.attributesCursor == 5)
        #expect(decoded.profiles.resolvedID(installID: V.installB) == F.profileA, "the merged install id still resolves")
    }

    /// A version 4 body's attributes have no times: each takes its profile's last-seen time, the
    /// latest it can have been set; there are no install ids and no attributes cursor.
    @Test func aVersion4BodyWithAttributesStillReads() throws {
        let withAttribute = StateVersion3GoldenBytes.headVersion4.replacing(
            "01" + F.profileBHex + "00" + "04", with: "01" + F.profileBHex + "01" + F.str("k") + F.str("v") + "04")
        try #require(withAttribute != StateVersion3GoldenBytes.headVersion4)
        let body = try #require(Hex.decode("04" + StateVersion3GoldenBytes.sectionsHex(head: withAttribute)))
        let decoded = try F.decodeBothWays(body)
        let alice = try #require(decoded.profiles.profile(F.profileA))
        #expect(alice.attributes == ["k": ProfileAttribute(value: "v", updatedMs: alice.lastSeenMs)])
        #expect(alice.lastSeenMs == 3)
        #expect(alice.installID == nil && alice.mergedInstallIDs.isEmpty && alice.attributesCursor == 0)
        #expect(decoded.profiles.profile(F.profileB)?.id == F.profileA)
        // Written again it is the newest version, and reads back the same.
        #expect(try F.decodeBothWays(StateCoding.encode(decoded)) == decoded)
    }

    @Test func anInstallIDHeldTwiceIsRefused() throws {
        let twice = V.headVersion9.replacing("01" + F.profileBHex + "01" + V.installBHex,
                                                with: "01" + F.profileBHex + "01" + V.installAHex)
        try #require(twice != V.headVersion9)
        var sections = StateCoding.sectionBytes(of: V.state)
        sections[0] = try #require(Hex.decode(twice))
        #expect(throws: ByteReaderError.self) { try F.decodeBothWays(StateCoding.body(sections: sections)) }
    }

    @Test func everyTruncationIsRefused() {
        let bytes = StateCoding.encode(V.state)
        for length in 0..<bytes.count {
            #expect(throws: ByteReaderError.self, "cut at \(length)") { try F.decodeBothWays(Array(bytes.prefix(length))) }
        }
    }
}
