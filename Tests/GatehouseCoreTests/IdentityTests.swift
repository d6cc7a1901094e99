import GatehouseBase
@testable import GatehouseCore
import Testing

// The identity rules of DESIGN.md, "Profiles and identity", one suite per rule. Each test
// decides on the current state and applies the decision the way the project's actor does; a
// rejected input must leave the state exactly as it was.

// MARK: Fixtures

typealias ProfileDecision = ProjectState.ProfileDecision

/// A project as its actor holds it: a rule decides on the current state, a non-empty batch is
/// applied (and kept, for replay), and the clock moves on.
struct IdentityWorld {
    static let project = try! ProjectID(validating: "acme")
    static let keys = KeyDigests(publicKey: SecretDigest(secret: "pk"), secretKey: SecretDigest(secret: "sk"))

    private(set) var state: ProjectState
    let random: SeededRandomSource
    private(set) var nowMs: Int64 = 1_700_000_000_000
    /// Every batch applied, the configuration first: replaying them rebuilds `state`.
    private(set) var batches: [ProjectState.ChangeBatch] = []

    init(login: LoginMode = .alias, seed: UInt64 = 1) {
        state = Self.emptyState
        random = SeededRandomSource(seed: seed)
        var config = ProjectConfig.empty
        config.login = login
        apply(ProjectState.ChangeBatch([.configReplaced(config)], atMs: 0))
    }

    static var emptyState: ProjectState { ProjectState(id: project, name: "Acme", createdMs: 0, keys: keys) }

    mutating func apply(_ batch: ProjectState.ChangeBatch) {
        state.apply(batch)
        batches.append(batch)
    }

    /// What the actor does with a decision: log and apply it unless it changes nothing.
    @discardableResult
    mutating func commit(_ decision: ProfileDecision) -> ProfileDecision {
        #expect(decision.batch.atMs == nowMs)
        if !decision.batch.changes.isEmpty { apply(decision.batch) }
        nowMs += 1_000
        return decision
    }

    @discardableResult
    mutating func create(
        _ customerUserID: String? = nil, token: AppAccountToken? = nil, installID: InstallID? = nil,
        ownsPurchase: ((ProfileID) -> Bool)? = nil
    ) throws(GatehouseError) -> ProfileDecision {
        guard let ownsPurchase else {
            return commit(try state.createProfile(customerUserID: customerUserID, token: token, installID: installID, nowMs: nowMs,
                                                  random: random))
        }
        return commit(try state.createProfile(customerUserID: customerUserID, token: token, installID: installID, nowMs: nowMs,
                                              random: random, ownsPurchase: ownsPurchase))
    }

    @discardableResult
    mutating func identify(
        _ id: ProfileID, _ customerUserID: String, token: AppAccountToken? = nil, ownsPurchase: ((ProfileID) -> Bool)? = nil
    ) throws(GatehouseError) -> ProfileDecision {
        guard let ownsPurchase else {
            return commit(try state.identify(profile: id, customerUserID: customerUserID, token: token, nowMs: nowMs,
                                             random: random))
        }
        return commit(try state.identify(profile: id, customerUserID: customerUserID, token: token, nowMs: nowMs,
                                         random: random, ownsPurchase: ownsPurchase))
    }

    @discardableResult
    mutating func logout(_ id: ProfileID) throws(GatehouseError) -> ProfileDecision {
        commit(try state.logout(profile: id, nowMs: nowMs, random: random))
    }

    @discardableResult
    mutating func setAttributes(_ id: ProfileID, _ updates: [(String, String?)]) throws(GatehouseError) -> ProfileDecision {
        let updates = updates.map { ProjectState.AttributeUpdate(key: $0.0, value: $0.1) }
        return commit(try state.updateAttributes(profile: id, updates, nowMs: nowMs))
    }

    @discardableResult
    mutating func delete(_ id: ProfileID) throws(GatehouseError) -> ProfileDecision {
        commit(try state.deleteProfile(id, nowMs: nowMs))
    }

    /// The profile behind an id or alias, which must exist.
    func profile(_ id: ProfileID) -> Profile {
        guard let profile = state.profiles.profile(id) else { preconditionFailure("no profile \(id)") }
        return profile
    }

    /// An id this project could have made but did not.
    func unknownID() -> ProfileID { ProfileID.make(tag: state.profileTag, random: SeededRandomSource(seed: 404)) }
}

/// The code a step was rejected with, or nil when it succeeded.
func rejectionCode(_ step: () throws(GatehouseError) -> some Any) -> ErrorCode? {
    do {
        _ = try step()
        return nil
    } catch {
        return error.code
    }
}

/// A fixed app account token, told apart by `n`.
func fixedToken(_ n: UInt64) -> AppAccountToken { AppAccountToken(high: 0xAAAA_0000_0000_4000, low: 0x8000_0000_0000_0000 | n) }

