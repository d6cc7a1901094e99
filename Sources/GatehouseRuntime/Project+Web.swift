public import GatehouseCore

/// Redemption links and the buyer's pages, inside the project's actor (DESIGN.md, "Web
/// purchases and redemption links").
extension Project {
    /// `web.redeem`: the profile `lookup` names takes over the web purchase of `token`. A refusal
    /// may still log a change (an expired link's fresh one, whose email the outbox then sends).
    public func redeem(profile lookup: ProfileLookup, token: String) throws(GatehouseError) -> Committed<ProfileView> {
        let now = nowMs
        let id = try resolveID(lookup)
        let decision = try reading { state throws(GatehouseError) in try state.redeem(profile: id, token: token, nowMs: now) }
        let changed = !decision.batch.changes.isEmpty
        let lsn = changed ? try commit(decision.batch) : 0
        switch decision.outcome {
        case .failure(let refusal):
            throw refusal
        case .success(let profile):
            return Committed(view(of: profile), lsn: changed ? lsn : lsnShowing(profile))
        }
    }

    /// Where the link of `token` stands, for its https page (a read: nothing changes).
    public func linkStanding(token: String) -> Committed<ProjectState.LinkStanding> {
        let now = nowMs
        return Committed(peek { $0.linkStanding(token: token, nowMs: now) }, lsn: lastCommittedLSN)
    }

    /// Where the purchase of a Checkout Session stands, for the success page.
    public func sessionStanding(_ sessionID: String) -> Committed<ProjectState.SessionStanding> {
        let now = nowMs
        return Committed(peek { $0.sessionStanding(sessionID, nowMs: now) }, lsn: lastCommittedLSN)
    }
}
