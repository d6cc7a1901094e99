import GatehouseBase

/// What a project keeps of its web sales beyond the purchases themselves (DESIGN.md, "Web
/// purchases and redemption links"). Each map holds at most one entry per web purchase, but for
/// Stripe's links and refunds: one per paid invoice, one per refunded term.
public struct WebPurchases: Sendable, Equatable {
    /// Checkouts completed before their purchase was known: the owner the purchase gets when
    /// Stripe's first event about it arrives. Stripe sends a Checkout's events in no set order,
    /// and only the session names who bought.
    public internal(set) var pendingOwners: [PurchaseKey: ProfileID]
    /// The key redemption tokens are derived with: random, made with the first link, moved with
    /// the project, never shown.
    public internal(set) var linkKey: [UInt8]?
    /// The redemption link of each purchase a web profile bought.
    public private(set) var links: [PurchaseKey: RedemptionLink]
    /// Which purchase each completed Checkout Session bought (the success page's `session_id`).
    public internal(set) var sessions: [String: PurchaseKey]
    /// Every generation's token of every link, by its SHA-256: derived from `linkKey` and
    /// `links`, never stored. An older generation stays, so its token answers `expired`.
    public private(set) var tokens: [RedemptionToken.Digest: TokenPlace] = [:]
    /// Which invoice each payment paid (`invoice_payment.paid`), by the payment's id: its
    /// PaymentIntent (`pi_…`), or the charge (`ch_…`) of a payment made without one. In the
    /// pinned API version neither an invoice nor a charge names the other, and a refund or a
    /// dispute names only the charge and its PaymentIntent, so this is how one finds its term.
    /// One entry per paid invoice of the account's mode, kept for good (Stripe may refund a
    /// charge months later), also for invoices of prices the project does not sell: Stripe
    /// sends the payment before or after the invoice, and only the invoice tells.
    public internal(set) var paymentInvoices: [String: String]
    /// The subscription (`sub_…`) of each paid invoice (`in_…`) that was a term of one of the
    /// project's subscriptions (`invoice.paid`): one entry per paid term, kept for good.
    public internal(set) var invoiceSubscriptions: [String: String]
    /// Refunds Stripe made that leave the purchase as it is, by the transaction id of what they
    /// refunded (an invoice's, or a one-time payment's PaymentIntent): the fraction refunded
    /// (`amount_refunded / amount`, above 0, at most 1), of which the term's currency grant owes
    /// back `floor(granted × fraction)`. That is a partial refund, or a full refund of a term that
    /// is no longer the current one. One entry per such refunded term; it only grows.
    public internal(set) var refundedFractions: [String: Double]

    /// Where a token points.
    public struct TokenPlace: Sendable, Equatable {
        public var purchase: PurchaseKey
        public var generation: UInt32
    }

    public init(pendingOwners: [PurchaseKey: ProfileID] = [:], linkKey: [UInt8]? = nil,
                links: [PurchaseKey: RedemptionLink] = [:], sessions: [String: PurchaseKey] = [:],
                paymentInvoices: [String: String] = [:], invoiceSubscriptions: [String: String] = [:],
                refundedFractions: [String: Double] = [:])
    {
        self.pendingOwners = pendingOwners
        self.linkKey = linkKey
        self.links = links
        self.sessions = sessions
        self.paymentInvoices = paymentInvoices
        self.invoiceSubscriptions = invoiceSubscriptions
        self.refundedFractions = refundedFractions
        for (key, link) in links { indexTokens(of: key, through: link.generation) }
    }

    /// The token of the current generation of `key`'s link.
    public func currentToken(of key: PurchaseKey) -> String? {
        guard let linkKey, let link = links[key] else { return nil }
        return RedemptionToken.make(linkKey: linkKey, purchase: key, generation: link.generation)
    }

    /// The purchase and generation of a token this project issued; `nil` for any other text.
    /// The index finds it by digest; the token derived again must then match, in constant time.
    public func place(of token: String) -> TokenPlace? {
        guard let linkKey, RedemptionToken.isWellFormed(token), let place = tokens[RedemptionToken.Digest(token: token)]
        else { return nil }
        let expected = RedemptionToken.make(linkKey: linkKey, purchase: place.purchase, generation: place.generation)
        return constantTimeEquals(Array(expected.utf8), Array(token.utf8)) ? place : nil
    }

    /// Stores a link (insert or replace) and indexes the tokens of its generations.
    mutating func store(_ link: RedemptionLink, for key: PurchaseKey) {
        let known = links[key]?.generation ?? 0
        links[key] = link
        if link.generation > known { indexTokens(of: key, through: link.generation, from: known + 1) }
    }

    private mutating func indexTokens(of key: PurchaseKey, through generation: UInt32, from first: UInt32 = 1) {
        guard let linkKey, first <= generation else { return }
        for number in first...generation {
            let token = RedemptionToken.make(linkKey: linkKey, purchase: key, generation: number)
            tokens[RedemptionToken.Digest(token: token)] = TokenPlace(purchase: key, generation: number)
        }
    }

