import GatehouseBase
public import GatehouseCore
public import GatehouseStorage

/// How a request names a profile. A lookup is resolved inside the project's actor, in the same
/// visit as the rule it is for, so nothing can change the profile it names in between.
public enum ProfileLookup: Sendable, Equatable {
    /// A profile id or an alias.
    case id(ProfileID)
    case customerUserID(String)
    case token(AppAccountToken)
    /// The install id a profile was created with, or that of a profile merged into it.
    case installID(InstallID)
}

/// What a profile answer is built from: the profile and the project config it is read against.
public struct ProfileView: Sendable {
    public var profile: Profile
    public var holdings: ProjectState.Holdings
    public var config: ProjectConfig
    public var nowMs: Int64
    /// The profile's promotional grants, revoked and lapsed ones included, and what it lost to
    /// transfers: the RevenueCat subscriber object names a purchase for every entitlement.
    public var grants: [PromotionalGrant] = []
    public var former: (subscriptions: [Subscription], purchases: [OneTimePurchase]) = ([], [])
}

/// The outcome of `profile.create`, `profile.identify` and `profile.logout`.
public struct ProfileOutcome: Sendable {
    public var view: ProfileView
    public var created: Bool
    public var switched: Bool
    public var mergedFrom: [ProfileID]
}

/// Identity ops, inside the project's actor: decide (pure rules in GatehouseCore), log, apply.
extension Project {
    public func profile(_ lookup: ProfileLookup) throws(GatehouseError) -> Committed<ProfileView> {
        let profile = try resolve(lookup)
        return Committed(view(of: profile.id), lsn: lsnShowing(profile.id))
    }

    /// `role`: who asks; a profile the public key's role (`sdk`) creates takes a token of the
    /// project's limit (``carryOut(_:by:)``). So do `identify` and `logout`, which may create one.
    public func createProfile(
        customerUserID: String?, token: AppAccountToken?, installID: InstallID? = nil, by role: Role
    ) throws(GatehouseError) -> Committed<ProfileOutcome> {
        let (now, random) = (nowMs, random)
        let decision = try reading { state throws(GatehouseError) in
            try state.createProfile(customerUserID: customerUserID, token: token, installID: installID, nowMs: now, random: random)
        }
        return try carryOut(decision, by: role)
    }

    public func identify(profile lookup: ProfileLookup, customerUserID: String, token: AppAccountToken?, by role: Role)
        throws(GatehouseError) -> Committed<ProfileOutcome>
    {
        let (now, random) = (nowMs, random)
        // The customer user id is checked before the profile is looked up (rule 1), whatever names it.
        _ = try ProjectState.normalizeCustomerUserID(customerUserID)
        let profile = try resolveID(lookup)
        let decision = try reading { state throws(GatehouseError) in
            try state.identify(profile: profile, customerUserID: customerUserID, token: token, nowMs: now, random: random)
        }
        return try carryOut(decision, by: role)
    }

    public func logout(profile lookup: ProfileLookup, by role: Role) throws(GatehouseError) -> Committed<ProfileOutcome> {
        let (now, random) = (nowMs, random)
        let profile = try resolveID(lookup)
        let decision = try reading { state throws(GatehouseError) in try state.logout(profile: profile, nowMs: now, random: random) }
        return try carryOut(decision, by: role)
    }

    public func updateAttributes(profile lookup: ProfileLookup, _ updates: [ProjectState.AttributeUpdate])
        throws(GatehouseError) -> Committed<Profile>
    {
        let now = nowMs
        let profile = try resolveID(lookup)
        let decision = try reading { state throws(GatehouseError) in try state.updateAttributes(profile: profile, updates, nowMs: now) }
        let outcome = try carryOut(decision)
        return Committed(outcome.value.view.profile, lsn: outcome.lsn)
    }

    public func deleteProfile(_ lookup: ProfileLookup) throws(GatehouseError) -> LSN {
        let now = nowMs
        let id = try resolveID(lookup)
        let decision = try reading { state throws(GatehouseError) in try state.deleteProfile(id, nowMs: now) }
        return try commitIfAny(decision.batch)
    }

    /// A page of the event feed.
    public func events(after cursor: UInt64, limit: Int) -> Committed<[Event]> {
        let events = peek { $0.events.events(after: cursor, limit: limit) }
        return Committed(events, lsn: events.last.map { lsnShowing(sequence: $0.cursor) } ?? 0)
    }

