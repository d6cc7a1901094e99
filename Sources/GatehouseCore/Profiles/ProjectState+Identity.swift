public import GatehouseBase

// The identity rules of DESIGN.md, "Profiles and identity". Each rule reads the state and
// decides a batch of primitive changes; it never changes the state itself. The caller logs the
// batch and applies it (an empty batch: nothing to log), so replay never re-runs a rule.

extension ProjectState {
    /// What an identity rule decided, and what the answer reports.
    public struct ProfileDecision: Sendable, Equatable {
        /// The changes to log and apply; empty `changes`: nothing changes.
        public var batch: ChangeBatch
        /// The profile in use once `batch` is applied (for a delete: the profile deleted).
        public var profileID: ProfileID
        /// The batch makes a new profile (`profile.create`'s `created`; also true when identify
        /// or logout makes one).
        public var created: Bool
        /// `profile.identify`: the app now uses another profile than the one it presented.
        public var switched: Bool
        /// `profile.identify`: ids merged into the profile in use (none or one).
        public var mergedFrom: [ProfileID]

        public init(
            batch: ChangeBatch, profileID: ProfileID, created: Bool = false, switched: Bool = false,
            mergedFrom: [ProfileID] = []
        ) {
            self.batch = batch
            self.profileID = profileID
            self.created = created
            self.switched = switched
            self.mergedFrom = mergedFrom
        }
    }

    /// Trims spaces (U+0020 only) at either end; then 1–255 characters that do not begin as an
    /// install id does (`$RCAnonymousID:`), else `invalid_customer_user_id`.
    public static func normalizeCustomerUserID(_ raw: String) throws(GatehouseError) -> String {
        let trimmed = raw.trimmingSpaces()
        guard ProfileLimits.customerUserIDCharacters.contains(trimmed.count) else {
            throw GatehouseError(
                .invalidCustomerUserID, "a customer user id is 1–255 characters after trimming spaces at either end")
        }
        // Where an app user id may be either (a REST path), the two must never be confused.
        guard !InstallID.hasPrefix(trimmed) else {
            throw GatehouseError(.invalidCustomerUserID, "a customer user id may not begin with \(InstallID.prefix)")
        }
        return trimmed
    }

    /// A presented id (or alias) → the canonical profile. Unknown: `forbidden` when its tag is
    /// not this project's, else `not_found`.
    public func resolveProfile(_ id: ProfileID) throws(GatehouseError) -> Profile {
        if let profile = profiles.profile(id) { return profile }
        throw unknownProfile(id)
    }

    /// ``resolveProfile(_:)``'s id alone (the same answers, the same errors), for a rule that
    /// needs no more of the profile: the whole profile copied out is a retain and release of
    /// each of its strings and tables.
    public func resolveProfileID(_ id: ProfileID) throws(GatehouseError) -> ProfileID {
        if let canonical = profiles.resolvedID(id) { return canonical }
        throw unknownProfile(id)
    }

    /// A presented install id → the profile it resolves to (the one created with it, or the one
    /// it was merged into); unknown: `not_found` (an install id names no project).
    public func resolveProfile(installID: InstallID) throws(GatehouseError) -> Profile {
        if let profile = profiles.profile(installID: installID) { return profile }
        throw Self.unknownInstallID
    }

    /// ``resolveProfile(installID:)``'s id alone, without copying the profile out.
    public func resolveProfileID(installID: InstallID) throws(GatehouseError) -> ProfileID {
        if let id = profiles.resolvedID(installID: installID) { return id }
        throw Self.unknownInstallID
    }

    private static var unknownInstallID: GatehouseError { .notFound("a profile with that install id") }

    private func unknownProfile(_ id: ProfileID) -> GatehouseError {
        guard id.tag == profileTag else { return GatehouseError(.forbidden, "the profile belongs to another project") }
        return .notFound("profile \(id)")
    }