/// An owner test for the purchase seam: these profiles own a purchase.
func owning(_ ids: ProfileID...) -> (ProfileID) -> Bool { { ids.contains($0) } }

// MARK: Customer user ids

@Suite("Customer user ids are 1–255 characters once spaces at either end are removed")
struct CustomerUserIDNormalization {
    @Test func spacesAtEitherEndAreRemoved() throws {
        #expect(try ProjectState.normalizeCustomerUserID("  alice  ") == "alice")
    }

    @Test func onlySpacesAreRemovedAndInnerSpacesStay() throws {
        #expect(try ProjectState.normalizeCustomerUserID("\talice\u{00A0}") == "\talice\u{00A0}")
        #expect(try ProjectState.normalizeCustomerUserID(" a b ") == "a b")
    }

    @Test func oneAnd255CharactersAreAccepted() throws {
        #expect(try ProjectState.normalizeCustomerUserID("a") == "a")
        let longest = String(repeating: "a", count: 255)
        #expect(try ProjectState.normalizeCustomerUserID(longest) == longest)
    }

    @Test func twoHundredFiftySixCharactersAreRejected() {
        let code = rejectionCode { () throws(GatehouseError) in
            try ProjectState.normalizeCustomerUserID(String(repeating: "a", count: 256))
        }
        #expect(code == .invalidCustomerUserID)
    }

    @Test func emptyOrOnlySpacesIsRejected() {
        #expect(rejectionCode { () throws(GatehouseError) in try ProjectState.normalizeCustomerUserID("") } == .invalidCustomerUserID)
        #expect(rejectionCode { () throws(GatehouseError) in try ProjectState.normalizeCustomerUserID("   ") } == .invalidCustomerUserID)
    }

    @Test func lengthIsCountedAfterTrimming() throws {
        let padded = "  " + String(repeating: "a", count: 255) + "  "
        #expect(try ProjectState.normalizeCustomerUserID(padded).count == 255)
    }

    @Test func charactersAreCountedNotBytes() throws {
        let accented = String(repeating: "é", count: 255)
        #expect(try ProjectState.normalizeCustomerUserID(accented) == accented)
    }

    @Test func anIDThatBeginsAsAnInstallIDDoesIsRejected() throws {
        for raw in ["$RCAnonymousID:0123456789abcdef0123456789abcdef", "$RCAnonymousID:alice", "  $RCAnonymousID:x"] {
            #expect(rejectionCode { () throws(GatehouseError) in try ProjectState.normalizeCustomerUserID(raw) }
                == .invalidCustomerUserID, "\(raw)")
        }
        #expect(try ProjectState.normalizeCustomerUserID("alice$RCAnonymousID:") == "alice$RCAnonymousID:")
        #expect(try ProjectState.normalizeCustomerUserID("$RCAnonymous") == "$RCAnonymous")
    }
}

// MARK: Resolving a presented id

@Suite("A presented id resolves to its canonical profile, or says why not")
struct ProfileResolution {
    @Test func unknownIdOfThisProjectIsNotFound() {
        let world = IdentityWorld()
        #expect(rejectionCode { () throws(GatehouseError) in try world.state.resolveProfile(world.unknownID()) } == .notFound)
    }

    @Test func idWithAnotherProjectsTagIsForbidden() throws {
        let world = IdentityWorld()
        let otherTag = ProfileID.tag(for: try ProjectID(validating: "other"))
        try #require(otherTag != world.state.profileTag)
        let foreign = ProfileID.make(tag: otherTag, random: SeededRandomSource(seed: 5))
        #expect(rejectionCode { () throws(GatehouseError) in try world.state.resolveProfile(foreign) } == .forbidden)
    }

    @Test func aliasResolvesToTheProfileItWasMergedInto() throws {
        var world = IdentityWorld(login: .alias)
        let owner = try world.create("alice").profileID
        let anonymous = try world.create().profileID
        try world.identify(anonymous, "alice")
        #expect(try world.state.resolveProfile(anonymous).id == owner)
        #expect(try world.state.resolveProfile(owner).id == owner)
    }

    @Test func madeIdsCarryTheProjectsTag() throws {
        var world = IdentityWorld()
        #expect(try world.create().profileID.tag == world.state.profileTag)
    }
}

// MARK: profile.create

