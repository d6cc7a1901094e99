import GatehouseBase
@testable import GatehouseCore
import Testing

// The directory's indexes (id, alias, customer user id, token, install id) stay consistent
// through every change, and rebuilding them from what a snapshot stores gives back the same
// directory.

private func id(_ n: UInt64) -> ProfileID { ProfileID(high: n, low: n &* 31, tag: 7) }

private func token(_ n: UInt64) -> AppAccountToken { AppAccountToken(high: 0x4000, low: n) }

private func installID(_ n: UInt64) -> InstallID { InstallID(high: 0x1D, low: n) }

private func profile(
    _ n: UInt64, customerUserID: String? = nil, installID: InstallID? = nil, attributes: [String: String] = [:]
) -> Profile {
    Profile(id: id(n), customerUserID: customerUserID, token: token(n), installID: installID,
            attributes: attributes.mapValues { ProfileAttribute(value: $0, updatedMs: 0) }, createdMs: 0, lastSeenMs: 0, cursor: 0)
}

private func rebuilt(_ directory: ProfileDirectory) -> ProfileDirectory? {
    ProfileDirectory(profiles: directory.all, aliasTokens: directory.aliasTokens)
}

@Suite("The profile directory keeps every index consistent")
struct ProfileDirectoryIndexes {
    @Test func insertIndexesIdCustomerUserIDAndToken() {
        var directory = ProfileDirectory()
        directory.insert(profile(1, customerUserID: "alice"))
        directory.insert(profile(2))
        #expect(directory.count == 2)
        #expect(directory.profile(id(1))?.customerUserID == "alice")
        #expect(directory.profile(customerUserID: "alice")?.id == id(1))
        #expect(directory.profile(token: token(2))?.id == id(2))
        #expect(directory.canonicalID(id(3)) == nil)
        #expect(directory.all.map(\.id) == [id(1), id(2)])
    }

    @Test func assignedCustomerUserIDFindsTheProfile() {
        var directory = ProfileDirectory()
        directory.insert(profile(1))
        directory.assignCustomerUserID("alice", to: id(1))
        #expect(directory.profile(customerUserID: "alice")?.id == id(1))
        #expect(directory.profile(id(1))?.customerUserID == "alice")
    }

    @Test func assignedTokenReplacesTheOldOne() {
        var directory = ProfileDirectory()
        directory.insert(profile(1))
        directory.assignToken(token(9), to: id(1))
        #expect(directory.profile(token: token(9))?.id == id(1))
        #expect(directory.profile(token: token(1)) == nil)
        #expect(directory.profile(id(1))?.token == token(9))
    }

    @Test func mergeMovesIdAliasesAndTokensToTheTarget() {
        var directory = ProfileDirectory()
        directory.insert(profile(1, customerUserID: "alice"))
        directory.insert(profile(2))
        directory.merge(id(2), into: id(1))
        #expect(directory.count == 1)
        #expect(directory.canonicalID(id(2)) == id(1))
        #expect(directory.profile(token: token(2))?.id == id(1))
        #expect(directory.profile(id(1))?.aliases == [id(2)])
        #expect(directory.aliasTokens == [token(2): id(1)])
    }

    @Test func chainedMergesResolveToTheLastTarget() {
        var directory = ProfileDirectory()
        directory.insert(profile(1))
        directory.insert(profile(2))
        directory.insert(profile(3, customerUserID: "carol"))
        directory.merge(id(1), into: id(2))
        directory.merge(id(2), into: id(3))
        #expect(directory.canonicalID(id(1)) == id(3))
        #expect(directory.canonicalID(id(2)) == id(3))
        #expect(directory.profile(token: token(1))?.id == id(3))
        #expect(directory.profile(token: token(2))?.id == id(3))
        #expect(Set(directory.profile(id(3))?.aliases ?? []) == [id(1), id(2)])
        #expect(directory.aliasTokens == [token(1): id(3), token(2): id(3)])
    }

    @Test func adoptingAMergedTokenMakesItTheProfilesOwn() {
        var directory = ProfileDirectory()
        directory.insert(profile(1, customerUserID: "alice"))
        directory.insert(profile(2))
        directory.merge(id(2), into: id(1))
        directory.assignToken(token(2), to: id(1))
        #expect(directory.profile(id(1))?.token == token(2))
        #expect(directory.profile(token: token(2))?.id == id(1))
        #expect(directory.profile(token: token(1)) == nil)
        #expect(directory.aliasTokens.isEmpty)
    }