    /// Whether the profile owns a store purchase: such a profile keeps the token its purchases
    /// carry (identify rule 5).
    public func ownsPurchase(_ id: ProfileID) -> Bool {
        purchases.ownsPurchase(id)
    }

    // MARK: profile.create

    public func createProfile(
        customerUserID: String?, token: AppAccountToken?, installID: InstallID? = nil, nowMs: Int64, random: some RandomSource
    ) throws(GatehouseError) -> ProfileDecision {
        try createProfile(customerUserID: customerUserID, token: token, installID: installID, nowMs: nowMs, random: random) {
            ownsPurchase($0)
        }
    }

    /// `createProfile` with the purchase-ownership question passed in: the seam tests use to
    /// reach the branch of a profile that owns a purchase before purchases exist.
    ///
    /// The first that applies (docs/protocol.md, `profile.create`): a customer user id that
    /// exists answers its profile, whatever the install id; an install id that resolves answers
    /// its profile, which takes a given (unseen) customer user id as identify's rule 4 has it,
    /// if it is anonymous; otherwise a new profile is made, with the install id unless an
    /// identified profile already holds it. A given token is handled as identify's rule 5 by an
    /// existing profile, and must be new to the project for a new one.
    func createProfile(
        customerUserID raw: String?, token: AppAccountToken?, installID: InstallID? = nil, nowMs: Int64,
        random: some RandomSource, ownsPurchase: (ProfileID) -> Bool
    ) throws(GatehouseError) -> ProfileDecision {
        var customerUserID: String?
        if let raw { customerUserID = try Self.normalizeCustomerUserID(raw) }
        let installed = installID.flatMap { profiles.profile(installID: $0) }
        let existing = customerUserID.flatMap { profiles.profile(customerUserID: $0) }
            ?? installed.flatMap { $0.isAnonymous || customerUserID == nil ? $0 : nil }
        guard let existing else {
            try requireToken(token, heldOnlyBy: [])
            let profile = newProfile(customerUserID: customerUserID, token: token, installID: installed == nil ? installID : nil,
                                     nowMs: nowMs, random: random)
            return creating(profile, nowMs: nowMs)
        }
        try requireToken(token, heldOnlyBy: [existing.id])
        var changes: [Change] = []
        if let customerUserID, existing.customerUserID == nil { changes.append(.customerUserIDAssigned(existing.id, customerUserID)) }
        changes += tokenChanges(token, for: existing, ownsPurchase: ownsPurchase)
        return ProfileDecision(batch: ChangeBatch(changes, atMs: nowMs), profileID: existing.id)
    }

    // MARK: profile.identify

    public func identify(
        profile: ProfileID, customerUserID: String, token: AppAccountToken?, nowMs: Int64, random: some RandomSource
    ) throws(GatehouseError) -> ProfileDecision {
        try identify(profile: profile, customerUserID: customerUserID, token: token, nowMs: nowMs, random: random) {
            ownsPurchase($0)
        }
    }