@Suite("profile.create makes a profile, or answers the one with that customer user id")
struct ProfileCreation {
    @Test func withoutCustomerUserIDMakesAnAnonymousProfileWithAFreshToken() throws {
        var world = IdentityWorld()
        let decision = try world.create()
        #expect(decision.created && !decision.switched && decision.mergedFrom.isEmpty)
        let profile = world.profile(decision.profileID)
        #expect(profile.isAnonymous)
        #expect(world.state.profiles.profile(token: profile.token)?.id == profile.id)
        #expect(decision.batch.changes == [.profileCreated(Profile(
            id: profile.id, customerUserID: nil, token: profile.token, createdMs: profile.createdMs,
            lastSeenMs: profile.createdMs, cursor: 0))])
    }

    @Test func givenTokenBecomesTheNewProfilesToken() throws {
        var world = IdentityWorld()
        let decision = try world.create(token: fixedToken(1))
        #expect(world.profile(decision.profileID).token == fixedToken(1))
    }

    @Test func tokenHeldByAnyProfileIsTokenInUse() throws {
        var world = IdentityWorld()
        try world.create(token: fixedToken(1))
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.create(token: fixedToken(1)) } == .tokenInUse)
        #expect(rejectionCode { () throws(GatehouseError) in try world.create("bob", token: fixedToken(1)) } == .tokenInUse)
        #expect(world.state == before)
    }

    @Test func unseenCustomerUserIDMakesAnIdentifiedProfile() throws {
        var world = IdentityWorld()
        let decision = try world.create("  alice ", token: fixedToken(2))
        #expect(decision.created)
        let profile = world.profile(decision.profileID)
        #expect(profile.customerUserID == "alice")
        #expect(profile.token == fixedToken(2))
        #expect(world.state.profiles.profile(customerUserID: "alice")?.id == profile.id)
    }

    @Test func existingCustomerUserIDAnswersThatProfileAndChangesNothing() throws {
        var world = IdentityWorld()
        let alice = try world.create("alice").profileID
        let before = world.state
        let decision = try world.create(" alice")
        #expect(decision.profileID == alice)
        #expect(!decision.created)
        #expect(decision.batch.changes.isEmpty)
        #expect(world.state == before)
    }

    @Test func existingCustomerUserIDTakesTheGivenToken() throws {
        var world = IdentityWorld()
        let alice = try world.create("alice").profileID
        let decision = try world.create("alice", token: fixedToken(3))
        #expect(decision.batch.changes == [.tokenAssigned(alice, fixedToken(3))])
        #expect(world.profile(alice).token == fixedToken(3))
    }

    @Test func existingCustomerUserIDWithItsOwnTokenChangesNothing() throws {
        var world = IdentityWorld()
        try world.create("alice", token: fixedToken(3))
        #expect(try world.create("alice", token: fixedToken(3)).batch.changes.isEmpty)
    }

    @Test func existingCustomerUserIDWithAnotherProfilesTokenIsTokenInUse() throws {
        var world = IdentityWorld()
        try world.create("alice")
        try world.create(token: fixedToken(4))
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.create("alice", token: fixedToken(4)) } == .tokenInUse)
        #expect(world.state == before)
    }

    @Test func existingCustomerUserIDThatOwnsAPurchaseKeepsItsToken() throws {
        var world = IdentityWorld()
        let alice = try world.create("alice", token: fixedToken(5)).profileID
        let decision = try world.create("alice", token: fixedToken(6), ownsPurchase: owning(alice))
        #expect(decision.batch.changes.isEmpty)
        #expect(world.profile(alice).token == fixedToken(5))
    }

    @Test func invalidCustomerUserIDIsRejected() {
        var world = IdentityWorld()
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.create("   ") } == .invalidCustomerUserID)
        #expect(rejectionCode { () throws(GatehouseError) in try world.create(String(repeating: "x", count: 256)) }
            == .invalidCustomerUserID)
        #expect(world.state == before)
    }
}

// MARK: profile.identify

