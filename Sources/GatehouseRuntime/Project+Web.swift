public import GatehouseCore
import Synchronization

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

    /// Tells ``publishedWeb`` what an applied batch changed of the links and the `web` config.
    func publishWeb(after batch: ProjectState.ChangeBatch) {
        guard PublishedWeb.concerns(batch.changes) else { return }
        peek { publishedWeb.note(batch.changes, in: $0) }
    }
}

/// What the buyer's pages read of a project without entering its actor: which redemption tokens
/// it issued (every generation's, by SHA-256, as ``WebPurchases/tokens`` holds them) and its
/// `web` config. The https link `<public url>/pay/r/<token>` names no project, so the server
/// asks each project whether the token is its own, a set lookup under a lock of its own per
/// project, and enters only the actor of the one that issued it; a token nobody issued enters
/// none. The actor is the only writer, after each batch that stores a link, makes the link key
/// or replaces the config.
public final class PublishedWeb: Sendable {
    private struct Contents {
        var digests: Set<RedemptionToken.Digest>
        var settings: WebSettings?
    }

    private let contents: Mutex<Contents>

    init(state: borrowing ProjectState) {
        contents = Mutex(Contents(digests: Set(state.web.tokens.keys), settings: state.config.web))
    }

    /// Whether the project issued the token of `digest` (any generation, current or not).
    public func issued(_ digest: RedemptionToken.Digest) -> Bool {
        contents.withLock { $0.digests.contains(digest) }
    }

    /// The project's `web` config as of its last applied change.
    public var settings: WebSettings? { contents.withLock { $0.settings } }

    /// Whether any of `changes` is one ``note(_:in:)`` publishes.
    static func concerns(_ changes: [ProjectState.Change]) -> Bool {
        changes.contains { change in
            switch change {
            case .linkKeyMade, .redemptionLinkStored, .configReplaced: true
            default: false
            }
        }
    }

    /// Adds the tokens `changes` made, read from `state` after they were applied: the current
    /// token of each link stored (a link's generation grows one at a time), and all of them again
    /// when the link key was made or the count still differs from the state's.
    func note(_ changes: [ProjectState.Change], in state: borrowing ProjectState) {
        var fresh: [RedemptionToken.Digest] = []
        var rebuild = false
        var configChanged = false
        for change in changes {
            switch change {
            case .linkKeyMade:
                rebuild = true
            case .redemptionLinkStored(let key, _):
                if let token = state.web.currentToken(of: key) { fresh.append(RedemptionToken.Digest(token: token)) }
            case .configReplaced:
                configChanged = true
            default:
                break
            }
        }
        let count = state.web.tokens.count
        let settings = configChanged ? Optional(state.config.web) : nil
        let complete = contents.withLock { contents in
            if let settings { contents.settings = settings }
            guard !rebuild else { return false }
            for digest in fresh { contents.digests.insert(digest) }
            return contents.digests.count == count
        }
        guard !complete else { return }
        let all = Set(state.web.tokens.keys)
        contents.withLock { $0.digests = all }
    }
}