    /// `identify` with the purchase-ownership question passed in (see `createProfile`'s seam).
    func identify(
        profile id: ProfileID, customerUserID raw: String, token: AppAccountToken?, nowMs: Int64, random: some RandomSource,
        ownsPurchase: (ProfileID) -> Bool
    ) throws(GatehouseError) -> ProfileDecision {
        // Rule 1: the id, the profile, then the token against the profile that would be in use.
        let customerUserID = try Self.normalizeCustomerUserID(raw)
        let presented = try resolveProfile(id)
        let outcome = identifyOutcome(presented, customerUserID)
        try requireToken(token, heldOnlyBy: outcome.tokenHolders(presented: presented.id))

        switch outcome {
        case .keeps:
            // Rule 2: P already has X.
            let changes = tokenChanges(token, for: presented, ownsPurchase: ownsPurchase)
            return ProfileDecision(batch: ChangeBatch(changes, atMs: nowMs), profileID: presented.id)
        case .switches(let owner, let merges):
            // Rule 3: X belongs to Q; an anonymous P is merged into it under `alias`.
            let merge: [Change] = merges ? [.profileMerged(from: presented.id, into: owner.id)] : []
            let changes = merge + tokenChanges(token, for: owner, ownsPurchase: ownsPurchase)
            return ProfileDecision(batch: ChangeBatch(changes, atMs: nowMs), profileID: owner.id, switched: true,
                                   mergedFrom: merges ? [presented.id] : [])
        case .takes:
            // Rule 4: an anonymous P takes the unseen X.
            let changes: [Change] = [.customerUserIDAssigned(presented.id, customerUserID)]
                + tokenChanges(token, for: presented, ownsPurchase: ownsPurchase)
            return ProfileDecision(batch: ChangeBatch(changes, atMs: nowMs), profileID: presented.id)
        case .createsProfile:
            // Rule 4: an identified P stays as it is; a new profile with X (and the token) is used.
            let profile = newProfile(customerUserID: customerUserID, token: token, nowMs: nowMs, random: random)
            return ProfileDecision(batch: ChangeBatch([.profileCreated(profile)], atMs: nowMs), profileID: profile.id,
                                   created: true, switched: true)
        }
    }

    /// Which profile identify would leave in use (rules 2–4), decided before anything changes.
    enum IdentifyOutcome {
        /// Rule 2: P has X.
        case keeps
        /// Rule 3: X belongs to another profile; `merges`: P is folded into it.
        case switches(to: Profile, merges: Bool)
        /// Rule 4: an anonymous P takes X.
        case takes
        /// Rule 4: an identified P; a new profile takes X.
        case createsProfile

        /// The profiles that may already hold the given token (rule 1): the one in use, and P
        /// when it is merged into it (its token then resolves there).
        func tokenHolders(presented: ProfileID) -> [ProfileID] {
            switch self {
            case .keeps, .takes: [presented]
            case .switches(let owner, let merges): merges ? [owner.id, presented] : [owner.id]
            case .createsProfile: []
            }
        }
    }

    func identifyOutcome(_ presented: Profile, _ customerUserID: String) -> IdentifyOutcome {
        if let owner = profiles.profile(customerUserID: customerUserID) {
            if owner.id == presented.id { return .keeps }
            return .switches(to: owner, merges: presented.isAnonymous && config.login == .alias)
        }
        return presented.isAnonymous ? .takes : .createsProfile
    }

    // MARK: profile.logout

    public func logout(profile id: ProfileID, nowMs: Int64, random: some RandomSource) throws(GatehouseError)
        -> ProfileDecision
    {
        let profile = try resolveProfile(id)
        guard !profile.isAnonymous else {
            throw GatehouseError(.profileAnonymous, "the profile has no customer user id to log out of")
        }
        // P stays with its customer; the install starts over with a new anonymous profile.
        return creating(newProfile(customerUserID: nil, token: nil, nowMs: nowMs, random: random), nowMs: nowMs)
    }

    // MARK: profile.attributes

    /// Decides which updates win: the batch lists only those, so replay applies them as they are.
    public func updateAttributes(profile id: ProfileID, _ updates: [AttributeUpdate], nowMs: Int64)
        throws(GatehouseError) -> ProfileDecision
    {
        let profile = try resolveProfile(id)
        let winning = try Self.winningAttributeUpdates(updates, on: profile.attributes, nowMs: nowMs)
        let changes: [Change] = winning.isEmpty ? [] : [.attributesUpdated(profile.id, winning)]
        return ProfileDecision(batch: ChangeBatch(changes, atMs: nowMs), profileID: profile.id)
    }

