import GatehouseCore

// The purchases of the subscriber object: `subscriptions` entries (store subscriptions and
// promotional grants) and `non_subscriptions` transactions, with the dates they show.

extension ShownSubscription {
    /// `{purchase_date, original_purchase_date, expires_date, store, is_sandbox, period_type,
    /// ownership_type, unsubscribe_detected_at, billing_issues_detected_at,
    /// grace_period_expires_date, refunded_at, store_transaction_id, price}`.
    ///
    /// Where the model keeps no date of its own, the store's date of the notification behind the
    /// state stands in: auto-renew turned off is dated by the notification that turned it off,
    /// a billing issue by the one that reported it, a refund by its refund's. The SDKs read
    /// "will renew" from the first two, so they must be set whenever the state holds.
    func json(nowMs: Int64) -> JSONValue {
        let subscription = subscription
        return [
            "purchase_date": RevenueCatDate.json(ms: latestPurchaseMs),
            "original_purchase_date": RevenueCatDate.json(ms: originalPurchaseMs),
            "expires_date": RevenueCatDate.json(ms: shownExpiresMs(nowMs: nowMs)),
            "store": .string(RevenueCatStore.name(subscription.store)),
            "is_sandbox": .bool(subscription.environment == .sandbox),
            "period_type": .string(subscription.periodType.rawValue),
            "ownership_type": .string(subscription.familyShared ? "FAMILY_SHARED" : "PURCHASED"),
            "unsubscribe_detected_at": RevenueCatDate.json(ms: subscription.willRenew ? nil : subscription.willRenewMs),
            "billing_issues_detected_at": RevenueCatDate.json(ms: hasBillingIssue ? subscription.statusMs : nil),
            "grace_period_expires_date": RevenueCatDate.json(ms: shownGraceExpiresMs),
            "refunded_at": RevenueCatDate.json(ms: refundedAtMs),
            "store_transaction_id": .string(subscription.currentTerm?.transactionID ?? subscription.originalTransactionID),
            // The model keeps no currency, and the SDKs refuse a price without one.
            "price": .null,
        ]
    }

    /// The end of access while it is live; once lapsed, when it lapsed (a lost one: its latest
    /// purchase), before `nowMs`.
    func shownExpiresMs(nowMs: Int64) -> Int64 {
        if isLive(nowMs: nowMs) { return lastsUntilMs }
        let lapsedMs: Int64? =
            if lost {
                latestPurchaseMs
            } else {
                switch subscription.status {
                case .refunded: refundedAtMs
                case .revoked, .billingRetry: subscription.statusMs
                case .active, .grace, .expired: nil
                }
            }
        return CustomerInfoDocument.lapsed(min(lastsUntilMs, lapsedMs ?? lastsUntilMs), nowMs: nowMs)
    }

    /// The end of grace while the profile holds it in grace.
    var shownGraceExpiresMs: Int64? {
        !lost && subscription.status == .grace ? subscription.graceExpiresMs : nil
    }

    /// In grace or billing retry, beneath a refund of its current term too.
    private var hasBillingIssue: Bool {
        let status = subscription.status == .refunded ? (subscription.statusBeforeRefund ?? .active) : subscription.status
        return status == .grace || status == .billingRetry
    }

    /// When its current term was refunded, while that makes it `refunded`.
    private var refundedAtMs: Int64? {
        guard subscription.status == .refunded, let current = subscription.currentTerm else { return nil }
        return subscription.refundMarks[current.transactionID]?.atMs
    }
}

extension CustomerInfoDocument {
    /// The end a lapsed source shows: `ms`, if it is before `nowMs`, else just before it. The
    /// SDKs hold an entitlement active while its `expires_date` is not before `request_date`
    /// (iOS) or after it (Android), so a lapsed one must end strictly before.
    static func lapsed(_ ms: Int64, nowMs: Int64) -> Int64 {
        min(ms, nowMs - 1)
    }

    /// A grant as a subscription of the promotional store: never sandbox, never renewing.
    static func grantJSON(_ grant: PromotionalGrant, nowMs: Int64) -> JSONValue {
        [
            "purchase_date": RevenueCatDate.json(ms: grant.grantedMs),
            "original_purchase_date": RevenueCatDate.json(ms: grant.grantedMs),
            "expires_date": RevenueCatDate.json(ms: shownExpiresMs(grant, nowMs: nowMs)),
            "store": .string(Entitlements.promotionalStore),
            "is_sandbox": false,
            "period_type": .string(SubscriptionPeriodType.normal.rawValue),
            "ownership_type": "PURCHASED",
            "unsubscribe_detected_at": .null,
            "billing_issues_detected_at": .null,
            "grace_period_expires_date": .null,
            "refunded_at": .null,
            "store_transaction_id": .null,
            "price": .null,
        ]
    }

    /// Its end while live (`nil`: for life); lapsed, its end, or its start if it was revoked
    /// (the model keeps no time of a revoke), before `nowMs`.
    static func shownExpiresMs(_ grant: PromotionalGrant, nowMs: Int64) -> Int64? {
        if grant.isLive(nowMs: nowMs) { return grant.expiresMs }
        let lapsedMs = grant.revoked ? grant.grantedMs : (grant.expiresMs ?? grant.grantedMs)
        return lapsed(lapsedMs, nowMs: nowMs)
    }

    /// `nil` (for life) while live; lapsed (refunded, revoked or lost), its purchase, before
    /// `nowMs`: the model keeps no time of a one-time purchase's refund.
    static func shownExpiresMs(_ purchase: OneTimePurchase, lost: Bool, nowMs: Int64) -> Int64? {
        !lost && purchase.isLive ? nil : lapsed(purchase.purchasedMs, nowMs: nowMs)
    }

    /// `{id, store_transaction_id, purchase_date, original_purchase_date, store, is_sandbox,
    /// price}`: both ids are the store's transaction id (the SDKs drop a transaction without
    /// either, and finish a consumable only once its `store_transaction_id` comes back).
    static func purchaseJSON(_ purchase: OneTimePurchase) -> JSONValue {
        [
            "id": .string(purchase.transactionID),
            "store_transaction_id": .string(purchase.transactionID),
            "purchase_date": RevenueCatDate.json(ms: purchase.purchasedMs),
            "original_purchase_date": RevenueCatDate.json(ms: purchase.purchasedMs),
            "store": .string(RevenueCatStore.name(purchase.store)),
            "is_sandbox": .bool(purchase.environment == .sandbox),
            // As for subscriptions: no currency in the model.
            "price": .null,
        ]
    }
}
