/// What kind of purchase an entitlement's answer comes from.
public enum EntitlementSource: String, Sendable, Equatable, CaseIterable {
    case subscription
    case oneTimePurchase = "one_time_purchase"
    case promotional
}

/// One entitlement of a profile as the profile document shows it (PROTOCOL.md, "Profiles":
/// `is_active, product_id, store, expires_ms, grace_expires_ms, will_renew, period_type,
/// billing_issue`), taken from the single source ``Entitlements/compute(config:subscriptions:purchases:grants:nowMs:)``
/// chose.
///
/// Per source:
/// - subscription: its product, store, `expiresMs` (end of the current term), `graceExpiresMs`
///   (set while in grace), `willRenew`, period type, and `billingIssue` while in `grace` or
///   `billing_retry`.
/// - one-time purchase (a non-consumable): its product and store, `expiresMs` and
///   `graceExpiresMs` `nil` (for life), `willRenew` false, period type `normal`, no billing issue.
/// - promotional grant: `productID` `nil`, store `promotional`, the grant's `expiresMs` (`nil`:
///   for life), `graceExpiresMs` `nil`, `willRenew` false, period type `normal`, no billing issue.
public struct EntitlementView: Sendable, Equatable {
    public var entitlementID: String
    public var isActive: Bool
    public var source: EntitlementSource
    /// `nil` for a promotional grant.
    public var productID: String?
    /// The store, or `promotional` for a grant.
    public var store: String
    /// `nil`: for life.
    public var expiresMs: Int64?
    public var graceExpiresMs: Int64?
    public var willRenew: Bool
    /// A ``SubscriptionPeriodType`` raw value; `normal` for one-time purchases and grants.
    public var periodType: String
    /// The subscription is in `grace` or `billing_retry`.
    public var billingIssue: Bool

    public init(
        entitlementID: String, isActive: Bool, source: EntitlementSource, productID: String?, store: String,
        expiresMs: Int64?, graceExpiresMs: Int64?, willRenew: Bool, periodType: String, billingIssue: Bool
    ) {
        self.entitlementID = entitlementID
        self.isActive = isActive
        self.source = source
        self.productID = productID
        self.store = store
        self.expiresMs = expiresMs
        self.graceExpiresMs = graceExpiresMs
        self.willRenew = willRenew
        self.periodType = periodType
        self.billingIssue = billingIssue
    }
}

/// The entitlement rule (DESIGN.md, "Subscription life and entitlements"): an entitlement is
/// active while any purchase its profile owns grants it and is itself live, and the answer shows,
/// per entitlement, the source that lasts longest.
public enum Entitlements {
    /// The store name promotional grants show.
    public static let promotionalStore = "promotional"

    /// Every entitlement any of the profile's sources ever gave it, live or not, by entitlement id.
    ///
    /// Products map to entitlements through `config` as it is now: a product the config no longer
    /// names grants nothing, and an entitlement the config no longer names is not listed (neither
    /// from a product nor from a promotional grant). A subscription grants its product's
    /// entitlements whatever the product's type; a one-time purchase grants only when its product
    /// is a non-consumable (a consumable, or a product now configured as a subscription, grants
    /// nothing).
    ///
    /// Liveness at `nowMs`: a subscription while ``Subscription/isEntitling(nowMs:)`` (`active`
    /// before `expiresMs`, `grace` before `graceExpiresMs`); a non-consumable while
    /// ``OneTimePurchase/isLive``; a grant while ``PromotionalGrant/isLive(nowMs:)``.
    ///
    /// The source shown, deterministically:
    /// - Active (some source live), among the live sources: the one lasting longest, where a
    ///   non-consumable or a grant without expiry lasts for life, a grant until its `expiresMs`,
    ///   and a subscription until `graceExpiresMs` in grace, else `expiresMs`. Ties go to the
    ///   kind subscription, then one-time purchase, then promotional; then to the most recent
    ///   start (below); then to the smaller store, then the smaller transaction id (a
    ///   subscription's original transaction id).
    /// - Inactive (no source live), among all its sources: the most recent one by start, a
    ///   subscription's latest term purchase (or its last event when it has no term), a
    ///   purchase's `purchasedMs`, a grant's `grantedMs`; ties go to the one lasting longest as
    ///   above, then by kind, store and transaction id as above.
    /// - What still ties is a duplicate (same kind, store and id, or two grants with the same
    ///   dates): the first in the input order wins.
    public static func compute(
        config: ProjectConfig, subscriptions: [Subscription], purchases: [OneTimePurchase],
        grants: [PromotionalGrant], nowMs: Int64
    ) -> [String: EntitlementView] {
        compute(catalog: Catalog(config), subscriptions: subscriptions, purchases: purchases, grants: grants, nowMs: nowMs)
    }