    /// The updates that change something, in order, each checked against the attribute as the
    /// updates before it left it: one older than that attribute is ignored (equal or newer
    /// wins), as is one that leaves it as it is and a delete of a key not there; `""` deletes, as
    /// `null` does. No time is kept for a deleted key, so an older set after a delete wins.
    /// Keys of 1–40 characters, values of at most 500 and at most 100 updates at once are checked
    /// on every update first, then at most 50 keys on what the winners leave; the error names
    /// `attributes.<key>`.
    static func winningAttributeUpdates(_ updates: [AttributeUpdate], on attributes: [String: ProfileAttribute], nowMs: Int64)
        throws(GatehouseError) -> [AttributeUpdate]
    {
        try validateAttributeUpdates(updates)
        var result = attributes
        var winning: [AttributeUpdate] = []
        var overflowingKey: String?
        for update in updates {
            let updatedMs = update.updatedMs ?? nowMs
            let value = update.value.flatMap { $0.isEmpty ? nil : $0 }
            let current = result[update.key]
            if let current, updatedMs < current.updatedMs { continue }
            let next = value.map { ProfileAttribute(value: $0, updatedMs: updatedMs) }
            guard next != current else { continue }
            result[update.key] = next
            winning.append(AttributeUpdate(key: update.key, value: value, updatedMs: update.updatedMs))
            if result.count > ProfileLimits.attributesPerProfileMax, overflowingKey == nil { overflowingKey = update.key }
        }
        guard result.count <= ProfileLimits.attributesPerProfileMax else {
            let field = overflowingKey.map { "attributes.\($0)" } ?? "attributes"
            throw .badField(field, "a profile holds at most \(ProfileLimits.attributesPerProfileMax) attributes")
        }
        return winning
    }

    /// What every update must be, whatever it meets: at most 100 of them, keys of 1–40
    /// characters, values of at most 500.
    private static func validateAttributeUpdates(_ updates: [AttributeUpdate]) throws(GatehouseError) {
        guard updates.count <= ProfileLimits.attributeUpdatesPerRequestMax else {
            throw .badField("attributes", "at most \(ProfileLimits.attributeUpdatesPerRequestMax) updates at once")
        }
        for update in updates {
            let field = "attributes.\(update.key)"
            guard ProfileLimits.attributeKeyCharacters.contains(update.key.count) else {
                throw .badField(field, "a key is 1–40 characters")
            }
            if let value = update.value, value.count > ProfileLimits.attributeValueCharactersMax {
                throw .badField(field, "a value is at most \(ProfileLimits.attributeValueCharactersMax) characters")
            }
        }
    }

    // MARK: profile.delete

    /// Deletes the profile behind an id or alias; its customer user id and tokens become free and
    /// its aliases go with it.
    public func deleteProfile(_ id: ProfileID, nowMs: Int64) throws(GatehouseError) -> ProfileDecision {
        let profile = try resolveProfile(id)
        return ProfileDecision(batch: ChangeBatch([.profileDeleted(profile.id)], atMs: nowMs), profileID: profile.id)
    }

    // MARK: Shared steps

    /// `token_in_use` unless the token is new to the project or held by one of `holders`.
    private func requireToken(_ token: AppAccountToken?, heldOnlyBy holders: [ProfileID]) throws(GatehouseError) {
        guard let token, let holder = profiles.profile(token: token), !holders.contains(holder.id) else { return }
        throw GatehouseError(.tokenInUse, "the app account token belongs to another profile")
    }

    /// Rule 5: a given token becomes the profile's own, unless it owns a purchase or already has it.
    private func tokenChanges(_ token: AppAccountToken?, for profile: Profile, ownsPurchase: (ProfileID) -> Bool)
        -> [Change]
    {
        guard let token, token != profile.token, !ownsPurchase(profile.id) else { return [] }
        return [.tokenAssigned(profile.id, token)]
    }