@Suite("identify rule 1: invalid input is refused and changes nothing")
struct IdentifyRejections {
    @Test func invalidCustomerUserIDIsRejectedBeforeTheProfileIsLookedUp() {
        var world = IdentityWorld()
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.identify(world.unknownID(), " ") } == .invalidCustomerUserID)
        #expect(world.state == before)
    }

    @Test func unknownProfileIsNotFound() {
        var world = IdentityWorld()
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.identify(world.unknownID(), "alice") } == .notFound)
        #expect(world.state == before)
    }

    @Test func otherProjectsProfileIsForbidden() throws {
        var world = IdentityWorld()
        let foreign = ProfileID.make(tag: ProfileID.tag(for: try ProjectID(validating: "other")), random: world.random)
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.identify(foreign, "alice") } == .forbidden)
        #expect(world.state == before)
    }

    @Test(arguments: LoginMode.allCases)
    func tokenOfAnotherProfileIsRefusedWhenPKeepsX(login: LoginMode) throws {
        var world = IdentityWorld(login: login)
        let alice = try world.create("alice").profileID
        try world.create(token: fixedToken(1))
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.identify(alice, "alice", token: fixedToken(1)) } == .tokenInUse)
        #expect(world.state == before)
    }

    @Test(arguments: LoginMode.allCases)
    func tokenOfAThirdProfileIsRefusedWhenSwitchingToQ(login: LoginMode) throws {
        var world = IdentityWorld(login: login)
        try world.create("alice")
        try world.create(token: fixedToken(1))
        let anonymous = try world.create().profileID
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.identify(anonymous, "alice", token: fixedToken(1)) }
            == .tokenInUse)
        #expect(world.state == before)
    }

    @Test(arguments: LoginMode.allCases)
    func tokenOfAnotherProfileIsRefusedWhenAnonymousPTakesX(login: LoginMode) throws {
        var world = IdentityWorld(login: login)
        try world.create(token: fixedToken(1))
        let anonymous = try world.create().profileID
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.identify(anonymous, "alice", token: fixedToken(1)) }
            == .tokenInUse)
        #expect(world.state == before)
    }

    @Test(arguments: LoginMode.allCases)
    func tokenOfPIsRefusedWhenIdentifiedPGetsANewProfile(login: LoginMode) throws {
        var world = IdentityWorld(login: login)
        let bob = try world.create("bob", token: fixedToken(1)).profileID
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.identify(bob, "alice", token: fixedToken(1)) } == .tokenInUse)
        #expect(world.state == before)
    }

    @Test func tokenOfPIsRefusedWhenSwitchingUnderSwitch() throws {
        var world = IdentityWorld(login: .switch)
        try world.create("alice")
        let anonymous = try world.create(token: fixedToken(1)).profileID
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.identify(anonymous, "alice", token: fixedToken(1)) }
            == .tokenInUse)
        #expect(world.state == before)
    }

    @Test func tokenOfPIsRefusedWhenIdentifiedPSwitchesUnderAlias() throws {
        var world = IdentityWorld(login: .alias)
        try world.create("alice")
        let bob = try world.create("bob", token: fixedToken(1)).profileID
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.identify(bob, "alice", token: fixedToken(1)) } == .tokenInUse)
        #expect(world.state == before)
    }

    @Test func tokenOfPIsAcceptedWhenPIsMergedIntoQ() throws {
        var world = IdentityWorld(login: .alias)
        let alice = try world.create("alice", token: fixedToken(2)).profileID
        let anonymous = try world.create(token: fixedToken(1)).profileID
        let decision = try world.identify(anonymous, "alice", token: fixedToken(1))
        #expect(decision.batch.changes == [.profileMerged(from: anonymous, into: alice), .tokenAssigned(alice, fixedToken(1))])
        #expect(world.profile(alice).token == fixedToken(1))
        #expect(world.state.profiles.profile(token: fixedToken(1))?.id == alice)
    }
}

@Suite("identify rule 2: P already has X")
struct IdentifyKeepingX {
    @Test(arguments: LoginMode.allCases)
    func identifyWithOwnCustomerUserIDChangesNothing(login: LoginMode) throws {
        var world = IdentityWorld(login: login)
        let alice = try world.create("alice").profileID
        let before = world.state
        let decision = try world.identify(alice, " alice ")
        #expect(decision == ProfileDecision(batch: .init([], atMs: decision.batch.atMs), profileID: alice))
        #expect(world.state == before)
    }

    @Test(arguments: LoginMode.allCases)
    func identifyWithOwnCustomerUserIDTakesTheGivenToken(login: LoginMode) throws {
        var world = IdentityWorld(login: login)
        let alice = try world.create("alice").profileID
        let decision = try world.identify(alice, "alice", token: fixedToken(1))
        #expect(decision.batch.changes == [.tokenAssigned(alice, fixedToken(1))])
        #expect(!decision.switched)
        #expect(world.profile(alice).token == fixedToken(1))
    }

    @Test func aliasIdActsAsItsProfile() throws {
        var world = IdentityWorld(login: .alias)
        let alice = try world.create("alice").profileID
        let anonymous = try world.create().profileID
        try world.identify(anonymous, "alice")
        let decision = try world.identify(anonymous, "alice")
        #expect(decision.profileID == alice)
        #expect(!decision.switched && decision.batch.changes.isEmpty)
    }
}

@Suite("identify rule 3: X belongs to another profile Q")
struct IdentifySwitching {
    @Test func anonymousProfileIsMergedIntoQUnderAlias() throws {
        var world = IdentityWorld(login: .alias)
        let alice = try world.create("alice", token: fixedToken(1)).profileID
        let anonymous = try world.create(token: fixedToken(2)).profileID
        let decision = try world.identify(anonymous, "alice")
        #expect(decision.profileID == alice)
        #expect(decision.switched && !decision.created)
        #expect(decision.mergedFrom == [anonymous])
        #expect(decision.batch.changes == [.profileMerged(from: anonymous, into: alice)])
        #expect(world.state.profiles.count == 1)
        #expect(world.profile(alice).aliases == [anonymous])
        #expect(world.profile(alice).token == fixedToken(1))
    }

