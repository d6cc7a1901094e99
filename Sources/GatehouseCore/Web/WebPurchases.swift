/// What a project keeps of its web sales beyond the purchases themselves (DESIGN.md, "Web
/// purchases and redemption links").
public struct WebPurchases: Sendable, Equatable {
    /// Checkouts completed before their purchase was known: the owner the purchase gets when
    /// Stripe's first event about it arrives. Stripe sends a Checkout's events in no set order,
    /// and only the session names who bought.
    public internal(set) var pendingOwners: [PurchaseKey: ProfileID]

    public init(pendingOwners: [PurchaseKey: ProfileID] = [:]) {
        self.pendingOwners = pendingOwners
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
        /// Taken as seen and nothing else: an event type the server does not use, one of the
        /// other mode, a price the config does not sell.
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

    public init(reference: String?, email: String?) {
        self.reference = reference
        self.email = email
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