    @Test func mergeKeepsTheTargetsAttributesAndStaysWithinTheLimit() {
        var directory = ProfileDirectory()
        let targetAttributes = Dictionary(uniqueKeysWithValues: (1...49).map { ("t\($0)", "target") })
        directory.insert(profile(1, customerUserID: "alice", attributes: targetAttributes.merging(["shared": "target"]) { $1 }))
        directory.insert(profile(2, attributes: ["shared": "source", "a": "1", "b": "2"]))
        directory.merge(id(2), into: id(1))
        let attributes = directory.profile(id(1))?.attributeValues ?? [:]
        #expect(attributes.count == ProfileLimits.attributesPerProfileMax)
        #expect(attributes["shared"] == "target")
        #expect(attributes["a"] == nil && attributes["b"] == nil)
    }

    @Test func mergeTakesTheSourcesAttributesTheTargetLacks() {
        var directory = ProfileDirectory()
        directory.insert(profile(1, customerUserID: "alice", attributes: ["shared": "target"]))
        directory.insert(profile(2, attributes: ["shared": "source", "theme": "dark"]))
        directory.merge(id(2), into: id(1))
        #expect(directory.profile(id(1))?.attributeValues == ["shared": "target", "theme": "dark"])
    }

    @Test func removeFreesCustomerUserIDTokensAndAliases() {
        var directory = ProfileDirectory()
        directory.insert(profile(1, customerUserID: "alice"))
        directory.insert(profile(2))
        directory.merge(id(2), into: id(1))
        directory.remove(id(1))
        #expect(directory.count == 0)
        #expect(directory.profile(customerUserID: "alice") == nil)
        #expect(directory.profile(token: token(1)) == nil && directory.profile(token: token(2)) == nil)
        #expect(directory.canonicalID(id(2)) == nil)
        #expect(directory.aliasTokens.isEmpty)
        #expect(directory == ProfileDirectory())
    }
}

@Suite("Install ids resolve to the profile created with them, through merges, until it is deleted")
struct ProfileDirectoryInstallIDs {
    @Test func aProfilesOwnInstallIDFindsIt() {
        var directory = ProfileDirectory()
        directory.insert(profile(1, installID: installID(1)))
        directory.insert(profile(2))
        #expect(directory.profile(installID: installID(1))?.id == id(1))
        #expect(directory.resolvedID(installID: installID(1)) == id(1))
        #expect(directory.profile(installID: installID(2)) == nil)
        #expect(directory.resolvedID(installID: installID(2)) == nil)
    }

