import GatehouseBase
@testable import GatehouseCore
import Testing

// profile.create with an install id (docs/protocol.md, `profile.create`): a customer user id
// that exists decides; else an install id that resolves answers its profile, which takes an
// unseen customer user id if it is anonymous; else a new profile with both. An install id
// resolves like an alias: through merges, and to nothing once its profile is deleted.

private func installID(_ n: UInt64) -> InstallID { InstallID(high: 0x5EED, low: n) }

@Suite("profile.create with an install id answers the profile it resolves to, or makes one with it")
struct CreateWithInstallID {
    @Test func anUnseenInstallIDMakesAnAnonymousProfileWithIt() throws {
        var world = IdentityWorld()
        let decision = try world.create(installID: installID(1))
        #expect(decision.created)
        let profile = world.profile(decision.profileID)
        #expect(profile.installID == installID(1) && profile.isAnonymous)
        #expect(world.state.profiles.resolvedID(installID: installID(1)) == profile.id)
    }

    @Test func aKnownInstallIDAnswersItsProfileAndChangesNothing() throws {
        var world = IdentityWorld()
        let first = try world.create(installID: installID(1)).profileID
        let before = world.state
        let again = try world.create(installID: installID(1))
        #expect(again.profileID == first && !again.created && again.batch.changes.isEmpty)
        #expect(world.state == before)
    }

    @Test func aKnownInstallIDTakesTheGivenTokenAsIdentifyRule5Has() throws {
        var world = IdentityWorld()
        let first = try world.create(installID: installID(1)).profileID
        let decision = try world.create(token: fixedToken(1), installID: installID(1))
        #expect(decision.batch.changes == [.tokenAssigned(first, fixedToken(1))])
        #expect(!decision.created)
        let owner = try world.create(installID: installID(2)).profileID
        #expect(try world.create(token: fixedToken(2), installID: installID(2), ownsPurchase: owning(owner)).batch.changes.isEmpty)
    }

    @Test func aKnownInstallIDWithAnotherProfilesTokenIsTokenInUse() throws {
        var world = IdentityWorld()
        try world.create(installID: installID(1))
        try world.create(token: fixedToken(3))
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.create(token: fixedToken(3), installID: installID(1)) }
            == .tokenInUse)
        #expect(world.state == before)
    }

    @Test func anExistingCustomerUserIDDecidesWhateverTheInstallID() throws {
        var world = IdentityWorld()
        let alice = try world.create("alice").profileID
        let installed = try world.create(installID: installID(1)).profileID
        let before = world.state
        for installID in [installID(1), installID(2)] {
            let decision = try world.create("alice", installID: installID)
            #expect(decision.profileID == alice && !decision.created && decision.batch.changes.isEmpty)
        }
        #expect(world.state == before)
        #expect(world.state.profiles.resolvedID(installID: installID(1)) == installed)
        #expect(world.state.profiles.resolvedID(installID: installID(2)) == nil, "an install id is only taken by a new profile")
    }

    @Test func anAnonymousInstalledProfileTakesAnUnseenCustomerUserID() throws {
        var world = IdentityWorld()
        let installed = try world.create(installID: installID(1)).profileID
        let decision = try world.create(" bob ", token: fixedToken(4), installID: installID(1))
        #expect(decision.profileID == installed && !decision.created)
        #expect(decision.batch.changes == [.customerUserIDAssigned(installed, "bob"), .tokenAssigned(installed, fixedToken(4))])
        #expect(world.state.profiles.profile(customerUserID: "bob")?.id == installed)
        #expect(world.profile(installed).installID == installID(1))
    }

    @Test func anIdentifiedInstalledProfileStaysAndANewProfileTakesTheCustomerUserID() throws {
        var world = IdentityWorld()
        let installed = try world.create("alice", installID: installID(1)).profileID
        let decision = try world.create("bob", installID: installID(1))
        #expect(decision.created && decision.profileID != installed)
        let bob = world.profile(decision.profileID)
        #expect(bob.customerUserID == "bob" && bob.installID == nil, "the install id stays with its profile")
        #expect(world.profile(installed).customerUserID == "alice")
        #expect(world.state.profiles.resolvedID(installID: installID(1)) == installed)
        // Without a customer user id, the identified profile is answered as it is.
        let plain = try world.create(installID: installID(1))
        #expect(plain.profileID == installed && !plain.created && plain.batch.changes.isEmpty)
    }

    @Test func neitherKnownMakesOneProfileWithBoth() throws {
        var world = IdentityWorld()
        let decision = try world.create("carol", token: fixedToken(5), installID: installID(1))
        #expect(decision.created)
        let carol = world.profile(decision.profileID)
        #expect(carol.customerUserID == "carol" && carol.installID == installID(1) && carol.token == fixedToken(5))
    }

    @Test func anInvalidCustomerUserIDIsRefusedBeforeTheInstallIDIsLookedAt() throws {
        var world = IdentityWorld()
        try world.create(installID: installID(1))
        let before = world.state
        for raw in ["  ", "$RCAnonymousID:0123456789abcdef0123456789abcdef"] {
            #expect(rejectionCode { () throws(GatehouseError) in try world.create(raw, installID: installID(1)) }
                == .invalidCustomerUserID)
            #expect(rejectionCode { () throws(GatehouseError) in try world.create(raw, installID: installID(2)) }
                == .invalidCustomerUserID)
        }
        #expect(world.state == before)
    }
}