    @Test func mergedIdAndTokenResolveToQ() throws {
        var world = IdentityWorld(login: .alias)
        let alice = try world.create("alice", token: fixedToken(1)).profileID
        let anonymous = try world.create(token: fixedToken(2)).profileID
        try world.identify(anonymous, "alice")
        #expect(world.state.profiles.profile(anonymous)?.id == alice)
        #expect(world.state.profiles.profile(token: fixedToken(2))?.id == alice)
        #expect(world.state.profiles.profile(token: fixedToken(1))?.id == alice)
        // The merged token still belongs to Q: nobody else can take it.
        #expect(rejectionCode { () throws(GatehouseError) in try world.create(token: fixedToken(2)) } == .tokenInUse)
    }

    @Test func mergeKeepsQsAttributesOverPs() throws {
        var world = IdentityWorld(login: .alias)
        let alice = try world.create("alice").profileID
        try world.setAttributes(alice, [("$email", "alice@example.com"), ("plan", "gold")])
        let anonymous = try world.create().profileID
        try world.setAttributes(anonymous, [("$email", "anon@example.com"), ("theme", "dark")])
        try world.identify(anonymous, "alice")
        #expect(world.profile(alice).attributeValues == ["$email": "alice@example.com", "plan": "gold", "theme": "dark"])
    }

    @Test func mergeEmitsSubscriberAliasNamingTheMergedProfile() throws {
        var world = IdentityWorld(login: .alias)
        let alice = try world.create("alice").profileID
        let anonymous = try world.create().profileID
        try world.identify(anonymous, "alice")
        let sequence = world.state.sequence
        #expect(world.state.events.events == [Event(
            id: "evt_\(sequence)_0", cursor: sequence, type: .subscriberAlias, profileID: alice, customerUserID: "alice",
            atMs: world.nowMs - 1_000, details: [EventDetail("merged_from", .profiles([anonymous]))])])
    }

    @Test func anonymousProfileKeepsEverythingUnderSwitch() throws {
        var world = IdentityWorld(login: .switch)
        let alice = try world.create("alice").profileID
        let anonymous = try world.create(token: fixedToken(2)).profileID
        try world.setAttributes(anonymous, [("theme", "dark")])
        let before = world.state
        let decision = try world.identify(anonymous, "alice")
        #expect(decision.profileID == alice)
        #expect(decision.switched && decision.mergedFrom.isEmpty)
        #expect(decision.batch.changes.isEmpty)
        #expect(world.state == before)
        #expect(world.profile(anonymous).attributeValues == ["theme": "dark"])
        #expect(world.state.profiles.profile(token: fixedToken(2))?.id == anonymous)
        #expect(world.state.events.events.isEmpty)
    }

    @Test(arguments: LoginMode.allCases)
    func identifiedProfileSwitchesWithoutMerging(login: LoginMode) throws {
        var world = IdentityWorld(login: login)
        let alice = try world.create("alice").profileID
        let bob = try world.create("bob").profileID
        let before = world.state
        let decision = try world.identify(bob, "alice")
        #expect(decision.profileID == alice && decision.switched && decision.mergedFrom.isEmpty)
        #expect(world.state == before)
    }

    @Test(arguments: LoginMode.allCases)
    func givenTokenBecomesQsToken(login: LoginMode) throws {
        var world = IdentityWorld(login: login)
        let alice = try world.create("alice", token: fixedToken(1)).profileID
        let bob = try world.create("bob").profileID
        let decision = try world.identify(bob, "alice", token: fixedToken(9))
        #expect(decision.batch.changes == [.tokenAssigned(alice, fixedToken(9))])
        #expect(world.profile(alice).token == fixedToken(9))
        #expect(world.state.profiles.profile(token: fixedToken(1)) == nil)
    }

    @Test func aliasIdIsResolvedBeforeSwitching() throws {
        var world = IdentityWorld(login: .alias)
        let alice = try world.create("alice").profileID
        let bob = try world.create("bob").profileID
        let anonymous = try world.create().profileID
        try world.identify(anonymous, "alice")
        let decision = try world.identify(anonymous, "bob")
        #expect(decision.profileID == bob && decision.switched && decision.mergedFrom.isEmpty)
        #expect(world.profile(alice).aliases == [anonymous])
    }
}