    @Test func aMergedProfilesInstallIDsResolveToTheTarget() {
        var directory = ProfileDirectory()
        directory.insert(profile(1, installID: installID(1)))
        directory.insert(profile(2, installID: installID(2)))
        directory.insert(profile(3, customerUserID: "carol", installID: installID(3)))
        directory.merge(id(1), into: id(2))
        directory.merge(id(2), into: id(3))
        for n: UInt64 in 1...3 { #expect(directory.resolvedID(installID: installID(n)) == id(3)) }
        let carol = directory.profile(id(3))
        #expect(carol?.installID == installID(3), "the target keeps its own")
        #expect(carol?.mergedInstallIDs == [installID(1), installID(2)])
        #expect(rebuilt(directory) == directory)
    }

    @Test func aDeletedProfilesInstallIDsResolveNoLongerAndMayBeTakenAgain() {
        var directory = ProfileDirectory()
        directory.insert(profile(1, installID: installID(1)))
        directory.insert(profile(2, customerUserID: "bob", installID: installID(2)))
        directory.merge(id(1), into: id(2))
        directory.remove(id(2))
        #expect(directory.profile(installID: installID(1)) == nil && directory.profile(installID: installID(2)) == nil)
        #expect(directory == ProfileDirectory())
        directory.insert(profile(3, installID: installID(1)))
        #expect(directory.resolvedID(installID: installID(1)) == id(3))
    }

    @Test func theLastProfileMovedIntoAGapIsFoundByItsInstallIDs() {
        var directory = ProfileDirectory()
        directory.insert(profile(1))
        directory.insert(profile(2, installID: installID(2)))
        directory.insert(profile(3, customerUserID: "carol", installID: installID(3)))
        directory.merge(id(2), into: id(3))
        directory.remove(id(1))
        #expect(directory.resolvedID(installID: installID(3)) == id(3))
        #expect(directory.resolvedID(installID: installID(2)) == id(3))
        #expect(rebuilt(directory) == directory)
    }

    @Test func anInstallIDHeldTwiceIsRefusedOnRebuild() {
        let own = profile(1, installID: installID(7))
        #expect(ProfileDirectory(profiles: [own, profile(2, installID: installID(8))], aliasTokens: [:]) != nil)
        #expect(ProfileDirectory(profiles: [own, profile(2, installID: installID(7))], aliasTokens: [:]) == nil)
        var absorbing = profile(2, customerUserID: "bob")
        absorbing.mergedInstallIDs = [installID(7)]
        #expect(ProfileDirectory(profiles: [own, absorbing], aliasTokens: [:]) == nil)
        #expect(ProfileDirectory(profiles: [absorbing, own], aliasTokens: [:]) == nil)
        var twice = profile(3)
        twice.mergedInstallIDs = [installID(9), installID(9)]
        #expect(ProfileDirectory(profiles: [twice], aliasTokens: [:]) == nil)
    }
}

@Suite("A directory rebuilt from its profiles and alias tokens equals the original")
struct ProfileDirectoryRebuild {
    @Test func emptyDirectory() {
        #expect(rebuilt(ProfileDirectory()) == ProfileDirectory())
    }

    @Test func afterInsertsAndAssignments() {
        var directory = ProfileDirectory()
        directory.insert(profile(1))
        directory.insert(profile(2, customerUserID: "bob"))
        directory.assignCustomerUserID("alice", to: id(1))
        directory.assignToken(token(7), to: id(2))
        #expect(rebuilt(directory) == directory)
    }

    @Test func afterMergesInAnyTokenOrder() {
        var directory = ProfileDirectory()
        directory.insert(profile(5, customerUserID: "alice"))
        // Merged tokens arrive in descending order; the rebuild sees them in no particular order.
        for n: UInt64 in [4, 3, 2, 1] { directory.insert(profile(n)) }
        directory.merge(id(1), into: id(2))
        directory.merge(id(4), into: id(5))
        directory.merge(id(2), into: id(5))
        directory.merge(id(3), into: id(5))
        #expect(rebuilt(directory) == directory)
    }

    @Test func afterAMergedTokenIsAdopted() {
        var directory = ProfileDirectory()
        directory.insert(profile(1, customerUserID: "alice"))
        directory.insert(profile(2))
        directory.merge(id(2), into: id(1))
        directory.assignToken(token(2), to: id(1))
        #expect(rebuilt(directory) == directory)
    }

    @Test func afterARemove() {
        var directory = ProfileDirectory()
        directory.insert(profile(1, customerUserID: "alice"))
        directory.insert(profile(2))
        directory.insert(profile(3, customerUserID: "carol"))
        directory.insert(profile(4))
        directory.merge(id(2), into: id(1))
        directory.merge(id(4), into: id(3))
        directory.remove(id(1))
        #expect(rebuilt(directory) == directory)
    }
}

@Suite("Removing a profile moves the last one into its place, and every index follows it")
struct ProfileDirectoryRemoval {
    /// Profiles 1…n, every other one with a customer user id.
    static func directory(_ n: UInt64) -> ProfileDirectory {
        var directory = ProfileDirectory()
        for k in 1...n { directory.insert(profile(k, customerUserID: k.isMultiple(of: 2) ? "user-\(k)" : nil)) }
        return directory
    }

