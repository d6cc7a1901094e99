public import GatehouseCore

/// What a purchase op answers: the profile document it is about (none for a notification),
/// and what the op reports beside it.
public struct PurchaseOutcome: Sendable {
    /// The reporter's or the grantee's document; `nil` for `store.notify`.
    public var view: ProfileView?
    public var transferredFrom: [ProfileID]
    public var keptByOther: [String]
    /// `store.notify`: false for a repeated notification id.
    public var applied: Bool
    /// `store.notify`: the purchase's owner, if any.
    public var owner: ProfileID?
}

/// Turns a request's store data into what the rules take, against the project's config as it is
/// when the op runs (which store is enabled, which product is a subscription).
public typealias StoreInput<Value> = @Sendable (ProjectConfig, _ nowMs: Int64) throws(GatehouseError) -> Value

/// Purchase ops, inside the project's actor: decide (pure rules in GatehouseCore), log, apply.
extension Project {
    public func reportPurchase(profile lookup: ProfileLookup, _ input: StoreInput<StoreTransaction>) throws(GatehouseError)
        -> Committed<PurchaseOutcome>
    {
        let now = nowMs
        let transaction = try input(peek { $0.config }, now)
        let profile = try resolveID(lookup)
        return try carryOut(try reading { state throws(GatehouseError) in try state.reportPurchase(profile: profile, transaction: transaction, nowMs: now) })
    }

    public func restorePurchases(profile lookup: ProfileLookup, _ input: StoreInput<[StoreTransaction]>) throws(GatehouseError)
        -> Committed<PurchaseOutcome>
    {
        let now = nowMs
        let transactions = try input(peek { $0.config }, now)
        let profile = try resolveID(lookup)
        return try carryOut(try reading { state throws(GatehouseError) in try state.restorePurchases(profile: profile, transactions: transactions, nowMs: now) })
    }

    public func notify(_ input: StoreInput<StoreNotification>) throws(GatehouseError) -> Committed<PurchaseOutcome> {
        let now = nowMs
        let notification = try input(peek { $0.config }, now)
        return try carryOut(try reading { state throws(GatehouseError) in try state.notify(notification, nowMs: now) }, withDocument: false)
    }

    /// One of Stripe's events, turned into a notice against the config as it is when the op
    /// runs (which prices it sells, which mode it takes).
    public func notifyStripe(_ input: StoreInput<StripeNotice>) throws(GatehouseError) -> Committed<PurchaseOutcome> {
        let (now, random) = (nowMs, random)
        let notice = try input(peek { $0.config }, now)
        return try carryOut(try reading { state throws(GatehouseError) in try state.applyStripe(notice, nowMs: now, random: random) },
                            withDocument: false)
    }

    public func grantEntitlement(profile lookup: ProfileLookup, entitlement: String, expiresMs: Int64?) throws(GatehouseError)
        -> Committed<PurchaseOutcome>
    {
        try grantEntitlement(profile: lookup, entitlement: entitlement) { _ in expiresMs }
    }

    /// A grant whose end is reckoned from the moment it is made (`nil`: for life), which is the
    /// grant's start: a duration such as RevenueCat's `monthly` ends exactly one month after it.
    public func grantEntitlement(profile lookup: ProfileLookup, entitlement: String, expiring expiresMs: @Sendable (_ startMs: Int64) -> Int64?)
        throws(GatehouseError) -> Committed<PurchaseOutcome>
    {
        let now = nowMs
        let end = expiresMs(now)
        let profile = try resolveID(lookup)
        return try carryOut(try reading { state throws(GatehouseError) in
            try state.grantEntitlement(profile: profile, entitlement: entitlement, expiresMs: end, nowMs: now)
        })
    }

    public func revokeEntitlement(profile lookup: ProfileLookup, entitlement: String) throws(GatehouseError)
        -> Committed<PurchaseOutcome>
    {
        let now = nowMs
        let profile = try resolveID(lookup)
        return try carryOut(try reading { state throws(GatehouseError) in try state.revokeEntitlement(profile: profile, entitlement: entitlement, nowMs: now) })
    }

    private func carryOut(_ decision: ProjectState.PurchaseDecision, withDocument: Bool = true) throws(GatehouseError)
        -> Committed<PurchaseOutcome>
    {
        let lsn = try commitIfAny(decision.batch)
        var document: ProfileView?
        if withDocument, let id = decision.profileID { document = view(of: id) }
        let outcome = PurchaseOutcome(view: document, transferredFrom: decision.transferredFrom, keptByOther: decision.keptByOther,
                                      applied: decision.applied, owner: decision.profileID)
        return Committed(outcome, lsn: lsn)
    }
}
