/// A project's profiles with an index for every way to find one: by id, by the id of a profile
/// merged into it (alias), by customer user id, by app account token (its own, or the token of a
/// profile merged into it), and by install id (its own, or that of a profile merged into it).
///
/// The profiles lie densely in one ``ChunkedArray``, in no particular order; every index holds
/// positions in it (8 bytes an entry, the key read from the profile: its id, customer user id,
/// token or install id, or one of the aliases, merged tokens and merged install ids it lists), since a million profiles in
/// dictionaries keyed by each cost about 470 bytes a profile in buckets alone, and a dictionary is
/// copied whole by the first change after a snapshot's capture. Removing a profile moves the
/// last one into its place and re-points that one's entries.
public struct ProfileDirectory: Sendable {
    private(set) var profiles = ChunkedArray<Profile>()
    private var byID = HashedSlotIndex<ProfileIDSlotHashing>()
    /// Only profiles with a customer user id are indexed here.
    private var byCustomerUserID = SlotIndex<String?>()
    /// Each profile's own token.
    private var byToken = SlotIndex<AppAccountToken>()
    /// Merged-away ids: the profile that lists each among its `aliases` (the one it resolves to).
    private var byAlias = ListedKeyIndex<ProfileIDSlotHashing>()
    /// The tokens of merged-away profiles: the profile that lists each among its `mergedTokens`.
    private var byMergedToken = ListedKeyIndex<StandardSlotHashing<AppAccountToken>>()
    /// Only profiles created with an install id are indexed here. Install ids are chosen by
    /// clients, so they are hashed with SipHash (``SlotIndex``), not the cheap mix of the ids the
    /// server draws.
    private var byInstallID = SlotIndex<InstallID?>()
    /// The install ids of merged-away profiles: the profile that lists each among its
    /// `mergedInstallIDs`.
    private var byMergedInstallID = ListedKeyIndex<StandardSlotHashing<InstallID>>()

    public init() {}

    /// Rebuilds the indexes from stored profiles and the tokens of merged-away profiles; `nil`
    /// when two profiles share an id, a customer user id or a token, or an install id is held
    /// twice, as a profile's own or a merged one (damage: a directory never holds such). A merged
    /// token a profile holds as its own is ignored.
    public init?(profiles: [Profile], aliasTokens: [AppAccountToken: ProfileID]) {
        self.profiles = ChunkedArray(profiles)
        let identified = profiles.reduce(0) { $0 + ($1.customerUserID == nil ? 0 : 1) }
        // Sized once: a snapshot of a million profiles is not rehashed on the way in.
        byID.reserveCapacity(profiles.count, in: profiles, key: Self.id)
        byToken.reserveCapacity(profiles.count, in: profiles, key: Self.token)
        byCustomerUserID.reserveCapacity(identified, in: profiles, key: Self.customerUserID)
        for slot in profiles.indices {
            guard byID.insert(slot, in: profiles, key: Self.id), byToken.insert(slot, in: profiles, key: Self.token) else {
                return nil
            }
            if profiles[slot].customerUserID != nil {
                guard byCustomerUserID.insert(slot, in: profiles, key: Self.customerUserID) else { return nil }
            }
            if profiles[slot].installID != nil {
                guard byInstallID.insert(slot, in: profiles, key: Self.installID) else { return nil }
            }
            for alias in profiles[slot].aliases where aliasSlot(of: alias) == nil { byAlias.insert(alias, at: slot) }
        }
        // After every profile's own: a merged install id must not be one of them either.
        for slot in profiles.indices {
            for installID in profiles[slot].mergedInstallIDs {
                guard installIDSlot(of: installID) == nil else { return nil }
                byMergedInstallID.insert(installID, at: slot)
            }
        }
        // A token whose owner is gone resolved to no profile before; it is dropped.
        var owned: [Int: [AppAccountToken]] = [:]
        for (token, owner) in aliasTokens where byToken.position(of: token, in: profiles, key: Self.token) == nil {
            if let slot = slot(of: owner) { owned[slot, default: []].append(token) }
        }
        byMergedToken.reserveCapacity(owned.values.reduce(0) { $0 + $1.count })
        for (slot, tokens) in owned {
            self.profiles[slot].mergedTokens = tokens.sorted()
            for token in tokens { byMergedToken.insert(token, at: slot) }
        }
    }

