public import GatehouseCore
import GatehouseWire

extension AppStoreVerifiedNotification {
    /// The verified notification as the purchase rules take it: the notification id is
    /// `notificationUUID` (a redelivery is applied once), its date is the notification's
    /// `signedDate` (what orders late deliveries; `receivedAtMs` when absent), and the purchase
    /// and its whole transaction come from `signedTransactionInfo`, so a notification about a
    /// purchase the server has never seen creates it rather than failing. Call it only on a
    /// notification that verified and matched the project's app.
    ///
    /// What each type does is ``event(for:subtype:transaction:appStoreTransaction:renewalInfo:)``'s.
    /// A notification without a transaction (`TEST`, `RENEWAL_EXTENSION`, external purchase
    /// tokens…) is only recorded as seen.
    ///
    /// - Throws: `bad_request` when the notification UUID or a transaction field it needs is
    ///   missing.
    public func storeNotification(receivedAtMs: Int64) throws(GatehouseError) -> StoreNotification {
        let id = notification.notificationUUID
        guard AppStoreTransaction.idLength.contains(id.count) else {
            throw .badField("notificationUUID", "must be 1–128 characters")
        }
        let atMs = notification.signedDate ?? receivedAtMs
        guard let appStoreTransaction = transaction else {
            return StoreNotification(store: TestStore.appStoreName, notificationID: id, originalTransactionID: "",
                                     atMs: atMs, event: .recordOnly)
        }
        let storeTransaction = try appStoreTransaction.storeTransaction()
        let event = Self.event(
            for: notification.notificationType, subtype: notification.subtype, transaction: storeTransaction,
            appStoreTransaction: appStoreTransaction, renewalInfo: renewalInfo)
        return StoreNotification(store: TestStore.appStoreName, notificationID: id,
                                 originalTransactionID: storeTransaction.key.id, atMs: atMs, event: event,
                                 transaction: storeTransaction)
    }

    /// What one notification type (and subtype) does to the purchase of `transaction`
    /// (docs/app-store.md has the table):
    ///
    /// - `SUBSCRIBED` (`INITIAL_BUY`, `RESUBSCRIBE`), `ONE_TIME_CHARGE`, and `OFFER_REDEEMED`
    ///   `INITIAL_BUY`/`RESUBSCRIBE`: a purchase (a known subscription with a new term: a
    ///   resubscribe).
    /// - `DID_RENEW`: a renewal with the transaction's term; `BILLING_RECOVERY`: billing
    ///   recovered with that term.
    /// - `DID_FAIL_TO_RENEW`: a billing issue; with `GRACE_PERIOD`, grace until the renewal
    ///   info's `gracePeriodExpiresDate` (without one, or without the subtype, the project's
    ///   `grace_period_ms` decides).
    /// - `GRACE_PERIOD_EXPIRED`, `EXPIRED` (every subtype): expired.
    /// - `DID_CHANGE_RENEWAL_STATUS`: `AUTO_RENEW_DISABLED` cancel, `AUTO_RENEW_ENABLED` uncancel.
    /// - `DID_CHANGE_RENEWAL_PREF` and `OFFER_REDEEMED` with `UPGRADE`: an upgrade to the
    ///   transaction's product with its term, at once. `DOWNGRADE`, no subtype (a downgrade
    ///   undone), and `OFFER_REDEEMED` without a subtype take effect at the next renewal, which
    ///   `DID_RENEW` reports: recorded only.
    /// - `REFUND`: the transaction refunded by `revocationPercentage` / 100000 (at least
    ///   0.001 %, so the term counts as refunded), or wholly when absent. `REFUND_REVERSED`:
    ///   the refund undone. `REVOKE`: revoked (Family Sharing ended).
    /// - `RENEWAL_EXTENDED`: the term's end moves to the transaction's `expiresDate`.
    /// - Everything else (`REFUND_DECLINED`, `PRICE_INCREASE`, `CONSUMPTION_REQUEST`, `TEST`,
    ///   `RENEWAL_EXTENSION`, `EXTERNAL_PURCHASE_TOKEN`, `METADATA_UPDATE`, `MIGRATION`,
    ///   `PRICE_CHANGE`, `RESCIND_CONSENT`, types Apple adds later), and any subscription-only
    ///   type about a one-time purchase: recorded only.
    public static func event(
        for type: AppStoreNotificationType, subtype: AppStoreNotificationSubtype?, transaction: StoreTransaction,
        appStoreTransaction: AppStoreTransaction, renewalInfo: AppStoreRenewalInfo?
    ) -> StoreNotification.Event {
        let term = SubscriptionTerm(transactionID: transaction.transactionID, purchasedMs: transaction.purchasedMs,
                                    expiresMs: transaction.expiresMs, price: transaction.price)
        switch type {
        case .subscribed, .oneTimeCharge:
            return .purchase(transaction)
        case .offerRedeemed:
            if subtype == .upgrade { return upgrade(transaction, term) }
            return subtype == .initialBuy || subtype == .resubscribe ? .purchase(transaction) : .recordOnly
        case .refund:
            let fraction = appStoreTransaction.revocationPercentage.map { Double(min(max($0, 1), 100_000)) / 100_000 } ?? 1
            return .change(.refund(transactionID: transaction.transactionID, fraction: fraction))
        case .refundReversed:
            return .change(.refundReversed(transactionID: transaction.transactionID))
        case .revoke:
            return .change(.revoke)
        default:
            guard transaction.kind == .subscription else { return .recordOnly }
            return subscriptionEvent(for: type, subtype: subtype, transaction: transaction, term: term,
                                     renewalInfo: renewalInfo)
        }
    }

    /// The types only a subscription has.
    private static func subscriptionEvent(
        for type: AppStoreNotificationType, subtype: AppStoreNotificationSubtype?, transaction: StoreTransaction,
        term: SubscriptionTerm, renewalInfo: AppStoreRenewalInfo?
    ) -> StoreNotification.Event {
        switch type {
        case .didRenew:
            return .change(subtype == .billingRecovery ? .recover(term) : .renewal(term))
        case .didFailToRenew:
            let grace = subtype == .gracePeriod ? renewalInfo?.gracePeriodExpiresDate : nil
            return .change(.billingIssue(graceExpiresMs: grace))
        case .gracePeriodExpired, .expired:
            return .change(.expire)
        case .didChangeRenewalStatus:
            if subtype == .autoRenewDisabled { return .change(.cancel) }
            return subtype == .autoRenewEnabled ? .change(.uncancel) : .recordOnly
        case .didChangeRenewalPref:
            return subtype == .upgrade ? upgrade(transaction, term) : .recordOnly
        case .renewalExtended:
            return .change(.extend(term))
        default:
            return .recordOnly
        }
    }

    private static func upgrade(_ transaction: StoreTransaction, _ term: SubscriptionTerm) -> StoreNotification.Event {
        guard transaction.kind == .subscription else { return .recordOnly }
        return .change(.upgrade(newProductID: transaction.productID, term: term))
    }
}