    static func expectFindable(_ directory: ProfileDirectory, _ kept: [UInt64], gone: [UInt64]) {
        #expect(directory.count == kept.count)
        for k in kept {
            #expect(directory.profile(id(k))?.id == id(k))
            #expect(directory.profile(token: token(k))?.id == id(k))
            if k.isMultiple(of: 2) { #expect(directory.profile(customerUserID: "user-\(k)")?.id == id(k)) }
        }
        for k in gone {
            #expect(!directory.isProfile(id(k)))
            #expect(directory.profile(token: token(k)) == nil)
            #expect(directory.profile(customerUserID: "user-\(k)") == nil)
        }
        #expect(directory.all.map(\.id) == kept.map { id($0) }.sorted())
    }

    @Test func removingTheFirstTheLastAndOneInBetween() {
        var directory = Self.directory(6)
        directory.remove(id(1))
        Self.expectFindable(directory, [2, 3, 4, 5, 6], gone: [1])
        directory.remove(id(6))
        Self.expectFindable(directory, [2, 3, 4, 5], gone: [1, 6])
        directory.remove(id(4))
        Self.expectFindable(directory, [2, 3, 5], gone: [1, 4, 6])
        directory.insert(profile(4, customerUserID: "user-4"))
        Self.expectFindable(directory, [2, 3, 4, 5], gone: [1, 6])
    }

    @Test func aMergeMovesTheLastProfileToo() {
        var directory = Self.directory(5)
        directory.merge(id(1), into: id(5))
        #expect(directory.profile(id(1))?.id == id(5))
        #expect(directory.profile(token: token(1))?.id == id(5))
        #expect(directory.profile(id(5))?.aliases == [id(1)])
        directory.assignToken(token(9), to: id(5))
        directory.assignCustomerUserID("user-3", to: id(3))
        #expect(directory.profile(token: token(9))?.id == id(5))
        #expect(directory.profile(customerUserID: "user-3")?.id == id(3))
        #expect(rebuilt(directory) == directory)
    }

    @Test func removingEveryProfileInAnyOrderLeavesAnEmptyDirectory() {
        var directory = Self.directory(200)
        var left = Array(1...UInt64(200))
        var generator = SystemRandomNumberGenerator()
        while let k = left.randomElement(using: &generator) {
            directory.remove(id(k))
            left.removeAll { $0 == k }
            if left.count.isMultiple(of: 50) { Self.expectFindable(directory, left, gone: []) }
        }
        #expect(directory == ProfileDirectory())
    }

    @Test func profilesInsertedInAnotherOrderMakeAnEqualDirectory() {
        var forward = ProfileDirectory()
        var backward = ProfileDirectory()
        for k: UInt64 in 1...20 { forward.insert(profile(k)) }
        for k: UInt64 in (1...20).reversed() { backward.insert(profile(k)) }
        #expect(forward == backward)
        backward.update(id(7)) { $0.lastSeenMs = 1 }
        #expect(forward != backward)
    }
}

@Suite("A directory is not rebuilt from profiles that share a key")
struct ProfileDirectoryDamage {
    @Test func sharedIDCustomerUserIDOrTokenIsRefused() {
        let alice = profile(1, customerUserID: "alice")
        #expect(ProfileDirectory(profiles: [alice, profile(2)], aliasTokens: [:]) != nil)
        #expect(ProfileDirectory(profiles: [alice, alice], aliasTokens: [:]) == nil)
        #expect(ProfileDirectory(profiles: [alice, profile(2, customerUserID: "alice")], aliasTokens: [:]) == nil)
        let sameToken = Profile(id: id(2), customerUserID: nil, token: token(1), createdMs: 0, lastSeenMs: 0, cursor: 0)
        #expect(ProfileDirectory(profiles: [alice, sameToken], aliasTokens: [:]) == nil)
    }
}

@Suite("Aliases, merged tokens and install ids resolve through the profiles that list them")
struct ProfileDirectoryMergedKeys {
    /// What the directory answered when aliases and merged tokens were dictionaries: each alias
    /// and each merged token names the profile it resolves to.
    private struct Model {
        var profiles: [ProfileID: AppAccountToken] = [:]
        var anonymous: Set<ProfileID> = []
        var aliases: [ProfileID: ProfileID] = [:]
        var mergedTokens: [AppAccountToken: ProfileID] = [:]
        /// Every install id that resolves (own or merged), to the profile it resolves to.
        var installIDs: [InstallID: ProfileID] = [:]
        /// Install ids of deleted profiles: free, and taken again now and then.
        var freedInstallIDs: [InstallID] = []
        var gone: [ProfileID] = []