    /// What the indexes read from a profile (functions, not key paths: a key path is applied
    /// through the runtime at every probe).
    private static func id(_ profile: Profile) -> ProfileID { profile.id }
    private static func token(_ profile: Profile) -> AppAccountToken { profile.token }
    private static func customerUserID(_ profile: Profile) -> String? { profile.customerUserID }
    private static func installID(_ profile: Profile) -> InstallID? { profile.installID }

    public var count: Int { profiles.count }

    /// Every profile, ordered by id (snapshots are deterministic).
    public var all: [Profile] { profiles.sorted { $0.id < $1.id } }

    /// The latest cursor of the profile whose own id is `id`.
    public func cursor(of id: ProfileID) -> UInt64? {
        slot(of: id).map { profiles[$0].cursors.latest }
    }

    /// The sequence number of the last change of anything a document of the profile whose own id
    /// is `id` shows, its attributes included: ``cursor(of:)`` or its attributes cursor,
    /// whichever is newer.
    public func documentCursor(of id: ProfileID) -> UInt64? {
        slot(of: id).map { profiles[$0].documentCursor }
    }

    /// ``cursor(of:)`` and ``documentCursor(of:)`` in one lookup, without copying the profile out
    /// (what the actor publishes for the connections' threads after each batch).
    public func cursors(of id: ProfileID) -> (sync: UInt64, document: UInt64)? {
        slot(of: id).map { (profiles[$0].cursors.latest, profiles[$0].documentCursor) }
    }

    /// Tokens of merged-away profiles and who they resolve to.
    public var aliasTokens: [AppAccountToken: ProfileID] {
        Dictionary(uniqueKeysWithValues: aliasTokensInOrder.lazy.map { ($0.token, $0.owner) })
    }

    /// ``aliasTokens`` in token order, as a snapshot stores them: gathered from the profiles
    /// that list them, with no dictionary made.
    public var aliasTokensInOrder: [(token: AppAccountToken, owner: ProfileID)] {
        var tokens: [(token: AppAccountToken, owner: ProfileID)] = []
        // Most projects have no merges: then no profile is read at all.
        guard byMergedToken.count > 0 else { return tokens }
        tokens.reserveCapacity(byMergedToken.count)
        for profile in profiles {
            for token in profile.mergedTokens { tokens.append((token, profile.id)) }
        }
        tokens.sort { $0.token < $1.token }
        return tokens
    }

    /// The id a profile id or alias stands for now, if any.
    public func canonicalID(_ id: ProfileID) -> ProfileID? {
        if slot(of: id) != nil { return id }
        return aliasSlot(of: id).map { profiles[$0].id }
    }

    /// Whether `id` is a profile's own id (not an alias, not deleted). Copies nothing.
    public func isProfile(_ id: ProfileID) -> Bool {
        slot(of: id) != nil
    }

    /// The profile behind an id or an alias.
    public func profile(_ id: ProfileID) -> Profile? {
        canonicalSlot(of: id).map { profiles[$0] }
    }

    /// The id of the profile behind an id or an alias: ``profile(_:)``'s id, without copying
    /// the profile out.
    public func resolvedID(_ id: ProfileID) -> ProfileID? {
        canonicalSlot(of: id).map { profiles[$0].id }
    }

    /// The customer user id of the profile behind an id or an alias (once for every event
    /// recorded).
    func customerUserID(of id: ProfileID) -> String? {
        canonicalSlot(of: id).flatMap { profiles[$0].customerUserID }
    }