@Suite("identify rule 4: X is unseen")
struct IdentifyUnseenID {
    @Test(arguments: LoginMode.allCases)
    func anonymousProfileTakesTheUnseenID(login: LoginMode) throws {
        var world = IdentityWorld(login: login)
        let anonymous = try world.create().profileID
        let decision = try world.identify(anonymous, " alice ")
        #expect(decision == ProfileDecision(
            batch: .init([.customerUserIDAssigned(anonymous, "alice")], atMs: decision.batch.atMs), profileID: anonymous))
        #expect(world.profile(anonymous).customerUserID == "alice")
        #expect(world.state.profiles.profile(customerUserID: "alice")?.id == anonymous)
    }

    @Test(arguments: LoginMode.allCases)
    func identifiedProfileIsLeftAndANewProfileTakesTheID(login: LoginMode) throws {
        var world = IdentityWorld(login: login)
        let bob = try world.create("bob", token: fixedToken(1)).profileID
        let bobBefore = world.profile(bob)
        let decision = try world.identify(bob, "alice")
        #expect(decision.switched && decision.created && decision.mergedFrom.isEmpty)
        #expect(decision.profileID != bob)
        let alice = world.profile(decision.profileID)
        #expect(alice.customerUserID == "alice" && alice.token != fixedToken(1))
        #expect(world.profile(bob) == bobBefore)
    }

    @Test func newProfileForIdentifiedPTakesTheGivenToken() throws {
        var world = IdentityWorld()
        let bob = try world.create("bob").profileID
        let decision = try world.identify(bob, "alice", token: fixedToken(7))
        #expect(world.profile(decision.profileID).token == fixedToken(7))
        #expect(decision.batch.changes.count == 1)
    }
}

@Suite("identify rule 5: the given token becomes the token of the profile in use")
struct IdentifyToken {
    @Test func givenTokenReplacesTheOldOneWhichBecomesFree() throws {
        var world = IdentityWorld()
        let anonymous = try world.create(token: fixedToken(1)).profileID
        let decision = try world.identify(anonymous, "alice", token: fixedToken(2))
        #expect(decision.batch.changes == [.customerUserIDAssigned(anonymous, "alice"), .tokenAssigned(anonymous, fixedToken(2))])
        #expect(world.profile(anonymous).token == fixedToken(2))
        #expect(world.state.profiles.profile(token: fixedToken(1)) == nil)
        #expect(try world.create(token: fixedToken(1)).created)
    }

    @Test func tokenTheProfileAlreadyHasIsNoChange() throws {
        var world = IdentityWorld()
        let anonymous = try world.create(token: fixedToken(1)).profileID
        let decision = try world.identify(anonymous, "alice", token: fixedToken(1))
        #expect(decision.batch.changes == [.customerUserIDAssigned(anonymous, "alice")])
    }

    @Test func profileThatOwnsAPurchaseKeepsItsTokenAndStillTakesX() throws {
        var world = IdentityWorld()
        let anonymous = try world.create(token: fixedToken(1)).profileID
        let decision = try world.identify(anonymous, "alice", token: fixedToken(2), ownsPurchase: owning(anonymous))
        #expect(decision.batch.changes == [.customerUserIDAssigned(anonymous, "alice")])
        #expect(world.profile(anonymous).token == fixedToken(1))
        #expect(world.profile(anonymous).customerUserID == "alice")
    }

    @Test func switchTargetThatOwnsAPurchaseKeepsItsToken() throws {
        var world = IdentityWorld(login: .alias)
        let alice = try world.create("alice", token: fixedToken(1)).profileID
        let anonymous = try world.create(token: fixedToken(2)).profileID
        let decision = try world.identify(anonymous, "alice", token: fixedToken(2), ownsPurchase: owning(alice))
        #expect(decision.batch.changes == [.profileMerged(from: anonymous, into: alice)])
        #expect(world.profile(alice).token == fixedToken(1))
        #expect(world.state.profiles.profile(token: fixedToken(2))?.id == alice)
    }

    @Test func noProfileOwnsAPurchaseUntilPurchasesExist() throws {
        var world = IdentityWorld()
        let alice = try world.create("alice").profileID
        #expect(!world.state.ownsPurchase(alice))
    }
}

@Suite("Two installs identifying with the same unseen id: exactly one takes it")
struct IdentifyExactlyOne {
    @Test func secondInstallSwitchesAndMergesUnderAlias() throws {
        var world = IdentityWorld(login: .alias)
        let first = try world.create().profileID
        let second = try world.create().profileID
        let firstDecision = try world.identify(first, "alice")
        let secondDecision = try world.identify(second, "alice")
        #expect(firstDecision.profileID == first && !firstDecision.switched)
        #expect(secondDecision.profileID == first && secondDecision.switched && secondDecision.mergedFrom == [second])
        #expect(world.state.profiles.count == 1)
        #expect(world.state.profiles.profile(customerUserID: "alice")?.id == first)
    }

