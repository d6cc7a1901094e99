import GatehouseBase
@testable import GatehouseCore
import Testing

// Seeded random runs of create / identify / logout / attributes / delete over a small pool of
// customer user ids, tokens and install ids, so the rules collide often. After every step the directory's
// invariants must hold; at the end, replaying every batch from an empty state gives the same
// state (a rule's decision carries everything replay needs).

/// What the run has seen, to check the state against.
private struct RunModel {
    var created = 0
    var deleted = 0
    var merged = 0
    /// The customer user id each profile first had: it never changes while the profile lives.
    var customerUserIDs: [ProfileID: String] = [:]
    /// Merged-away id → the profile it was merged into.
    var mergedInto: [ProfileID: ProfileID] = [:]
    var deletedIDs: Set<ProfileID> = []
    /// Every id ever made, the pool identify and friends draw from.
    var ids: [ProfileID] = []
    /// Each install id → the profile last created with it.
    var installedProfiles: [InstallID: ProfileID] = [:]

    mutating func record(_ batch: ProjectState.ChangeBatch) {
        for change in batch.changes {
            switch change {
            case .profileCreated(let profile):
                created += 1
                ids.append(profile.id)
                if let installID = profile.installID { installedProfiles[installID] = profile.id }
            case .profileMerged(let source, let target):
                merged += 1
                mergedInto[source] = target
            case .profileDeleted(let id):
                deleted += 1
                deletedIDs.insert(id)
            default:
                break
            }
        }
    }

    /// Where a merged id should resolve: along its merges, to a live profile, or nowhere.
    func expectedCanonical(_ id: ProfileID) -> ProfileID? {
        var current = id
        while let next = mergedInto[current] { current = next }
        return deletedIDs.contains(current) ? nil : current
    }
}

/// One random step's inputs, drawn from small pools.
private struct StepDraws {
    var generator: RandomSourceGenerator
    static let customerUserIDs = ["alice", "bob", "carol", "dave", "erin", " alice ", "frank", "grace"]
    static let tokens = (1...8).map { fixedToken(UInt64($0)) }
    static let installIDs = (1...16).map { InstallID(high: 0xD1CE, low: UInt64($0)) }

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &generator) < percent }

    mutating func customerUserID() -> String {
        chance(3) ? String(repeating: "x", count: 256) : Self.customerUserIDs.randomElement(using: &generator)!
    }

    mutating func token() -> AppAccountToken? { chance(50) ? nil : Self.tokens.randomElement(using: &generator)! }

    mutating func installID() -> InstallID? { chance(70) ? nil : Self.installIDs.randomElement(using: &generator)! }

    /// A presented profile: mostly by id, now and then by an install id, which the project
    /// resolves first (the runtime does so in the same actor visit).
    mutating func profileID(_ model: RunModel, unknown: ProfileID, in state: ProjectState) throws(GatehouseError) -> ProfileID {
        if chance(10) { return try state.resolveProfileID(installID: Self.installIDs.randomElement(using: &generator)!) }
        guard !model.ids.isEmpty, !chance(3) else { return unknown }
        // Mostly recent profiles, so merges and switches keep happening.
        let recent = model.ids.suffix(12)
        return recent.randomElement(using: &generator)!
    }

    mutating func attributeUpdates() -> [ProjectState.AttributeUpdate] {
        (0..<Int.random(in: 0...4, using: &generator)).map { _ in
            let key = chance(2) ? String(repeating: "k", count: 41) : "k\(Int.random(in: 0..<60, using: &generator))"
            return ProjectState.AttributeUpdate(key: key, value: chance(25) ? nil : "v")
        }
    }
}

@Suite("Random identity sequences keep the directory's invariants and replay exactly")
struct IdentityProperties {
    static let steps = 2_000
    static let expectedCodes: Set<ErrorCode> = [.invalidCustomerUserID, .notFound, .tokenInUse, .profileAnonymous, .badRequest]

    @Test(arguments: [(UInt64(1), LoginMode.alias), (2, .switch), (3, .alias), (4, .switch), (5, .alias)])
    func randomSequencesKeepInvariants(seed: UInt64, login: LoginMode) {
        var world = IdentityWorld(login: login, seed: seed)
        var model = RunModel()
        var draws = StepDraws(generator: RandomSourceGenerator(SeededRandomSource(seed: seed &+ 1_000)))
        var codes: Set<ErrorCode> = []
        var mergedInstallIDsSeen = false
        for step in 0..<Self.steps {
            let problems = Self.step(&world, &draws, &model, &codes) + Self.invariantProblems(world.state, model)
            // The first broken step says what broke, briefly; later steps would only repeat it.
            guard problems.isEmpty else {
                Issue.record("step \(step): \(problems.joined(separator: "; "))")
                return
            }
            for profile in world.state.profiles.all {
                if model.customerUserIDs[profile.id] == nil { model.customerUserIDs[profile.id] = profile.customerUserID }
                if !profile.mergedInstallIDs.isEmpty { mergedInstallIDsSeen = true }
            }
        }
        // The run reached every rejection and enough of every change to mean something.
        #expect(codes == Self.expectedCodes)
        #expect(model.created > 100 && model.deleted > 20)
        #expect(login == .switch ? model.merged == 0 : model.merged > 20)
        #expect(mergedInstallIDsSeen == (login == .alias), "install ids were merged along with their profiles")
        #expect(model.installedProfiles.count > StepDraws.installIDs.count / 2)
        var replayed = IdentityWorld.emptyState
        for batch in world.batches { replayed.apply(batch) }
        #expect(replayed == world.state, "replaying the batches gave another state")
    }