    public func profile(customerUserID: String) -> Profile? {
        byCustomerUserID.position(of: customerUserID, in: profiles, key: Self.customerUserID).map { profiles[$0] }
    }

    /// The profile a token resolves to (its own, or merged into it).
    public func profile(token: AppAccountToken) -> Profile? {
        if let slot = byToken.position(of: token, in: profiles, key: Self.token) { return profiles[slot] }
        return mergedTokenSlot(of: token).map { profiles[$0] }
    }

    /// The profile an install id resolves to: the one created with it, or the one it was merged
    /// into.
    public func profile(installID: InstallID) -> Profile? {
        installIDSlot(of: installID).map { profiles[$0] }
    }

    /// The id of ``profile(installID:)``, without copying the profile out.
    public func resolvedID(installID: InstallID) -> ProfileID? {
        installIDSlot(of: installID).map { profiles[$0].id }
    }

    /// Asks for the id index's bucket of `id` (``Prefetch``): the first step of finding it
    /// ahead of its turn; ``prefetchProfile(_:)`` is the second.
    func prefetchIndex(of id: ProfileID) {
        byID.prefetchBucket(of: id)
    }

    /// Asks for the profile whose own id is most likely `id`.
    func prefetchProfile(_ id: ProfileID) {
        byID.prefetchElement(of: id, in: profiles)
    }

    private func slot(of id: ProfileID) -> Int? {
        byID.position(of: id, in: profiles, key: Self.id)
    }

    /// Where the profile behind an id or an alias lies.
    private func canonicalSlot(of id: ProfileID) -> Int? {
        slot(of: id) ?? aliasSlot(of: id)
    }

    /// Where the profile that `alias` was merged into lies.
    private func aliasSlot(of alias: ProfileID) -> Int? {
        byAlias.position(of: alias) { profiles[$0].aliases.contains(alias) }
    }

    /// Where the profile that the merged-away token `token` resolves to lies.
    private func mergedTokenSlot(of token: AppAccountToken) -> Int? {
        byMergedToken.position(of: token) { profiles[$0].mergedTokens.contains(token) }
    }

    /// Where the profile an install id resolves to lies (its own, or merged into it).
    private func installIDSlot(of installID: InstallID) -> Int? {
        if let slot = byInstallID.position(of: installID, in: profiles, key: Self.installID) { return slot }
        return byMergedInstallID.position(of: installID) { profiles[$0].mergedInstallIDs.contains(installID) }
    }

    // MARK: Changes (called by ProjectState.apply only; each keeps every index consistent)

    mutating func insert(_ profile: Profile) {
        precondition(canonicalID(profile.id) == nil, "profile id \(profile.id) reused")
        precondition(mergedTokenSlot(of: profile.token) == nil, "token \(profile.token) already held")
        precondition(profile.installID.map { installIDSlot(of: $0) == nil } ?? true, "install id already held")
        profiles.append(profile)
        let slot = profiles.count - 1
        let newID = byID.insert(slot, in: profiles, key: Self.id)
        precondition(newID, "profile id \(profile.id) reused")
        let newToken = byToken.insert(slot, in: profiles, key: Self.token)
        precondition(newToken, "token \(profile.token) already held")
        if profile.customerUserID != nil {
            let newCustomerUserID = byCustomerUserID.insert(slot, in: profiles, key: Self.customerUserID)
            precondition(newCustomerUserID, "customer user id already held")
        }
        if profile.installID != nil {
            let newInstallID = byInstallID.insert(slot, in: profiles, key: Self.installID)
            precondition(newInstallID, "install id already held")
        }
        for installID in profile.mergedInstallIDs {
            precondition(installIDSlot(of: installID) == nil, "install id \(installID) already held")
            byMergedInstallID.insert(installID, at: slot)
        }
        for alias in profile.aliases {
            precondition(canonicalSlot(of: alias) == nil, "alias \(alias) already held")
            byAlias.insert(alias, at: slot)
        }
        for token in profile.mergedTokens {
            precondition(self.profile(token: token) == nil, "token \(token) already held")
            byMergedToken.insert(token, at: slot)
        }
    }

