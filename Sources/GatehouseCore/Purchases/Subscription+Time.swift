extension Subscription {
    /// When the subscription would expire by time alone, if nothing renews it: the timer the
    /// runtime keeps. `nil` for a status time does not end.
    public var nextDeadlineMs: Int64? {
        switch status {
        case .active, .billingRetry: expiresMs
        case .grace: graceExpiresMs
        case .expired, .refunded, .revoked: nil
        }
    }

    /// Marks the subscription `expired` once its deadline has passed with no renewal; `nil`
    /// when nothing is due. The store's dates are left alone, so a renewal the store dated
    /// before `nowMs` but delivered later still brings the subscription back.
    public func expireIfDue(nowMs: Int64) -> SubscriptionTransition? {
        guard let deadline = nextDeadlineMs, nowMs >= deadline else { return nil }
        var next = self
        next.status = .expired
        next.graceExpiresMs = nil
        next.storeGraceExpiresMs = nil
        return SubscriptionTransition(subscription: next, effects: [SubscriptionEffect(.expiration)])
    }

    /// Whether the subscription grants its product's entitlements at `nowMs`.
    public func isEntitling(nowMs: Int64) -> Bool {
        switch status {
        case .active: nowMs < expiresMs
        case .grace: nowMs < (graceExpiresMs ?? expiresMs)
        case .billingRetry, .expired, .refunded, .revoked: false
        }
    }
}

extension Subscription {
    /// Whether a profile document shows both the same: the product, status, dates, renewal,
    /// period type and environment, and the terms (their refunds and paid amounts). What only
    /// orders notifications (the store dates behind each part) is not shown.
    public func looksTheSame(as other: Subscription) -> Bool {
        productID == other.productID && status == other.status && expiresMs == other.expiresMs
            && graceExpiresMs == other.graceExpiresMs && willRenew == other.willRenew && periodType == other.periodType
            && environment == other.environment && terms == other.terms
    }
}
