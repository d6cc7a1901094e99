import GatehouseBase
@testable import GatehouseCore
import Testing

/// A batch's effects name every profile it touched once, sorted, however many there are: the
/// list of touched profiles turns into a hash set past a few, and must not lose or repeat one
/// on the way.
@Suite struct BatchEffectsTests {
    /// `count` anonymous profiles decided against `world`'s state, as one batch's changes.
    static func creations(_ count: Int, in world: IdentityWorld) throws -> (ids: [ProfileID], changes: [ProjectState.Change]) {
        var ids: [ProfileID] = []
        var changes: [ProjectState.Change] = []
        for _ in 0..<count {
            let decision = try world.state.createProfile(customerUserID: nil, token: nil, nowMs: world.nowMs, random: world.random)
            ids.append(decision.profileID)
            changes += decision.batch.changes
        }
        return (ids, changes)
    }

    @Test(arguments: [1, 2, 8, 9, 30])
    func everyCreatedProfileIsNamedOnceAndSorted(_ count: Int) throws {
        var state = IdentityWorld().state
        let (ids, changes) = try Self.creations(count, in: IdentityWorld())
        // The same profile touched twice in one batch is still named once.
        let effects = state.apply(ProjectState.ChangeBatch(changes + [.customerUserIDAssigned(ids[count - 1], "user")], atMs: 1))
        #expect(effects.changedProfiles == ids.sorted())
        #expect(effects.removedProfiles == [])
    }

    @Test(arguments: [1, 8, 9, 20])
    func deletedProfilesAreRemovedNotChanged(_ count: Int) throws {
        let world = IdentityWorld()
        var state = world.state
        let (ids, changes) = try Self.creations(count + 3, in: world)
        state.apply(ProjectState.ChangeBatch(changes, atMs: 1))
        let deleted = Array(ids.prefix(count))
        let kept = Array(ids.suffix(3))
        let touched: [ProjectState.Change] = ids.enumerated().map { .customerUserIDAssigned($1, "user-\($0)") }
        let effects = state.apply(ProjectState.ChangeBatch(touched + deleted.map { .profileDeleted($0) }, atMs: 2))
        #expect(effects.changedProfiles == kept.sorted())
        #expect(effects.removedProfiles == deleted.sorted())
    }

    @Test func onlyARotatedKeyReportsKeysChanged() throws {
        let world = IdentityWorld()
        var state = world.state
        let (_, changes) = try Self.creations(2, in: world)
        #expect(!state.apply(ProjectState.ChangeBatch(changes, atMs: 1)).keysChanged)
        #expect(!state.apply(ProjectState.ChangeBatch([.configReplaced(.empty)], atMs: 2)).keysChanged)
        let rotated = state.apply(ProjectState.ChangeBatch([.keyRotated(.secret, SecretDigest(secret: "sk_new"))], atMs: 3))
        #expect(rotated.keysChanged)
        #expect(state.keyGenerations[.secret] == 2)
    }
}