    /// Changes a profile in place (one lookup, no copy of it). The body must leave the customer
    /// user id, the token and the merged install ids as they are: the indexes find the profile by
    /// them.
    mutating func update(_ id: ProfileID, _ body: (inout Profile) -> Void) {
        guard let slot = slot(of: id) else { preconditionFailure("update of unknown profile \(id)") }
        body(&profiles[slot])
    }

    /// Marks `parts` of the profile whose own id is `id` changed at `sequence` (one lookup);
    /// answers whether there is one.
    mutating func mark(_ id: ProfileID, _ parts: SyncCursors.Parts, at sequence: UInt64) -> Bool {
        guard let slot = slot(of: id) else { return false }
        profiles[slot].cursors.mark(parts, at: sequence)
        return true
    }

    /// ``mark(_:_:at:)``, also answering the customer user id behind the id (or alias) for the
    /// event recorded with the change: one lookup where marking and reading took three.
    mutating func markReadingCustomerUserID(_ id: ProfileID, _ parts: SyncCursors.Parts, at sequence: UInt64)
        -> (marked: Bool, customerUserID: String?)
    {
        guard let slot = slot(of: id) else { return (false, customerUserID(of: id)) }
        profiles[slot].cursors.mark(parts, at: sequence)
        return (true, profiles[slot].customerUserID)
    }

    mutating func assignCustomerUserID(_ customerUserID: String, to id: ProfileID) {
        guard let slot = slot(of: id) else { preconditionFailure("update of unknown profile \(id)") }
        precondition(profiles[slot].customerUserID == nil, "a customer user id never changes once set")
        profiles[slot].customerUserID = customerUserID
        let assigned = byCustomerUserID.insert(slot, in: profiles, key: Self.customerUserID)
        precondition(assigned, "customer user id already held")
    }

    /// Gives `id` a new token; the old one is released (nothing resolves through it any more).
    /// A token that already resolved to `id` through a merge becomes its own.
    mutating func assignToken(_ token: AppAccountToken, to id: ProfileID) {
        guard let slot = slot(of: id) else { preconditionFailure("update of unknown profile \(id)") }
        guard profiles[slot].token != token else { return }
        if let owner = mergedTokenSlot(of: token) {
            precondition(owner == slot, "token \(token) held by another profile")
            byMergedToken.remove(token, at: slot)
            profiles[slot].mergedTokens.removeAll { $0 == token }
        }
        byToken.remove(slot, in: profiles, key: Self.token)
        profiles[slot].token = token
        let assigned = byToken.insert(slot, in: profiles, key: Self.token)
        precondition(assigned, "token \(token) held by another profile")
    }

    /// Folds `source` into `target`: the source's id, its aliases, its token and its install ids
    /// resolve to the target from now on; the target's attributes win over the source's, and the
    /// source's are taken in key order only while the target holds fewer than the most a profile
    /// may hold. Answers whether the target took any of them (its attributes changed).
    @discardableResult
    mutating func merge(_ source: ProfileID, into target: ProfileID) -> Bool {
        guard let slot = slot(of: source) else { preconditionFailure("merge of unknown profile \(source)") }
        let merged = profiles[slot]
        precondition(merged.customerUserID == nil, "only an anonymous profile is merged")
        unlistMerged(of: merged, at: slot)
        removeProfile(at: slot)
        guard let targetSlot = self.slot(of: target) else { preconditionFailure("merge into unknown profile \(target)") }
        let aliases = [source] + merged.aliases
        let tokens = [merged.token] + merged.mergedTokens
        let installIDs = (merged.installID.map { [$0] } ?? []) + merged.mergedInstallIDs
        for alias in aliases { byAlias.insert(alias, at: targetSlot) }
        for token in tokens { byMergedToken.insert(token, at: targetSlot) }
        for installID in installIDs { byMergedInstallID.insert(installID, at: targetSlot) }
        return Self.absorb(merged, aliases: aliases, tokens: tokens, installIDs: installIDs, into: &profiles[targetSlot])
    }

