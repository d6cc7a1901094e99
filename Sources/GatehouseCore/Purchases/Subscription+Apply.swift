extension Subscription {
    /// Applies what the store says, dated `atMs` by the store, and returns the new subscription
    /// with the feed events it produces. Pure: a stale or repeated event returns the subscription
    /// unchanged (but for `lastEventMs`) and no events. Expiry by the server's clock is
    /// ``expireIfDue(nowMs:)``'s, not this function's.
    public func apply(_ event: SubscriptionEvent, atMs: Int64, gracePeriodMs: Int64) -> SubscriptionTransition {
        var next = self
        next.lastEventMs = max(lastEventMs, atMs)
        let effects: [SubscriptionEffect]
        switch event {
        case .purchase(let term, let periodType):
            effects = next.addTerm(term, periodType: periodType, as: .initialPurchase, atMs: atMs, gracePeriodMs: gracePeriodMs)
        case .renewal(let term), .recover(let term?):
            effects = next.addTerm(term, periodType: .normal, as: .renewal, atMs: atMs, gracePeriodMs: gracePeriodMs)
        case .recover(nil):
            effects = next.recoverBilling(atMs: atMs)
        case .cancel:
            effects = next.setWillRenew(false, atMs: atMs)
        case .uncancel:
            effects = next.setWillRenew(true, atMs: atMs)
        case .billingIssue(let graceExpiresMs):
            effects = next.billingIssue(graceExpiresMs: graceExpiresMs, atMs: atMs, gracePeriodMs: gracePeriodMs)
        case .expire:
            effects = next.expire(atMs: atMs)
        case .refund(let transactionID, let fraction):
            effects = next.markRefund(transactionID, fraction: min(max(fraction, 0), 1), atMs: atMs)
        case .refundReversed(let transactionID):
            effects = next.markRefund(transactionID, fraction: 0, atMs: atMs)
        case .revoke:
            effects = next.revoke(atMs: atMs)
        case .productChange(let newProductID):
            effects = next.changeProduct(to: newProductID, atMs: atMs)
        case .upgrade(let newProductID, let term):
            effects = next.upgrade(to: newProductID, term: term, atMs: atMs, gracePeriodMs: gracePeriodMs)
        case .extend(let term):
            effects = next.extend(term, atMs: atMs, gracePeriodMs: gracePeriodMs)
        }
        return SubscriptionTransition(subscription: next, effects: effects)
    }

    /// The status without the refund of the current term laid over it: what status events
    /// change, and what a reversal returns to.
    var baseStatus: SubscriptionStatus {
        get { status == .refunded ? (statusBeforeRefund ?? .active) : status }
        set {
            if status == .refunded { statusBeforeRefund = newValue } else { status = newValue }
        }
    }

    /// Keeps `refunded` exactly when the current term is refunded (a revoke outranks it).
    mutating func layRefundOverStatus() {
        guard status != .revoked else { return }
        let currentRefunded = currentTerm?.isRefunded ?? false
        if currentRefunded, status != .refunded {
            statusBeforeRefund = status
            status = .refunded
        } else if !currentRefunded, status == .refunded {
            status = statusBeforeRefund ?? .active
            statusBeforeRefund = nil
        }
    }

    /// Only a status that still grants or awaits billing reports its changes to the feed.
    var reportsStatusChanges: Bool { status != .refunded && status != .revoked }

    // MARK: Terms

    mutating func addTerm(
        _ term: SubscriptionTerm, periodType: SubscriptionPeriodType, as type: EventType, atMs: Int64, gracePeriodMs: Int64
    ) -> [SubscriptionEffect] {
        guard self.term(id: term.transactionID) == nil else { return [] }
        var term = term
        if let mark = refundMarks[term.transactionID] { term.refundedFraction = mark.fraction }
        let index = terms.firstIndex { SubscriptionTerm.precedes(term, $0) } ?? terms.endIndex
        terms.insert(term, at: index)
        // A late notification of a term older than the current one only completes the history.
        guard index == terms.endIndex - 1 else { return [] }
        expiresMs = term.expiresMs
        self.periodType = periodType
        guard status != .revoked else { return [] }
        if atMs >= statusMs {
            statusMs = atMs
            baseStatus = .active
            graceExpiresMs = nil
            storeGraceExpiresMs = nil
        } else if baseStatus == .grace, storeGraceExpiresMs == nil {
            // A newer billing issue already holds the status; its grace follows the new expiry.
            graceExpiresMs = expiresMs + gracePeriodMs
        }
        layRefundOverStatus()
        return [SubscriptionEffect(type)]
    }

    private mutating func markRefund(_ transactionID: String, fraction: Double, atMs: Int64) -> [SubscriptionEffect] {
        let previous = refundMarks[transactionID]
        if let previous, atMs < previous.atMs || previous == RefundMark(fraction: fraction, atMs: atMs) { return [] }
        refundMarks[transactionID] = RefundMark(fraction: fraction, atMs: atMs)
        let previousFraction = previous?.fraction ?? 0
        if let index = terms.firstIndex(where: { $0.transactionID == transactionID }) {
            terms[index].refundedFraction = fraction
        }
        layRefundOverStatus()
        guard fraction != previousFraction else { return [] }
        return [SubscriptionEffect(fraction > 0 ? .refund : .refundReversed)]
    }

    // MARK: Auto-renew and plan

    private mutating func setWillRenew(_ value: Bool, atMs: Int64) -> [SubscriptionEffect] {
        guard atMs >= willRenewMs else { return [] }
        willRenewMs = atMs
        guard willRenew != value else { return [] }
        willRenew = value
        return [SubscriptionEffect(value ? .uncancellation : .cancellation)]
    }

    mutating func changeProduct(to newProductID: String, atMs: Int64) -> [SubscriptionEffect] {
        guard atMs >= productMs else { return [] }
        productMs = atMs
        guard productID != newProductID else { return [] }
        productID = newProductID
        return [SubscriptionEffect(.productChange)]
    }

    // MARK: Status

    private mutating func billingIssue(graceExpiresMs storeGrace: Int64?, atMs: Int64, gracePeriodMs: Int64) -> [SubscriptionEffect] {
        guard atMs >= statusMs, [.active, .grace, .billingRetry].contains(baseStatus) else { return [] }
        statusMs = atMs
        let before = (baseStatus, graceExpiresMs)
        storeGraceExpiresMs = storeGrace
        if let storeGrace {
            baseStatus = .grace
            graceExpiresMs = storeGrace
        } else if gracePeriodMs > 0 {
            baseStatus = .grace
            graceExpiresMs = expiresMs + gracePeriodMs
        } else {
            baseStatus = .billingRetry
            graceExpiresMs = nil
        }
        guard reportsStatusChanges, before != (baseStatus, graceExpiresMs) else { return [] }
        return [SubscriptionEffect(.billingIssue)]
    }

    private mutating func recoverBilling(atMs: Int64) -> [SubscriptionEffect] {
        guard atMs >= statusMs, [.active, .grace, .billingRetry].contains(baseStatus) else { return [] }
        statusMs = atMs
        guard baseStatus != .active else { return [] }
        baseStatus = .active
        graceExpiresMs = nil
        storeGraceExpiresMs = nil
        return reportsStatusChanges ? [SubscriptionEffect(.renewal)] : []
    }

    private mutating func expire(atMs: Int64) -> [SubscriptionEffect] {
        guard atMs >= statusMs, status != .revoked else { return [] }
        statusMs = atMs
        guard baseStatus != .expired else { return [] }
        baseStatus = .expired
        graceExpiresMs = nil
        storeGraceExpiresMs = nil
        return reportsStatusChanges ? [SubscriptionEffect(.expiration)] : []
    }

    /// Revoking is final, whatever its date: no later or earlier notification undoes it.
    private mutating func revoke(atMs: Int64) -> [SubscriptionEffect] {
        guard status != .revoked else { return [] }
        status = .revoked
        statusMs = max(statusMs, atMs)
        statusBeforeRefund = nil
        graceExpiresMs = nil
        storeGraceExpiresMs = nil
        return [.revoked]
    }
}