    /// A new anonymous profile for a web buyer, holding their email as `$email` when Stripe
    /// collected one (DESIGN.md, "Web purchases and redemption links").
    func webProfile(email: String?, nowMs: Int64, random: some RandomSource) -> (ProfileID, [Change]) {
        let profile = newProfile(customerUserID: nil, token: nil, nowMs: nowMs, random: random)
        var changes: [Change] = [.profileCreated(profile)]
        if let email { changes.append(.attributesUpdated(profile.id, [AttributeUpdate(key: "$email", value: email, updatedMs: nowMs)])) }
        return (profile.id, changes)
    }

    private func creating(_ profile: Profile, nowMs: Int64) -> ProfileDecision {
        ProfileDecision(batch: ChangeBatch([.profileCreated(profile)], atMs: nowMs), profileID: profile.id, created: true)
    }

    /// A profile as it starts; `apply` sets its cursor to the batch's sequence number.
    private func newProfile(
        customerUserID: String?, token: AppAccountToken?, installID: InstallID? = nil, nowMs: Int64, random: some RandomSource
    ) -> Profile {
        Profile(id: freshProfileID(random: random), customerUserID: customerUserID, token: token ?? freshToken(random: random),
                installID: installID, createdMs: nowMs, lastSeenMs: nowMs, cursor: 0)
    }

    // 128 random bits never collide in practice; drawing again costs nothing and keeps `apply`'s
    // preconditions out of reach even of a broken random source.
    private func freshProfileID(random: some RandomSource) -> ProfileID {
        let tag = profileTag
        var id: ProfileID
        repeat { id = ProfileID.make(tag: tag, random: random) } while profiles.canonicalID(id) != nil
        return id
    }

    private func freshToken(random: some RandomSource) -> AppAccountToken {
        var token: AppAccountToken
        repeat { token = AppAccountToken.make(random: random) } while profiles.profile(token: token) != nil
        return token
    }
}

extension ProfileLimits {
    /// Attribute updates one `profile.attributes` request may carry.
    public static let attributeUpdatesPerRequestMax = 100
}

// MARK: sync

extension ProjectState {
    /// What `sync` answers (PROTOCOL.md, "Sync and push").
    public struct SyncDecision: Sendable, Equatable {
        /// The canonical profile (an alias resolves to it).
        public var profileID: ProfileID
        /// The cursor to hand back: the client's when nothing changed, else the profile's latest.
        public var cursor: UInt64
        /// What changed after the client's cursor, in ``SyncPart`` order; empty: nothing did.
        public var changed: [SyncPart]
    }

    /// The parts of a profile changed after `cursor`; with no cursor (a first sync), all of them.
    /// An alias reports `identity`: the app is using a profile that merged into another.
    public func sync(profile id: ProfileID, cursor: UInt64?) throws(GatehouseError) -> SyncDecision {
        let profile = try resolveProfile(id)
        return sync(profile, cursor: cursor, presentedMergedAway: profile.id != id)
    }

    /// ``sync(profile:cursor:)`` of the profile an install id resolves to; the install id of a
    /// profile merged into it reports `identity`, as an alias does.
    public func sync(installID: InstallID, cursor: UInt64?) throws(GatehouseError) -> SyncDecision {
        let profile = try resolveProfile(installID: installID)
        return sync(profile, cursor: cursor, presentedMergedAway: profile.installID != installID)
    }

    private func sync(_ profile: Profile, cursor: UInt64?, presentedMergedAway: Bool) -> SyncDecision {
        let latest = max(profile.cursor, configCursor)
        guard let cursor else {
            return SyncDecision(profileID: profile.id, cursor: latest, changed: SyncPart.allCases)
        }
        var changed = profile.cursors.changed(after: cursor)
        if configCursor > cursor { changed.append(.offerings) }
        if presentedMergedAway, !changed.contains(.identity) { changed.insert(.identity, at: 0) }
        return SyncDecision(profileID: profile.id, cursor: changed.isEmpty ? cursor : max(latest, cursor), changed: changed)
    }
}