    @Test func secondInstallSwitchesAndKeepsItsProfileUnderSwitch() throws {
        var world = IdentityWorld(login: .switch)
        let first = try world.create().profileID
        let second = try world.create().profileID
        try world.identify(first, "alice")
        let secondDecision = try world.identify(second, "alice")
        #expect(secondDecision.profileID == first && secondDecision.switched && secondDecision.mergedFrom.isEmpty)
        #expect(world.profile(second).isAnonymous)
        #expect(world.state.profiles.profile(customerUserID: "alice")?.id == first)
    }
}

// MARK: profile.logout

@Suite("profile.logout starts a new anonymous profile")
struct ProfileLogout {
    @Test func logoutOfAnAnonymousProfileIsProfileAnonymous() throws {
        var world = IdentityWorld()
        let anonymous = try world.create().profileID
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.logout(anonymous) } == .profileAnonymous)
        #expect(world.state == before)
    }

    @Test func logoutOfAnUnknownProfileIsNotFound() {
        var world = IdentityWorld()
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.logout(world.unknownID()) } == .notFound)
        #expect(world.state == before)
    }

    @Test func logoutAnswersANewAnonymousProfileAndLeavesPWithItsCustomer() throws {
        var world = IdentityWorld()
        let alice = try world.create("alice", token: fixedToken(1)).profileID
        let aliceBefore = world.profile(alice)
        let decision = try world.logout(alice)
        #expect(decision.created && decision.profileID != alice)
        let fresh = world.profile(decision.profileID)
        #expect(fresh.isAnonymous && fresh.token != fixedToken(1))
        #expect(world.profile(alice) == aliceBefore)
        #expect(world.state.profiles.count == 2)
    }
}

// MARK: profile.attributes

@Suite("Attributes: keys of 1–40 characters, values of at most 500, at most 50 keys")
struct ProfileAttributes {
    static func key(_ count: Int, _ fill: Character = "k") -> String { String(repeating: fill, count: count) }

    /// Expects `bad_request` naming `field`, and no change.
    static func expectRejected(
        _ updates: [(String, String?)], on profile: ProfileID, in world: inout IdentityWorld, naming field: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let before = world.state
        do throws(GatehouseError) {
            try world.setAttributes(profile, updates)
            Issue.record("expected \(field) to be rejected", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == .badRequest, sourceLocation: sourceLocation)
            #expect(error.message.hasPrefix("\(field): "), "\(error.message)", sourceLocation: sourceLocation)
        }
        #expect(world.state == before, sourceLocation: sourceLocation)
    }

    @Test func keyOf40CharactersIsAcceptedAnd41Rejected() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        try world.setAttributes(id, [(Self.key(40), "v")])
        #expect(world.profile(id).attributeValues[Self.key(40)] == "v")
        Self.expectRejected([(Self.key(41), "v")], on: id, in: &world, naming: "attributes.\(Self.key(41))")
    }

    @Test func emptyKeyIsRejected() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        Self.expectRejected([("", "v")], on: id, in: &world, naming: "attributes.")
    }

    @Test func valueOf500CharactersIsAcceptedAnd501Rejected() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        try world.setAttributes(id, [("bio", Self.key(500, "v"))])
        #expect(world.profile(id).attributeValues["bio"]?.count == 500)
        Self.expectRejected([("ok", "fine"), ("bio", Self.key(501, "v"))], on: id, in: &world, naming: "attributes.bio")
    }

    @Test func fiftyKeysAreAcceptedAndTheFiftyFirstRejected() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        try world.setAttributes(id, (1...50).map { ("k\($0)", "v") })
        #expect(world.profile(id).attributeValues.count == 50)
        Self.expectRejected([("k51", "v")], on: id, in: &world, naming: "attributes.k51")
        // Deleting one in the same call makes room.
        try world.setAttributes(id, [("k1", nil), ("k51", "v")])
        #expect(world.profile(id).attributeValues.count == 50)
    }

    @Test func nullDeletesTheKey() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        try world.setAttributes(id, [("theme", "dark"), ("lang", "de")])
        try world.setAttributes(id, [("theme", nil)])
        #expect(world.profile(id).attributeValues == ["lang": "de"])
    }

    @Test func reservedDollarKeysAreAllowed() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        try world.setAttributes(id, [("$email", "a@example.com"), ("$displayName", "A")])
        #expect(world.profile(id).attributeValues["$email"] == "a@example.com")
    }

    @Test func atMost100UpdatesInOneCall() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        let hundred = (0..<100).map { ("k\($0 % 50)", "v\($0)") }
        try world.setAttributes(id, hundred)
        #expect(world.profile(id).attributeValues.count == 50)
        Self.expectRejected(hundred + [("k0", "x")], on: id, in: &world, naming: "attributes")
    }

    @Test func emptyUpdateListChangesNothing() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        let before = world.state
        #expect(try world.setAttributes(id, []).batch.changes.isEmpty)
        #expect(world.state == before)
    }

    @Test func aliasIdUpdatesItsProfile() throws {
        var world = IdentityWorld(login: .alias)
        let alice = try world.create("alice").profileID
        let anonymous = try world.create().profileID
        try world.identify(anonymous, "alice")
        let decision = try world.setAttributes(anonymous, [("plan", "gold")])
        #expect(decision.batch.changes == [.attributesUpdated(alice, [.init(key: "plan", value: "gold")])])
        #expect(world.profile(alice).attributeValues == ["plan": "gold"])
    }
}