    /// The link key arrived after links were stored (a batch making both): index them now.
    mutating func setLinkKey(_ key: [UInt8]) {
        linkKey = key
        tokens = [:]
        for (purchase, link) in links { indexTokens(of: purchase, through: link.generation) }
    }

    /// The same web purchases under a link key of their own, for a clone under `project`: the
    /// HMAC of the original key over the clone's id, so that no link of one opens the other's
    /// purchases (every token of the clone differs from the original's).
    func rekeyed(for project: ProjectID) -> WebPurchases {
        var copy = self
        guard let linkKey else { return copy }
        copy.setLinkKey(HMACSHA256.code(key: linkKey, message: Array(("gatehouse clone " + project.rawValue).utf8)))
        return copy
    }

    /// A profile merged into another: what named the source names the target.
    mutating func followMerge(from source: ProfileID, into target: ProfileID) {
        for (key, owner) in pendingOwners where owner == source { pendingOwners[key] = target }
    }

    public static func == (a: WebPurchases, b: WebPurchases) -> Bool {
        a.pendingOwners == b.pendingOwners && a.linkKey == b.linkKey && a.links == b.links && a.sessions == b.sessions
            && a.paymentInvoices == b.paymentInvoices && a.invoiceSubscriptions == b.invoiceSubscriptions
            && a.refundedFractions == b.refundedFractions
    }
}

/// Stripe's event, normalized: what happened to which purchase, dated by Stripe's `created`.
/// The server turns the signed, parsed event into one of these against the project's config;
/// the rules (``ProjectState/applyStripe(_:nowMs:random:)``) decide what it changes.
public struct StripeNotice: Sendable, Equatable {
    public enum Action: Sendable, Equatable {
        /// `checkout.session.completed`: the session's purchase belongs to the profile its
        /// reference names, else to a new web profile holding the buyer's email. A payment
        /// (`oneTime`) is the purchase itself; a subscription's terms come with its invoices.
        case checkout(key: PurchaseKey, buyer: WebBuyer, oneTime: StoreTransaction?)
        /// `invoice.paid`: a term of a subscription (`initial`: the first invoice).
        case term(StoreTransaction, initial: Bool)
        /// `customer.subscription.updated` / `.deleted`: the subscription as Stripe has it now.
        case subscription(key: PurchaseKey, StripeSubscriptionState)
        /// `invoice_payment.paid`: `payment` (a PaymentIntent, or a charge made without one) paid
        /// `invoice`.
        case paymentLinked(payment: String, invoice: String)
        /// `charge.refunded`: `fraction` of `payment`'s charge is refunded so far
        /// (`amount_refunded / amount`: above 0, 1 for all of it).
        case refund(payment: String, fraction: Double)
        /// `charge.dispute.closed` as `lost`: the buyer's bank took `payment` back.
        case chargeback(payment: String)
        /// Taken as seen and nothing else: an event type the server does not use, one of the
        /// other mode, a price the config does not sell, a dispute not lost, an invoice payment
        /// not paid, a charge with nothing refunded.
        case recordOnly
    }

    /// Stripe's event id (`evt_…`): applied once.
    public var eventID: String
    /// Stripe's `created`, in ms.
    public var atMs: Int64
    public var action: Action

    public init(eventID: String, atMs: Int64, action: Action) {
        self.eventID = eventID
        self.atMs = atMs
        self.action = action
    }
}

/// Who bought, as a Checkout Session says: `client_reference_id` (or `metadata.app_user_id`),
/// and the email Stripe collected.
public struct WebBuyer: Sendable, Equatable {
    public var reference: String?
    public var email: String?
    /// The Checkout Session's id, which the success page is opened with.
    public var sessionID: String?

    public init(reference: String?, email: String?, sessionID: String? = nil) {
        self.reference = reference
        self.email = email
        self.sessionID = sessionID
    }
}

/// A Stripe subscription's state as an event shows it.
public struct StripeSubscriptionState: Sendable, Equatable {
    public enum Status: Sendable, Equatable {
        /// `trialing`, `active`.
        case active
        /// `past_due`: in grace within the project's grace period, else billing retry.
        case pastDue
        /// `unpaid`, `canceled`, `incomplete_expired`, `paused`, or the subscription deleted.
        case ended
        /// `incomplete`: the first payment is not made yet; nothing changes.
        case incomplete
    }

    public var status: Status
    public var cancelAtPeriodEnd: Bool
    /// The product of the subscription's item's price, when the config sells it.
    public var productID: String?
    /// The current period of the subscription's item.
    public var periodStartMs: Int64
    public var periodEndMs: Int64

    public init(status: Status, cancelAtPeriodEnd: Bool, productID: String?, periodStartMs: Int64, periodEndMs: Int64) {
        self.status = status
        self.cancelAtPeriodEnd = cancelAtPeriodEnd
        self.productID = productID
        self.periodStartMs = periodStartMs
        self.periodEndMs = periodEndMs
    }
}