    /// What a merge gives the target profile: the merged-away ids, tokens and install ids, and
    /// the merged profile's attributes it lacks (with their times), while it holds fewer than the
    /// most a profile may hold; answers whether it took any attribute.
    private static func absorb(
        _ merged: Profile, aliases: [ProfileID], tokens: [AppAccountToken], installIDs: [InstallID], into profile: inout Profile
    ) -> Bool {
        profile.aliases.append(contentsOf: aliases)
        profile.mergedTokens = (profile.mergedTokens + tokens).sorted()
        if !installIDs.isEmpty { profile.mergedInstallIDs = (profile.mergedInstallIDs + installIDs).sorted() }
        var took = false
        for (key, attribute) in merged.attributes.sorted(by: { $0.key < $1.key }) where profile.attributes[key] == nil {
            guard profile.attributes.count < ProfileLimits.attributesPerProfileMax else { break }
            profile.attributes[key] = attribute
            took = true
        }
        return took
    }

    /// Removes a profile with its aliases; its customer user id, tokens and install ids become
    /// free.
    mutating func remove(_ id: ProfileID) {
        guard let slot = slot(of: id) else { preconditionFailure("delete of unknown profile \(id)") }
        unlistMerged(of: profiles[slot], at: slot)
        removeProfile(at: slot)
    }

    /// Takes the aliases, merged tokens and merged install ids `profile` (at `slot`) lists out of
    /// their indexes.
    private mutating func unlistMerged(of profile: Profile, at slot: Int) {
        for alias in profile.aliases { byAlias.remove(alias, at: slot) }
        for token in profile.mergedTokens { byMergedToken.remove(token, at: slot) }
        for installID in profile.mergedInstallIDs { byMergedInstallID.remove(installID, at: slot) }
    }

    /// Every profile counts as changed at `sequence` (a tenant restored over a live one).
    mutating func touchAll(at sequence: UInt64) {
        for slot in profiles.indices { profiles[slot].cursor = sequence }
    }

    /// Takes the profile at `slot` out of the array and its four indexes of its own keys; the
    /// last profile moves into the gap and its entries follow it.
    private mutating func removeProfile(at slot: Int) {
        byID.remove(slot, in: profiles, key: Self.id)
        byToken.remove(slot, in: profiles, key: Self.token)
        if profiles[slot].customerUserID != nil { byCustomerUserID.remove(slot, in: profiles, key: Self.customerUserID) }
        if profiles[slot].installID != nil { byInstallID.remove(slot, in: profiles, key: Self.installID) }
        let last = profiles.count - 1
        if slot != last {
            let moving = profiles[last]
            byID.move(last, to: slot, key: moving.id)
            byToken.move(last, to: slot, key: moving.token)
            if moving.customerUserID != nil { byCustomerUserID.move(last, to: slot, key: moving.customerUserID) }
            if moving.installID != nil { byInstallID.move(last, to: slot, key: moving.installID) }
            for alias in moving.aliases { byAlias.move(alias, from: last, to: slot) }
            for token in moving.mergedTokens { byMergedToken.move(token, from: last, to: slot) }
            for installID in moving.mergedInstallIDs { byMergedInstallID.move(installID, from: last, to: slot) }
            profiles.swapAt(slot, last)
        }
        profiles.removeLast()
    }
}

extension ProfileDirectory: Equatable {
    /// The same profiles, aliases, merged tokens and merged install ids (each profile lists its
    /// own), wherever each profile lies in the array.
    public static func == (lhs: ProfileDirectory, rhs: ProfileDirectory) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.profiles.allSatisfy { profile in rhs.slot(of: profile.id).map { rhs.profiles[$0] } == profile }
    }
}