@Suite("An install id resolves like an alias: through merges, and never again once deleted")
struct InstallIDResolution {
    @Test func anUnknownInstallIDIsNotFound() {
        let world = IdentityWorld()
        #expect(rejectionCode { () throws(GatehouseError) in try world.state.resolveProfile(installID: installID(9)) } == .notFound)
        #expect(rejectionCode { () throws(GatehouseError) in try world.state.resolveProfileID(installID: installID(9)) } == .notFound)
        #expect(rejectionCode { () throws(GatehouseError) in try world.state.sync(installID: installID(9), cursor: nil) } == .notFound)
    }

    @Test func aMergedProfilesInstallIDResolvesToTheSurvivor() throws {
        var world = IdentityWorld(login: .alias)
        let alice = try world.create("alice", installID: installID(1)).profileID
        let guest = try world.create(installID: installID(2)).profileID
        try world.identify(guest, "alice")
        #expect(try world.state.resolveProfileID(installID: installID(2)) == alice)
        #expect(try world.state.resolveProfile(installID: installID(1)).id == alice)
        #expect(world.profile(alice).mergedInstallIDs == [installID(2)])
        // Each install merged in adds its install id; an identified profile is never merged, so
        // its install id stays with it.
        let third = try world.create(installID: installID(3)).profileID
        try world.identify(third, "alice")
        #expect(world.profile(alice).mergedInstallIDs == [installID(2), installID(3)])
        let erin = try world.create("erin", installID: installID(5)).profileID
        try world.identify(erin, "alice")
        #expect(try world.state.resolveProfileID(installID: installID(5)) == erin)
    }

    @Test func underSwitchNothingMergesAndEachInstallIDKeepsItsProfile() throws {
        var world = IdentityWorld(login: .switch)
        let alice = try world.create("alice").profileID
        let guest = try world.create(installID: installID(2)).profileID
        let decision = try world.identify(guest, "alice")
        #expect(decision.profileID == alice && decision.mergedFrom.isEmpty)
        #expect(try world.state.resolveProfileID(installID: installID(2)) == guest)
    }

    @Test func aDeletedProfilesInstallIDsAreNotFoundAndMayBeTakenAgain() throws {
        var world = IdentityWorld(login: .alias)
        let alice = try world.create("alice", installID: installID(1)).profileID
        let guest = try world.create(installID: installID(2)).profileID
        try world.identify(guest, "alice")
        try world.delete(alice)
        for n: UInt64 in [1, 2] {
            #expect(rejectionCode { () throws(GatehouseError) in try world.state.resolveProfileID(installID: installID(n)) } == .notFound)
        }
        let again = try world.create(installID: installID(2))
        #expect(again.created && world.profile(again.profileID).installID == installID(2))
    }

    @Test func syncByAMergedProfilesInstallIDReportsIdentityAsAnAliasDoes() throws {
        var world = IdentityWorld(login: .alias)
        let alice = try world.create("alice", installID: installID(1)).profileID
        let guest = try world.create(installID: installID(2)).profileID
        try world.identify(guest, "alice")
        let latest = try world.state.sync(profile: alice, cursor: nil).cursor
        let own = try world.state.sync(installID: installID(1), cursor: latest)
        #expect(own.profileID == alice && own.changed.isEmpty)
        let merged = try world.state.sync(installID: installID(2), cursor: latest)
        #expect(merged.profileID == alice && merged.changed == [.identity])
        #expect(try world.state.sync(profile: guest, cursor: latest).changed == [.identity], "as the alias does")
    }
}