        mutating func merge(_ source: ProfileID, into target: ProfileID) {
            for (alias, owner) in aliases where owner == source { aliases[alias] = target }
            aliases[source] = target
            for (token, owner) in mergedTokens where owner == source { mergedTokens[token] = target }
            mergedTokens[profiles.removeValue(forKey: source)!] = target
            for (installID, owner) in installIDs where owner == source { installIDs[installID] = target }
            anonymous.remove(source)
        }

        mutating func remove(_ id: ProfileID) {
            aliases = aliases.filter { $0.value != id }
            mergedTokens = mergedTokens.filter { $0.value != id }
            freedInstallIDs += installIDs.filter { $0.value == id }.keys.sorted()
            installIDs = installIDs.filter { $0.value != id }
            profiles[id] = nil
            anonymous.remove(id)
            gone.append(id)
        }

        func expectSame(as directory: ProfileDirectory) {
            #expect(directory.count == profiles.count)
            for (id, own) in profiles {
                #expect(directory.canonicalID(id) == id)
                #expect(directory.profile(token: own)?.id == id)
            }
            for (alias, owner) in aliases {
                #expect(directory.canonicalID(alias) == owner)
                #expect(directory.profile(alias)?.id == owner)
            }
            for (token, owner) in mergedTokens { #expect(directory.profile(token: token)?.id == owner) }
            for (installID, owner) in installIDs { #expect(directory.resolvedID(installID: installID) == owner) }
            for installID in freedInstallIDs where installIDs[installID] == nil {
                #expect(directory.profile(installID: installID) == nil)
            }
            for id in gone where aliases[id] == nil { #expect(directory.canonicalID(id) == nil) }
            #expect(directory.aliasTokens == mergedTokens)
        }
    }

    @Test(arguments: [1, 2, 3])
    func randomMergesRemovalsAndAdoptionsMatchTheDictionaries(seed: UInt64) throws {
        var random = RandomSourceGenerator(SeededRandomSource(seed: seed))
        var directory = ProfileDirectory()
        var model = Model()
        var next: UInt64 = 1
        var captured: [(ProfileDirectory, Model)] = []
        for step in 0..<600 {
            let roll = Int.random(in: 0..<10, using: &random)
            let ids = model.profiles.keys.sorted()
            if ids.count < 4 || roll < 4 {
                // A new profile, anonymous two times in three; with an install id half the time,
                // now and then one a deleted profile had.
                let anonymous = Int.random(in: 0..<3, using: &random) > 0
                var installed: InstallID?
                switch Int.random(in: 0..<4, using: &random) {
                case 0: installed = model.freedInstallIDs.popLast() ?? installID(next)
                case 1: installed = installID(next)
                default: installed = nil
                }
                let new = profile(next, customerUserID: anonymous ? nil : "user-\(next)", installID: installed)
                directory.insert(new)
                model.profiles[new.id] = new.token
                if let installed { model.installIDs[installed] = new.id }
                if anonymous { model.anonymous.insert(new.id) }
                next += 1
            } else if roll < 8, let source = model.anonymous.sorted().randomElement(using: &random) {
                // An anonymous profile merged into another (itself maybe holding merged ones).
                let target = try #require(ids.filter { $0 != source }.randomElement(using: &random))
                directory.merge(source, into: target)
                model.merge(source, into: target)
            } else if roll < 9 {
                let gone = try #require(ids.randomElement(using: &random))
                directory.remove(gone)
                model.remove(gone)
            } else if let (token, owner) = model.mergedTokens.sorted(by: { $0.key < $1.key }).randomElement(using: &random) {
                // The profile a merged token resolves to takes it as its own; its old token is freed.
                directory.assignToken(token, to: owner)
                model.mergedTokens[token] = nil
                model.profiles[owner] = token
            }
            if step.isMultiple(of: 50) {
                model.expectSame(as: directory)
                #expect(rebuilt(directory) == directory)
                captured.append((directory, model))
            }
        }
        model.expectSame(as: directory)
        #expect(rebuilt(directory) == directory)
        // Copies taken along the way (as a snapshot's capture takes one) still answer as then.
        for (copy, then) in captured { then.expectSame(as: copy) }
    }
}
