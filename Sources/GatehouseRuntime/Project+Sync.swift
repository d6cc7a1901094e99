public import GatehouseCore

/// What `sync` answers when it went through the actor.
public struct SyncOutcome: Sendable {
    public var cursor: UInt64
    public var changed: [SyncPart]
    /// The canonical profile's document when something changed.
    public var view: ProfileView?
}

extension Project {
    /// A `sync` the connection could not settle from the board: builds the document only when
    /// something changed; that answer waits for the log (`lsn`), "nothing changed" does not.
    /// The board learns the profile's cursor, so its next poll is answered on the connection's
    /// thread.
    public func sync(profile lookup: ProfileLookup, cursor: UInt64?) throws(GatehouseError) -> Committed<SyncOutcome> {
        let decision: ProjectState.SyncDecision
        if case .installID(let installID) = lookup {
            decision = try reading { state throws(GatehouseError) in try state.sync(installID: installID, cursor: cursor) }
        } else {
            let id = try resolveID(lookup)
            decision = try reading { state throws(GatehouseError) in try state.sync(profile: id, cursor: cursor) }
        }
        peek { syncBoard.learn(decision.profileID, from: $0) }
        guard !decision.changed.isEmpty else {
            return Committed(SyncOutcome(cursor: decision.cursor, changed: [], view: nil), lsn: 0)
        }
        return Committed(SyncOutcome(cursor: decision.cursor, changed: decision.changed, view: view(of: decision.profileID)),
                         lsn: lsnShowing(decision.profileID))
    }
}

extension Project {
    /// Starts pushing `target` the changes of a profile after its cursor now; answers the
    /// canonical id watched (an alias watches the profile it stands for). `admit` may refuse
    /// the canonical profile (the connection's limit) before anything is registered.
    public func watch(
        profile lookup: ProfileLookup, target: any WatchTarget,
        admit: @Sendable (ProfileID) throws(GatehouseError) -> Void = { _ in }
    ) throws(GatehouseError) -> ProfileID {
        let id = try resolveID(lookup)
        let (profile, configCursor) = try reading { state throws(GatehouseError) in (try state.resolveProfile(id), state.configCursor) }
        try admit(profile.id)
        watchHub.add(target, profile: profile.id, cursor: max(profile.cursor, configCursor))
        return profile.id
    }

    /// The canonical id behind a profile id, an alias or an install id, for `unwatch`.
    public func canonicalProfile(_ lookup: ProfileLookup) throws(GatehouseError) -> ProfileID {
        let id = try resolveID(lookup)
        return try reading { state throws(GatehouseError) in try state.resolveProfile(id).id }
    }
}
