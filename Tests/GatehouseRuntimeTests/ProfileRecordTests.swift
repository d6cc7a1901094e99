import GatehouseBase
import GatehouseCore
@testable import GatehouseRuntime
import GatehouseStorage
import Testing

/// The change tags of profiles and attributes: tags 18 and 19 are what is written; tags 3 and 7,
/// written before install ids and attribute times, are still read, their times the batch's
/// (docs/data-format.md, "Runtime records"). A change here is a format change.
@Suite struct ProfileRecordTags {
    typealias F = Version3Fixtures

    static let install = InstallID(high: 0x0A, low: 0x0B)
    static let installHex = "0a00000000000000" + "0b00000000000000"
    static let tokenHex = "0600000000000000" + "0700000000000000"

    /// The payload of a `project changed` record of incarnation 5 at `atMs` 2 (zigzag 4) with one change.
    static func payload(_ change: String) -> String { "05" + "04" + "01" + change }

    static func decoded(_ hex: String) throws -> ProjectState.ChangeBatch? {
        let record = WALRecord(kind: 16, payload: try #require(Hex.decode(hex)))
        guard case .projectChanged(5, let batch) = try RuntimeRecord(record) else { return nil }
        return batch
    }

    static func written(_ change: ProjectState.Change) -> String {
        Hex.encode(RuntimeRecord.projectChanged(5, .init([change], atMs: 2)).logRecord.payload)
    }

    @Test func tag18IsAProfileWithItsInstallIDAndTimedAttributes() throws {
        let profile = Profile(id: F.profileA, customerUserID: nil, token: AppAccountToken(high: 6, low: 7), installID: Self.install,
                              attributes: ["k": ProfileAttribute(value: "v", updatedMs: -1)], createdMs: 2, lastSeenMs: 2,
                              cursor: 0)
        // Id, no customer user id, token, the install id, no aliases, no merged install ids, one
        // attribute (k, v, at -1 ms: zigzag 1), created and last seen at 2 ms, cursor 0.
        let golden = Self.payload("12" + F.profileAHex + "00" + Self.tokenHex + "01" + Self.installHex + "00" + "00"
                                  + "01" + F.str("k") + F.str("v") + "01" + "04" + "04" + "00")
        #expect(Self.written(.profileCreated(profile)) == golden)
        #expect(try Self.decoded(golden) == .init([.profileCreated(profile)], atMs: 2))
    }

    @Test func tag19IsAttributeUpdatesEachWithItsTimeWhenOneWasGiven() throws {
        let updates: [ProjectState.AttributeUpdate] = [
            .init(key: "k", value: "v", updatedMs: 7), .init(key: "d", value: nil), .init(key: "n", value: nil, updatedMs: 8),
        ]
        let golden = Self.payload("13" + F.profileAHex + "03" + F.str("k") + "01" + F.str("v") + "01" + "0e"
                                  + F.str("d") + "00" + "00" + F.str("n") + "00" + "01" + "10")
        #expect(Self.written(.attributesUpdated(F.profileA, updates)) == golden)
        #expect(try Self.decoded(golden) == .init([.attributesUpdated(F.profileA, updates)], atMs: 2))
    }

    /// Tag 3: a profile without an install id, its attributes without times: they take the batch's.
    static let tag3 = payload("03" + F.profileAHex + "00" + tokenHex + "00" + "01" + F.str("k") + F.str("v") + "04" + "04" + "00")
    /// Tag 7: updates without times (each the batch's).
    static let tag7 = payload("07" + F.profileAHex + "02" + F.str("k") + "01" + F.str("w") + F.str("d") + "00")

    @Test func tags3And7StillReadWithTheBatchsTime() throws {
        let created = try #require(try Self.decoded(Self.tag3))
        #expect(created == .init([.profileCreated(Profile(
            id: F.profileA, customerUserID: nil, token: AppAccountToken(high: 6, low: 7),
            attributes: ["k": ProfileAttribute(value: "v", updatedMs: 2)], createdMs: 2, lastSeenMs: 2, cursor: 0))], atMs: 2))
        let updated = try #require(try Self.decoded(Self.tag7))
        #expect(updated == .init([.attributesUpdated(F.profileA, [.init(key: "k", value: "w"), .init(key: "d", value: nil)])],
                                 atMs: 2))
        // Written again, each is the new tag.
        #expect(Self.written(created.changes[0]).dropFirst(6).hasPrefix("12"))
        #expect(Self.written(updated.changes[0]).dropFirst(6).hasPrefix("13"))
    }

    @Test func truncatedNewTagsAreRefused() throws {
        for change in [Self.written(.profileCreated(Profile(id: F.profileA, customerUserID: "x", token: AppAccountToken(high: 1, low: 1),
                                                           installID: Self.install, createdMs: 0, lastSeenMs: 0, cursor: 0))),
                       Self.written(.attributesUpdated(F.profileA, [.init(key: "k", value: "v", updatedMs: 300)]))] {
            let bytes = try #require(Hex.decode(change))
            for length in 0..<bytes.count {
                #expect(throws: ByteReaderError.self) { try RuntimeRecord(WALRecord(kind: 16, payload: Array(bytes.prefix(length)))) }
            }
        }
    }
}

