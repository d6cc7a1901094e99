public import GatehouseCore

/// What the subscriber object shows of a profile's purchases (HTTP.md, "The subscriber object"):
/// its holdings, its promotional grants, and the purchases it lost to transfers.
///
/// The holdings list every entitlement the profile ever had, and one it had only through a
/// purchase that has since moved to another profile (DESIGN.md, "Who owns a purchase") is listed
/// inactive. RevenueCat's SDKs drop an entitlement whose `product_identifier` names no purchase
/// of the body, so the body shows such a purchase, lapsed, from `formerSubscriptions` and
/// `formerPurchases`, and only where the profile holds nothing of that product itself.
public struct CustomerInfoPurchases: Sendable, Equatable {
    public var holdings: ProjectState.Holdings
    /// The profile's grants (one per entitlement), revoked and lapsed ones included.
    public var grants: [PromotionalGrant]
    public var formerSubscriptions: [Subscription]
    public var formerPurchases: [OneTimePurchase]

    public init(
        holdings: ProjectState.Holdings, grants: [PromotionalGrant], formerSubscriptions: [Subscription] = [],
        formerPurchases: [OneTimePurchase] = []
    ) {
        self.holdings = holdings
        self.grants = grants
        self.formerSubscriptions = formerSubscriptions
        self.formerPurchases = formerPurchases
    }

    /// What `state` holds for the profile `profileID` names (its id or an alias) at `nowMs`.
    public init(state: ProjectState, profileID: ProfileID, nowMs: Int64) {
        let id = state.profiles.canonicalID(profileID) ?? profileID
        let former = state.purchases.formerHoldings(of: id)
        self.init(
            holdings: state.holdings(of: id, nowMs: nowMs), grants: state.purchases.grants(of: id),
            formerSubscriptions: former.subscriptions, formerPurchases: former.purchases)
    }
}

/// A subscription as the body shows it.
struct ShownSubscription {
    let subscription: Subscription
    /// The profile lost it to a transfer: it shows lapsed, whatever its state with its owner.
    let lost: Bool
}

/// The one-time purchases of one product as the body lists them.
struct ShownPurchases {
    var purchases: [OneTimePurchase]
    /// The profile lost them to transfers: they show lapsed.
    var lost: Bool
}

/// The purchases of ``CustomerInfoPurchases`` arranged by product id, as the body's
/// `subscriptions` and `non_subscriptions` key them.
struct PurchasesByProduct {
    /// Per product, the one subscription shown: of several, the one lasting longest.
    var subscriptions: [String: ShownSubscription] = [:]
    var oneTime: [String: ShownPurchases] = [:]

    init(_ purchases: CustomerInfoPurchases, nowMs: Int64) {
        for subscription in purchases.holdings.subscriptions {
            show(ShownSubscription(subscription: subscription, lost: false), nowMs: nowMs)
        }
        for purchase in purchases.holdings.purchases {
            oneTime[purchase.productID, default: ShownPurchases(purchases: [], lost: false)].purchases.append(purchase)
        }
        let lapsed = purchases.holdings.entitlements.filter { !$0.isActive }
        let lostSubscriptionProducts = Set(lapsed.filter { $0.source == .subscription }.compactMap(\.productID))
            .subtracting(subscriptions.keys)
        for subscription in purchases.formerSubscriptions where lostSubscriptionProducts.contains(subscription.productID) {
            show(ShownSubscription(subscription: subscription, lost: true), nowMs: nowMs)
        }
        let lostPurchaseProducts = Set(lapsed.filter { $0.source == .oneTimePurchase }.compactMap(\.productID))
            .subtracting(oneTime.keys)
        for purchase in purchases.formerPurchases where lostPurchaseProducts.contains(purchase.productID) {
            oneTime[purchase.productID, default: ShownPurchases(purchases: [], lost: true)].purchases.append(purchase)
        }
        for product in oneTime.keys {
            oneTime[product]?.purchases.sort { ($0.purchasedMs, $0.store, $0.transactionID) < ($1.purchasedMs, $1.store, $1.transactionID) }
        }
    }

    private mutating func show(_ candidate: ShownSubscription, nowMs: Int64) {
        let product = candidate.subscription.productID
        if let shown = subscriptions[product], !candidate.showsOver(shown, nowMs: nowMs) { return }
        subscriptions[product] = candidate
    }
}

extension ShownSubscription {
    /// Whether this one shows over `other`, of the same product: a live one over a lapsed one;
    /// of live ones the one lasting longer, then the newer; of lapsed ones the newer, then the
    /// one lasting longer. Equals keep the one shown first.
    func showsOver(_ other: ShownSubscription, nowMs: Int64) -> Bool {
        let live = isLive(nowMs: nowMs)
        if live != other.isLive(nowMs: nowMs) { return live }
        let mine = (lastsUntilMs, latestPurchaseMs)
        let theirs = (other.lastsUntilMs, other.latestPurchaseMs)
        return live ? mine > theirs : (mine.1, mine.0) > (theirs.1, theirs.0)
    }

    func isLive(nowMs: Int64) -> Bool { !lost && subscription.isEntitling(nowMs: nowMs) }

    /// The end of access while it entitles: the end of grace in grace, else of the current term.
    var lastsUntilMs: Int64 {
        subscription.status == .grace ? (subscription.graceExpiresMs ?? subscription.expiresMs) : subscription.expiresMs
    }

    /// Its latest term's purchase (a renewal's date), as ``Entitlements`` dates a subscription.
    var latestPurchaseMs: Int64 { subscription.terms.map(\.purchasedMs).max() ?? subscription.lastEventMs }

    /// Its first known term's purchase.
    var originalPurchaseMs: Int64 { subscription.terms.map(\.purchasedMs).min() ?? subscription.lastEventMs }
}

extension ShownPurchases {
    /// The purchase an entitlement of this product comes from: a live one over a lapsed one,
    /// then the newest.
    var entitling: OneTimePurchase? {
        purchases.max { a, b in a.isLive != b.isLive ? b.isLive : a.purchasedMs < b.purchasedMs }
    }
}
