public import GatehouseCore
import GatehouseStorage

/// An email handed to the mail pump: which link's, which attempt, and everything its message
/// says. The pump owns it until it hands back the outcome.
public struct DueMail: Sendable {
    public let purchase: PurchaseKey
    /// The link generation whose token the email carries.
    public let generation: UInt32
    /// 1 for the first attempt.
    public let attempt: UInt16
    /// The buyer's address (the web profile's `$email`); `nil` when the profile no longer has
    /// one, and then the attempt fails for good.
    public let to: String?
    /// The config's `web.app_name`, else the project's name.
    public let appName: String
    /// The `Reply-To`: the config's `web.support_email`.
    public let supportEmail: String?
    /// `<app scheme>://redeem_web_purchase?redemption_token=<token>`.
    public let deepLink: String
    /// `<public url>/pay/r/<token>`.
    public let httpsLink: String
    /// How long the link is valid: the config's `web.redemption_link_hours`.
    public let linkHours: Int64
}

/// Which of a project's owed emails are due when, and which are in flight: the runtime's side of
/// the redemption links' mail, never logged. Rebuilt from the links when a project loads, so
/// after a restart every owed email is due again at the time the log says (one in flight when
/// the server stopped is sent again: at least once).
///
/// One heap by due time. An entry may be stale (its email was sent, rescheduled, replaced by a
/// newer generation's, or its link redeemed since): it is dropped when it comes to the top and
/// no longer matches the state. An entry made by a change the log has not yet made durable
/// waits for it: no email goes out about a change a crash could still undo.
struct MailQueue {
    private struct Entry: Comparable {
        var dueMs: Int64
        var purchase: PurchaseKey
        var generation: UInt32
        var lsn: LSN

        static func < (a: Entry, b: Entry) -> Bool { (a.dueMs, a.purchase, a.generation) < (b.dueMs, b.purchase, b.generation) }
    }

    /// An email in flight: one link generation's.
    private struct Lease: Hashable {
        var purchase: PurchaseKey
        var generation: UInt32
    }

    /// Emails of one project in flight at once, at most.
    static let inFlightMax = DeliverySchedule.inFlightPerEndpointMax

    private var heap = MinHeap<Entry>()
    private var leased: Set<Lease> = []

    init(_ web: WebPurchases) {
        for (key, link) in web.links where link.redeemedBy == nil {
            guard let mail = link.mail else { continue }
            heap.push(Entry(dueMs: mail.nextAttemptMs, purchase: key, generation: link.generation, lsn: 0))
        }
    }

    /// Whether nothing is scheduled or in flight (stale entries count as scheduled until dropped).
    var isEmpty: Bool { heap.isEmpty && leased.isEmpty }

    mutating func schedule(_ mails: [ScheduledMail], lsn: LSN) {
        for mail in mails {
            heap.push(Entry(dueMs: mail.dueMs, purchase: mail.purchase, generation: mail.generation, lsn: lsn))
        }
    }

    /// Hands out what is due by `nowMs` and durable, up to the room in flight, and answers when
    /// the next one not handed out falls due. `publicURL` is the base of the https links.
    mutating func take(from state: borrowing ProjectState, nowMs: Int64, durableLSN: LSN, publicURL: String)
        -> (due: [DueMail], nextDueMs: Int64?)
    {
        var due: [DueMail] = []
        while leased.count < Self.inFlightMax, let top = heap.top {
            let lease = Lease(purchase: top.purchase, generation: top.generation)
            guard let link = state.web.links[top.purchase], link.redeemedBy == nil, link.generation == top.generation,
                let mail = link.mail, mail.nextAttemptMs == top.dueMs, !leased.contains(lease)
            else {
                heap.pop()
                continue
            }
            guard top.dueMs <= nowMs, top.lsn <= durableLSN else { break }
            heap.pop()
            guard let email = Self.email(top.purchase, link, attempt: mail.attempts + 1, in: state, publicURL: publicURL)
            else { continue }
            leased.insert(lease)
            due.append(email)
        }
        let nextDueMs = leased.count < Self.inFlightMax ? heap.top?.dueMs : nil
        return (due, nextDueMs)
    }

    /// What the email of `link` (of `key`) says, from the state as it is now.
    private static func email(_ key: PurchaseKey, _ link: RedemptionLink, attempt: UInt16, in state: borrowing ProjectState,
                              publicURL: String) -> DueMail?
    {
        guard let token = state.web.currentToken(of: key) else { return nil }
        let web = state.config.web
        let scheme = WebSettings.scheme(of: web, projectID: state.id)
        return DueMail(
            purchase: key, generation: link.generation, attempt: attempt, to: state.mailAddress(of: key),
            appName: web?.appName ?? state.name, supportEmail: web?.supportEmail,
            deepLink: RedemptionToken.deepLink(token, scheme: scheme), httpsLink: RedemptionToken.httpsLink(token, publicURL: publicURL),
            linkHours: web?.redemptionLinkHours ?? WebSettings.defaultRedemptionLinkHours)
    }

    /// The outcomes of these emails came back: they are no longer in flight.
    mutating func release(_ outcomes: [MailOutcome]) {
        for outcome in outcomes {
            leased.remove(Lease(purchase: outcome.purchase, generation: outcome.generation))
        }
    }

    /// Outcomes that could not be logged: their emails are due again as the state has them.
    mutating func returnUnsettled(_ outcomes: [MailOutcome], in state: borrowing ProjectState) {
        release(outcomes)
        for outcome in outcomes {
            guard let link = state.web.links[outcome.purchase], link.redeemedBy == nil, let mail = link.mail else { continue }
            heap.push(Entry(dueMs: mail.nextAttemptMs, purchase: outcome.purchase, generation: link.generation, lsn: 0))
        }
    }

    /// Emails owed in `state` (sent, failed and redeemed ones are owed no more).
    static func owedCount(in state: borrowing ProjectState) -> Int {
        state.web.links.values.reduce(0) { $0 + ($1.mail != nil && $1.redeemedBy == nil ? 1 : 0) }
    }
}