    /// What the computation needs of a config, looked up once per config rather than per answer.
    public struct Catalog: Sendable, Equatable {
        let known: Set<String>
        let products: [String: ProductDefinition]

        public init(_ config: ProjectConfig) {
            known = Set(config.entitlements.map(\.id))
            var products: [String: ProductDefinition] = [:]
            for product in config.products where products[product.id] == nil {
                products[product.id] = product
            }
            self.products = products
        }
    }

    public static func compute(
        catalog: Catalog, subscriptions: [Subscription], purchases: [OneTimePurchase],
        grants: [PromotionalGrant], nowMs: Int64
    ) -> [String: EntitlementView] {
        let known = catalog.known
        let products = catalog.products
        func entitlements(of productID: String, allowing types: Set<ProductType>) -> [String] {
            guard let product = products[productID], types.contains(product.type) else { return [] }
            var seen = Set<String>()
            return product.entitlements.filter { known.contains($0) && seen.insert($0).inserted }
        }

        var candidates: [String: [Candidate]] = [:]
        for subscription in subscriptions {
            let candidate = Candidate(subscription: subscription, nowMs: nowMs)
            for id in entitlements(of: subscription.productID, allowing: Set(ProductType.allCases)) {
                candidates[id, default: []].append(candidate)
            }
        }
        for purchase in purchases {
            let candidate = Candidate(purchase: purchase)
            for id in entitlements(of: purchase.productID, allowing: [.nonConsumable]) {
                candidates[id, default: []].append(candidate)
            }
        }
        for grant in grants where known.contains(grant.entitlementID) {
            candidates[grant.entitlementID, default: []].append(Candidate(grant: grant, nowMs: nowMs))
        }

        var views: [String: EntitlementView] = [:]
        for (id, sources) in candidates {
            let live = sources.filter(\.isLive)
            let chosen: Candidate?
            if live.isEmpty {
                chosen = sources.reduce(nil) { best, next in
                    guard let best else { return next }
                    return Candidate.isMoreRecent(next, than: best) ? next : best
                }
            } else {
                chosen = live.reduce(nil) { best, next in
                    guard let best else { return next }
                    return Candidate.lastsLonger(next, than: best) ? next : best
                }
            }
            guard let chosen else { continue }
            views[id] = chosen.view(entitlementID: id)
        }
        return views
    }

    /// ``compute(config:subscriptions:purchases:grants:nowMs:)`` as a list ordered by entitlement id.
    public static func computeOrdered(
        config: ProjectConfig, subscriptions: [Subscription], purchases: [OneTimePurchase],
        grants: [PromotionalGrant], nowMs: Int64
    ) -> [EntitlementView] {
        compute(config: config, subscriptions: subscriptions, purchases: purchases, grants: grants, nowMs: nowMs)
            .values.sorted { $0.entitlementID < $1.entitlementID }
    }
}

// MARK: Choosing a source

/// One source of an entitlement, reduced to what the choice and the view need.
private struct Candidate {
    let source: EntitlementSource
    let isLive: Bool
    /// Until when it grants; `nil`: for life.
    let lastsUntilMs: Int64?
    let startMs: Int64
    let store: String
    let transactionID: String
    /// The view, with `entitlementID` and `isActive` filled in by ``view(entitlementID:)``.
    let template: EntitlementView