/// A log that holds both layouts, as one written before and after the upgrade does, replays to
/// the state the same changes give, and what the old records meant survives being written again
/// in the new tags.
@Suite struct MixedLayoutReplay {
    typealias F = Version3Fixtures

    static let install = InstallID(high: 0x0A, low: 0x0B)
    static let tokenA = AppAccountToken(high: 6, low: 7)
    static let tokenB = AppAccountToken(high: 8, low: 9)

    static func start() -> ProjectState {
        var state = ProjectState(id: try! ProjectID(validating: "acme"), name: "Acme", createdMs: 0,
                                 keys: KeyDigests(publicKey: SecretDigest(secret: "pk"), secretKey: SecretDigest(secret: "sk")))
        state.apply(.init([.configReplaced(.empty)], atMs: 1))
        return state
    }

    /// The batches the records hold, as the rules decide them now.
    static var batches: [ProjectState.ChangeBatch] {
        [
            .init([.profileCreated(Profile(id: F.profileA, customerUserID: "al", token: tokenA, createdMs: 10, lastSeenMs: 10,
                                           cursor: 0))], atMs: 10),
            .init([.attributesUpdated(F.profileA, [.init(key: "plan", value: "gold")])], atMs: 20),
            .init([.profileCreated(Profile(id: F.profileB, customerUserID: nil, token: tokenB, installID: install, createdMs: 30,
                                           lastSeenMs: 30, cursor: 0))], atMs: 30),
            .init([.attributesUpdated(F.profileB, [.init(key: "theme", value: "dark", updatedMs: 25),
                                                   .init(key: "plan", value: "free")])], atMs: 40),
            .init([.profileMerged(from: F.profileB, into: F.profileA)], atMs: 50),
        ]
    }

    /// The first two as they were written before: tags 3 and 7.
    static var oldRecords: [String] {
        let tokenHex = "0600000000000000" + "0700000000000000"
        return [
            "05" + "14" + "01" + "03" + F.profileAHex + "01" + F.str("al") + tokenHex + "00" + "00" + "14" + "14" + "00",
            "05" + "28" + "01" + "07" + F.profileAHex + "01" + F.str("plan") + "01" + F.str("gold"),
        ]
    }

    static func replay(_ payloads: [[UInt8]]) throws -> ProjectState {
        var state = start()
        for payload in payloads {
            guard case .projectChanged(_, let batch) = try RuntimeRecord(WALRecord(kind: 16, payload: payload)) else {
                throw ByteReaderError.invalid("not a change", at: 0)
            }
            state.apply(batch)
        }
        return state
    }

    @Test func aLogWithOldAndNewTagsReplaysToTheSameState() throws {
        var expected = Self.start()
        for batch in Self.batches { expected.apply(batch) }
        let newRecords = Self.batches.dropFirst(2).map { RuntimeRecord.projectChanged(5, $0).logRecord.payload }
        let mixed = try Self.oldRecords.map { try #require(Hex.decode($0)) } + newRecords
        let replayed = try Self.replay(mixed)
        #expect(replayed == expected)
        let alice = try #require(replayed.profiles.profile(F.profileA))
        #expect(alice.attributes == ["plan": ProfileAttribute(value: "gold", updatedMs: 20),
                                     "theme": ProfileAttribute(value: "dark", updatedMs: 25)])
        #expect(alice.attributesCursor == replayed.sequence, "the merge brought an attribute")
        #expect(replayed.profiles.resolvedID(installID: Self.install) == F.profileA)
        // Every record written again in today's tags replays to the same state.
        let rewritten = try mixed.map { payload in
            guard case .projectChanged(let incarnation, let batch) = try RuntimeRecord(WALRecord(kind: 16, payload: payload)) else {
                throw ByteReaderError.invalid("not a change", at: 0)
            }
            return RuntimeRecord.projectChanged(incarnation, batch).logRecord.payload
        }
        #expect(rewritten != mixed)
        #expect(try Self.replay(rewritten) == expected)
        // And a snapshot of it reads back as it.
        #expect(try Version3Fixtures.decodeBothWays(StateCoding.encode(replayed)) == expected)
    }
}