    /// One random operation, decided and applied like the actor does; what it got wrong.
    private static func step(
        _ world: inout IdentityWorld, _ draws: inout StepDraws, _ model: inout RunModel, _ codes: inout Set<ErrorCode>
    ) -> [String] {
        var problems: [String] = []
        let sequence = world.state.sequence
        let batchCount = world.batches.count
        do throws(GatehouseError) {
            let decision = try decide(&world, &draws, model)
            // The answer names a live profile, unless it was the one deleted.
            let deleted = decision.batch.changes == [.profileDeleted(decision.profileID)]
            if !deleted, world.state.profiles.canonicalID(decision.profileID) != decision.profileID {
                problems.append("the answer names a profile that is not live")
            }
        } catch {
            if !expectedCodes.contains(error.code) { problems.append("unexpected \(error)") }
            codes.insert(error.code)
        }
        let applied = world.batches.count > batchCount
        if world.state.sequence != sequence + (applied ? 1 : 0) { problems.append("the sequence moved wrongly") }
        if applied, let batch = world.batches.last { model.record(batch) }
        return problems
    }

    private static func decide(_ world: inout IdentityWorld, _ draws: inout StepDraws, _ model: RunModel)
        throws(GatehouseError) -> ProfileDecision
    {
        let unknown = world.unknownID()
        let state = world.state
        switch Int.random(in: 0..<100, using: &draws.generator) {
        case 0..<20:
            return try world.create(draws.chance(50) ? nil : draws.customerUserID(), token: draws.token(),
                                    installID: draws.installID())
        case 20..<60:
            return try world.identify(draws.profileID(model, unknown: unknown, in: state), draws.customerUserID(), token: draws.token())
        case 60..<70:
            return try world.logout(draws.profileID(model, unknown: unknown, in: state))
        case 70..<90:
            return try world.commit(world.state.updateAttributes(
                profile: draws.profileID(model, unknown: unknown, in: state), draws.attributeUpdates(), nowMs: world.nowMs))
        default:
            return try world.delete(draws.profileID(model, unknown: unknown, in: state))
        }
    }

    /// Every invariant of the directory that does not hold, in a few words each.
    private static func invariantProblems(_ state: ProjectState, _ model: RunModel) -> [String] {
        let directory = state.profiles
        let live = directory.all
        var problems: [String] = []
        if live.count != model.created - model.deleted - model.merged { problems.append("a profile was lost or duplicated") }
        var seenCustomerUserIDs: Set<String> = []
        var seenTokens: Set<AppAccountToken> = []
        var seenInstallIDs: Set<InstallID> = []
        for profile in live {
            for installID in (profile.installID.map { [$0] } ?? []) + profile.mergedInstallIDs {
                if !seenInstallIDs.insert(installID).inserted { problems.append("\(installID) is held twice") }
                if directory.resolvedID(installID: installID) != profile.id { problems.append("\(installID) resolves elsewhere") }
            }
            if directory.canonicalID(profile.id) != profile.id { problems.append("\(profile.id) does not resolve to itself") }
            if directory.profile(token: profile.token)?.id != profile.id { problems.append("\(profile.id)'s token resolves elsewhere") }
            if !seenTokens.insert(profile.token).inserted { problems.append("two profiles hold one token") }
            if let customerUserID = profile.customerUserID {
                if !seenCustomerUserIDs.insert(customerUserID).inserted { problems.append("two profiles hold \(customerUserID)") }
                if directory.profile(customerUserID: customerUserID)?.id != profile.id {
                    problems.append("\(customerUserID) resolves elsewhere")
                }
            }
            if let first = model.customerUserIDs[profile.id], profile.customerUserID != first {
                problems.append("\(profile.id)'s customer user id changed")
            }
            if profile.aliases.contains(where: { directory.canonicalID($0) != profile.id }) {
                problems.append("an alias of \(profile.id) resolves elsewhere")
            }
            if profile.attributes.count > ProfileLimits.attributesPerProfileMax { problems.append("over 50 attributes") }
        }
        for (token, owner) in directory.aliasTokens {
            if directory.profile(token: token)?.id != owner { problems.append("an alias token resolves elsewhere") }
            if !seenTokens.insert(token).inserted { problems.append("an alias token is also another profile's token") }
        }
        for merged in model.mergedInto.keys where directory.canonicalID(merged) != model.expectedCanonical(merged) {
            problems.append("merged \(merged) resolves wrongly")
        }
        // An install id follows its profile through merges, and resolves to nothing once that is
        // deleted, until a new profile is created with it.
        for (installID, created) in model.installedProfiles
        where directory.resolvedID(installID: installID) != model.expectedCanonical(created) {
            problems.append("\(installID) resolves wrongly")
        }
        if ProfileDirectory(profiles: live, aliasTokens: directory.aliasTokens) != directory {
            problems.append("the directory rebuilt from a snapshot's contents differs")
        }
        return problems
    }
}