    init(subscription: Subscription, nowMs: Int64) {
        source = .subscription
        isLive = subscription.isEntitling(nowMs: nowMs)
        lastsUntilMs =
            subscription.status == .grace
            ? (subscription.graceExpiresMs ?? subscription.expiresMs) : subscription.expiresMs
        startMs = subscription.terms.map(\.purchasedMs).max() ?? subscription.lastEventMs
        store = subscription.store
        transactionID = subscription.originalTransactionID
        template = EntitlementView(
            entitlementID: "", isActive: false, source: .subscription, productID: subscription.productID,
            store: subscription.store, expiresMs: subscription.expiresMs,
            graceExpiresMs: subscription.graceExpiresMs, willRenew: subscription.willRenew,
            periodType: subscription.periodType.rawValue,
            billingIssue: subscription.status == .grace || subscription.status == .billingRetry)
    }

    init(purchase: OneTimePurchase) {
        source = .oneTimePurchase
        isLive = purchase.isLive
        lastsUntilMs = nil
        startMs = purchase.purchasedMs
        store = purchase.store
        transactionID = purchase.transactionID
        template = EntitlementView(
            entitlementID: "", isActive: false, source: .oneTimePurchase, productID: purchase.productID,
            store: purchase.store, expiresMs: nil, graceExpiresMs: nil, willRenew: false,
            periodType: SubscriptionPeriodType.normal.rawValue, billingIssue: false)
    }

    init(grant: PromotionalGrant, nowMs: Int64) {
        source = .promotional
        isLive = grant.isLive(nowMs: nowMs)
        lastsUntilMs = grant.expiresMs
        startMs = grant.grantedMs
        store = Entitlements.promotionalStore
        transactionID = ""
        template = EntitlementView(
            entitlementID: "", isActive: false, source: .promotional, productID: nil,
            store: Entitlements.promotionalStore, expiresMs: grant.expiresMs, graceExpiresMs: nil,
            willRenew: false, periodType: SubscriptionPeriodType.normal.rawValue, billingIssue: false)
    }

    func view(entitlementID: String) -> EntitlementView {
        var view = template
        view.entitlementID = entitlementID
        view.isActive = isLive
        return view
    }

    private var kindRank: Int {
        switch source {
        case .subscription: 0
        case .oneTimePurchase: 1
        case .promotional: 2
        }
    }

    /// -1, 0 or 1 as `a` lasts shorter than, as long as, or longer than `b` (for life is longest).
    private static func compareLasting(_ a: Candidate, _ b: Candidate) -> Int {
        switch (a.lastsUntilMs, b.lastsUntilMs) {
        case (nil, nil): 0
        case (nil, _): 1
        case (_, nil): -1
        case (let x?, let y?): x == y ? 0 : (x > y ? 1 : -1)
        }
    }

    /// Whether `a` beats `b` among live sources (ties keep `b`, the earlier one).
    static func lastsLonger(_ a: Candidate, than b: Candidate) -> Bool {
        let lasting = compareLasting(a, b)
        if lasting != 0 { return lasting > 0 }
        if a.kindRank != b.kindRank { return a.kindRank < b.kindRank }
        if a.startMs != b.startMs { return a.startMs > b.startMs }
        return (a.store, a.transactionID) < (b.store, b.transactionID)
    }

    /// Whether `a` beats `b` among lapsed sources (ties keep `b`, the earlier one).
    static func isMoreRecent(_ a: Candidate, than b: Candidate) -> Bool {
        if a.startMs != b.startMs { return a.startMs > b.startMs }
        let lasting = compareLasting(a, b)
        if lasting != 0 { return lasting > 0 }
        if a.kindRank != b.kindRank { return a.kindRank < b.kindRank }
        return (a.store, a.transactionID) < (b.store, b.transactionID)
    }
}