// MARK: profile.delete

@Suite("profile.delete frees the customer user id and the tokens")
struct ProfileDeletion {
    @Test func deletedProfilesCustomerUserIDAndTokenCanBeTakenAgain() throws {
        var world = IdentityWorld()
        let alice = try world.create("alice", token: fixedToken(1)).profileID
        let decision = try world.delete(alice)
        #expect(decision.batch.changes == [.profileDeleted(alice)])
        #expect(world.state.profiles.count == 0)
        #expect(rejectionCode { () throws(GatehouseError) in try world.state.resolveProfile(alice) } == .notFound)
        let again = try world.create("alice", token: fixedToken(1))
        #expect(again.created && again.profileID != alice)
    }

    @Test func aliasesAndMergedTokensGoWithTheProfile() throws {
        var world = IdentityWorld(login: .alias)
        let alice = try world.create("alice").profileID
        let anonymous = try world.create(token: fixedToken(2)).profileID
        try world.identify(anonymous, "alice")
        let decision = try world.delete(anonymous)
        #expect(decision.profileID == alice)
        #expect(world.state.profiles.profile(anonymous) == nil)
        #expect(world.state.profiles.profile(token: fixedToken(2)) == nil)
        #expect(try world.create(token: fixedToken(2)).created)
    }

    @Test func unknownProfileIsNotFound() {
        var world = IdentityWorld()
        let before = world.state
        #expect(rejectionCode { () throws(GatehouseError) in try world.delete(world.unknownID()) } == .notFound)
        #expect(world.state == before)
    }
}

// MARK: Cursors and the sequence

@Suite("Identity changes move the profile's cursor; attributes do not")
struct IdentityCursors {
    @Test func newProfileTakesTheBatchsSequenceAsCursor() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        #expect(world.profile(id).cursor == world.state.sequence)
    }

    @Test func takingACustomerUserIDMovesTheCursor() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        try world.create()
        try world.identify(id, "alice")
        #expect(world.profile(id).cursor == world.state.sequence)
    }

    @Test func takingATokenMovesTheCursor() throws {
        var world = IdentityWorld()
        let id = try world.create("alice").profileID
        try world.create()
        try world.identify(id, "alice", token: fixedToken(1))
        #expect(world.profile(id).cursor == world.state.sequence)
    }

    @Test func mergeMovesTheTargetsCursor() throws {
        var world = IdentityWorld(login: .alias)
        let alice = try world.create("alice").profileID
        let anonymous = try world.create().profileID
        try world.identify(anonymous, "alice")
        #expect(world.profile(alice).cursor == world.state.sequence)
    }

    @Test func attributeUpdatesDoNotMoveTheCursor() throws {
        var world = IdentityWorld()
        let id = try world.create().profileID
        let cursor = world.profile(id).cursor
        try world.setAttributes(id, [("theme", "dark")])
        #expect(world.profile(id).cursor == cursor)
        #expect(world.state.sequence == cursor + 1)
        #expect(world.profile(id).lastSeenMs == world.nowMs - 1_000)
    }

    @Test func everyBatchAdvancesTheSequenceByOne() throws {
        var world = IdentityWorld(login: .alias)
        var sequence = world.state.sequence
        let alice = try world.create("alice").profileID
        #expect(world.state.sequence == sequence + 1)
        sequence = world.state.sequence
        let anonymous = try world.create().profileID
        sequence += 1
        try world.identify(anonymous, "alice", token: fixedToken(3))  // a merge and a token: one batch
        #expect(world.state.sequence == sequence + 1)
        try world.logout(alice)
        try world.setAttributes(alice, [("a", "b")])
        try world.delete(alice)
        #expect(world.state.sequence == sequence + 4)
    }

    @Test func aDecisionThatChangesNothingTakesNoNumber() throws {
        var world = IdentityWorld(login: .switch)
        try world.create("alice")
        let anonymous = try world.create().profileID
        let sequence = world.state.sequence
        try world.identify(anonymous, "alice")
        #expect(world.state.sequence == sequence)
    }
}