    func resolve(_ lookup: ProfileLookup) throws(GatehouseError) -> Profile {
        switch lookup {
        case .id(let id):
            return try reading { state throws(GatehouseError) in try state.resolveProfile(id) }
        case .customerUserID(let raw):
            let customerUserID = try ProjectState.normalizeCustomerUserID(raw)
            guard let profile = peek({ $0.profiles.profile(customerUserID: customerUserID) }) else {
                throw .notFound("a profile with that customer user id")
            }
            return profile
        case .token(let token):
            guard let profile = peek({ $0.profiles.profile(token: token) }) else { throw .notFound("a profile with that app account token") }
            return profile
        case .installID(let installID):
            return try reading { state throws(GatehouseError) in try state.resolveProfile(installID: installID) }
        }
    }

    /// The profile id `lookup` names, for a rule that resolves an id itself (with
    /// ``ProjectState/resolveProfileID(_:)``, whose errors are ``resolve(_:)``'s): an id is passed
    /// on as it is, without copying its profile out here first; an install id becomes the id of
    /// the profile it resolves to.
    func resolveID(_ lookup: ProfileLookup) throws(GatehouseError) -> ProfileID {
        switch lookup {
        case .id(let id): return id
        case .installID(let installID):
            return try reading { state throws(GatehouseError) in try state.resolveProfileID(installID: installID) }
        case .customerUserID, .token: return try resolve(lookup).id
        }
    }

    /// Logs and applies what an identity rule decided. A decision that creates a profile for
    /// the public key first takes a token of ``ProjectLimits/sdkCreatesPerSecond``; with none left
    /// it is `overloaded` and changes nothing. A decision that creates nothing (an existing
    /// customer user id) takes none.
    private func carryOut(_ decision: ProjectState.ProfileDecision, by role: Role) throws(GatehouseError)
        -> Committed<ProfileOutcome>
    {
        if decision.created, role == .sdk { try admitSDKCreate(atMs: decision.batch.atMs) }
        return try carryOut(decision)
    }

    /// A decision that changes nothing (a known customer user id, an identify with nothing to
    /// switch) shows the profile in use as it is: it waits for that profile's newest change.
    private func carryOut(_ decision: ProjectState.ProfileDecision) throws(GatehouseError) -> Committed<ProfileOutcome> {
        let lsn = decision.batch.changes.isEmpty ? lsnShowing(decision.profileID) : try commit(decision.batch)
        let outcome = ProfileOutcome(view: view(of: decision.profileID), created: decision.created,
                                     switched: decision.switched, mergedFrom: decision.mergedFrom)
        return Committed(outcome, lsn: lsn)
    }

    private func admitSDKCreate(atMs nowMs: Int64) throws(GatehouseError) {
        let limits = peek { $0.config.limits }
        guard sdkCreates.take(nowMs: nowMs, ratePerSecond: limits.sdkCreatesPerSecond, capacity: limits.sdkCreatesBurst)
        else {
            throw GatehouseError(
                .overloaded, "the public key creates profiles faster than the project's limits.sdk_creates_per_second; retry later",
                details: [.limit(Int(limits.sdkCreatesPerSecond))])
        }
    }

    /// Logs and applies a batch that changes something; an empty one is a read of what is there,
    /// which may be anything of the project's (a notification id seen before): it waits for the
    /// project's last change.
    func commitIfAny(_ batch: ProjectState.ChangeBatch) throws(GatehouseError) -> LSN {
        batch.changes.isEmpty ? lastCommittedLSN : try commit(batch)
    }

    /// Logs and applies a transact's change. None (a replay) answers what the key's first use
    /// left, which `profile`'s newest change covers: the first use touched it, or a profile
    /// merged into it since, and the merge touched it after.
    func commitIfAny(_ transact: consuming ProjectState.TransactChange?, showing profile: ProfileID) throws(GatehouseError)
        -> LSN
    {
        guard let transact else { return lsnShowing(profile) }
        return try commit(transact)
    }

    func view(of id: ProfileID) -> ProfileView {
        let now = nowMs
        return peek { state in
            guard let profile = state.profiles.profile(id) else {
                preconditionFailure("the profile a rule answered with does not exist after its changes")
            }
            // A profile read through the actor is one in use: its next revalidation (a RevenueCat
            // ETag) is answered on the loop.
            syncBoard.learn(profile.id, from: state)
            return ProfileView(profile: profile, holdings: state.holdings(of: profile.id, nowMs: now), config: state.config,
                               nowMs: now, grants: state.purchases.grants(of: profile.id),
                               former: state.purchases.formerHoldings(of: profile.id))
        }
    }
}

extension Project {
    /// The config a profile's `offerings` answer is built from (the profile must exist here).
    public func offerings(for lookup: ProfileLookup) throws(GatehouseError) -> Committed<ProjectConfig> {
        let id = try resolveID(lookup)
        let config = try reading { state throws(GatehouseError) in
            _ = try state.resolveProfile(id)
            return state.config
        }
        return Committed(config, lsn: configLSN)
    }
}
