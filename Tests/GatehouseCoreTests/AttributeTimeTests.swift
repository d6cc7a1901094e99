import GatehouseBase
@testable import GatehouseCore
import Testing

// Attribute times (docs/protocol.md, `profile.attributes`): each attribute keeps the time it was
// set; an update older than it is ignored, an equal or newer one wins; a delete removes the key
// and leaves no time behind. Only the updates that win are logged.

private typealias Update = ProjectState.AttributeUpdate

extension IdentityWorld {
    @discardableResult
    fileprivate mutating func update(_ id: ProfileID, _ updates: [Update]) throws(GatehouseError) -> ProfileDecision {
        commit(try state.updateAttributes(profile: id, updates, nowMs: nowMs))
    }

    fileprivate func attribute(_ id: ProfileID, _ key: String) -> ProfileAttribute? { profile(id).attributes[key] }
}

@Suite("An attribute update older than the attribute is ignored; an equal or newer one wins")
struct AttributeTimes {
    @Test func anUpdateWithoutATimeTakesTheRequestsTime() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        let now = world.nowMs
        let decision = try world.update(id, [Update(key: "plan", value: "gold")])
        #expect(decision.batch.changes == [.attributesUpdated(id, [Update(key: "plan", value: "gold")])])
        #expect(world.attribute(id, "plan") == ProfileAttribute(value: "gold", updatedMs: now))
    }

    @Test func newerWinsEqualWinsOlderIsIgnored() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        try world.update(id, [Update(key: "plan", value: "gold", updatedMs: 100)])
        try world.update(id, [Update(key: "plan", value: "silver", updatedMs: 200)])
        #expect(world.attribute(id, "plan") == ProfileAttribute(value: "silver", updatedMs: 200))
        try world.update(id, [Update(key: "plan", value: "bronze", updatedMs: 200)])
        #expect(world.attribute(id, "plan") == ProfileAttribute(value: "bronze", updatedMs: 200), "equal wins")
        let before = world.state
        let older = try world.update(id, [Update(key: "plan", value: "tin", updatedMs: 199)])
        #expect(older.batch.changes.isEmpty && older.profileID == id, "ignored, not an error")
        #expect(world.state == before)
    }

    @Test func aDeleteOlderThanTheAttributeIsIgnoredAndANewerOneLeavesNoTime() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        try world.update(id, [Update(key: "plan", value: "gold", updatedMs: 100)])
        #expect(try world.update(id, [Update(key: "plan", value: nil, updatedMs: 99)]).batch.changes.isEmpty)
        #expect(world.attribute(id, "plan")?.value == "gold")
        try world.update(id, [Update(key: "plan", value: nil, updatedMs: 150)])
        #expect(world.attribute(id, "plan") == nil)
        // No tombstone: a set older than the delete still wins once the key is gone.
        try world.update(id, [Update(key: "plan", value: "late", updatedMs: 120)])
        #expect(world.attribute(id, "plan") == ProfileAttribute(value: "late", updatedMs: 120))
    }

    @Test func anEmptyValueDeletesAsNullDoes() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        try world.update(id, [Update(key: "a", value: "1"), Update(key: "b", value: "2")])
        let decision = try world.update(id, [Update(key: "a", value: ""), Update(key: "b", value: "", updatedMs: 5)])
        #expect(decision.batch.changes == [.attributesUpdated(id, [Update(key: "a", value: nil)])],
                "a's is logged as a delete; b's is older than b")
        #expect(world.profile(id).attributeValues == ["b": "2"])
    }

    @Test func onlyTheWinnersAreLoggedAndAnUpdateThatChangesNothingIsNot() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        try world.update(id, [Update(key: "plan", value: "gold", updatedMs: 100)])
        let decision = try world.update(id, [
            Update(key: "plan", value: "gold", updatedMs: 100),  // as it is
            Update(key: "gone", value: nil),  // not there
            Update(key: "plan", value: "old", updatedMs: 50),
            Update(key: "theme", value: "dark", updatedMs: 10),
            Update(key: "theme", value: "light", updatedMs: 5),  // older than the one before it
        ])
        #expect(decision.batch.changes == [.attributesUpdated(id, [Update(key: "theme", value: "dark", updatedMs: 10)])])
        #expect(world.profile(id).attributeValues == ["plan": "gold", "theme": "dark"])
        // The same value with a newer time is a change: the time moves.
        try world.update(id, [Update(key: "plan", value: "gold", updatedMs: 300)])
        #expect(world.attribute(id, "plan")?.updatedMs == 300)
    }

    @Test func theFiftyKeyLimitCountsOnlyWhatWins() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        try world.update(id, (1...50).map { Update(key: "k\($0)", value: "v", updatedMs: 100) })
        // An ignored delete makes no room.
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in
            try world.update(id, [Update(key: "k1", value: nil, updatedMs: 1), Update(key: "k51", value: "v")])
        } == .badRequest)
        #expect(world.state == before)
        try world.update(id, [Update(key: "k1", value: nil, updatedMs: 100), Update(key: "k51", value: "v")])
        #expect(world.profile(id).attributes.count == 50)
    }

    @Test func shapesAreCheckedOnEveryUpdateEvenOneThatWouldBeIgnored() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        try world.update(id, [Update(key: "bio", value: "x", updatedMs: 100)])
        let before = world.state
        let tooLong = String(repeating: "v", count: 501)
        #expect(rejectionCode { () throws(GatehouseError) in try world.update(id, [Update(key: "bio", value: tooLong, updatedMs: 1)]) }
            == .badRequest)
        #expect(world.state == before)
    }
}

@Suite("The attributes cursor: the batch that last changed a profile's attributes")
struct AttributesCursor {
    @Test func anUpdateSetsItAndSyncCursorsStayWhereTheyWere() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        let created = world.profile(id)
        #expect(created.attributesCursor == 0)
        try world.update(id, [Update(key: "plan", value: "gold")])
        let updated = world.profile(id)
        #expect(updated.attributesCursor == world.state.sequence)
        #expect(updated.cursors == created.cursors, "attributes are no sync change")
        #expect(world.state.profiles.documentCursor(of: id) == world.state.sequence)
        #expect(world.state.profiles.cursor(of: id) == created.cursor)
        // An ignored update logs nothing and moves nothing.
        try world.update(id, [Update(key: "plan", value: "old", updatedMs: 0)])
        #expect(world.profile(id).attributesCursor == updated.attributesCursor)
    }

    @Test func aMergeThatBringsAttributesSetsItOneThatBringsNoneDoesNot() throws {
        var world = IdentityWorld(login: .alias)
        let alice = try world.create("alice").profileID
        try world.update(alice, [Update(key: "plan", value: "gold")])
        let aliceCursor = world.profile(alice).attributesCursor
        let bare = try world.create().profileID
        try world.identify(bare, "alice")
        #expect(world.profile(alice).attributesCursor == aliceCursor, "nothing came with it")
        let guest = try world.create().profileID
        try world.update(guest, [Update(key: "theme", value: "dark", updatedMs: 42), Update(key: "plan", value: "free")])
        try world.identify(guest, "alice")
        let merged = world.profile(alice)
        #expect(merged.attributesCursor == world.state.sequence)
        #expect(merged.attributes["theme"] == ProfileAttribute(value: "dark", updatedMs: 42), "it keeps its time")
        #expect(merged.attributes["plan"]?.value == "gold", "the target's win")
        #expect(world.state.profiles.documentCursor(of: alice) == max(merged.cursor, merged.attributesCursor))
        #expect(world.state.profiles.documentCursor(of: guest) == nil, "only a profile's own id")
    }
}
