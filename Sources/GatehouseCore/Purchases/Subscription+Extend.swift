// Two store events the App Store reports with a whole transaction: an upgrade, which changes the
// plan at once and starts a new term, and a renewal-date extension, which moves a term's end
// later. Both keep the subscription's rules: terms are a set keyed by transaction id, the
// product is last-writer-wins by the store's date, and a late delivery never rolls a newer
// state back.

extension Subscription {
    /// The product changes as ``SubscriptionEvent/productChange(newProductID:)`` changes it, and
    /// the term is added as a renewal adds it. The feed shows `PRODUCT_CHANGE` when the product
    /// changed, else `RENEWAL` when the term is new and current (a stale upgrade still brings its
    /// term), else nothing.
    mutating func upgrade(to newProductID: String, term: SubscriptionTerm, atMs: Int64, gracePeriodMs: Int64)
        -> [SubscriptionEffect]
    {
        let productEffects = changeProduct(to: newProductID, atMs: atMs)
        let termEffects = addTerm(term, periodType: .normal, as: .renewal, atMs: atMs, gracePeriodMs: gracePeriodMs)
        return productEffects.isEmpty ? termEffects : productEffects
    }

    /// Moves the end of the term with `term`'s transaction id to `term.expiresMs` when that is
    /// later; an earlier or equal end (a late or repeated extension) changes nothing, and an
    /// unknown term is added as a renewal. When the term is (or becomes) the current one, the
    /// subscription's `expiresMs` follows; one that had expired (by the server's clock, or by a
    /// store expiry dated no later than the extension) is active again, with a `RENEWAL` event
    /// whose `reason` is `renewal_extended`. Otherwise the feed shows nothing: the document's
    /// `expires_ms` is the change.
    mutating func extend(_ term: SubscriptionTerm, atMs: Int64, gracePeriodMs: Int64) -> [SubscriptionEffect] {
        guard let index = terms.firstIndex(where: { $0.transactionID == term.transactionID }) else {
            return addTerm(term, periodType: periodType, as: .renewal, atMs: atMs, gracePeriodMs: gracePeriodMs)
        }
        guard term.expiresMs > terms[index].expiresMs else { return [] }
        var extended = terms.remove(at: index)
        extended.expiresMs = term.expiresMs
        let position = terms.firstIndex { SubscriptionTerm.precedes(extended, $0) } ?? terms.endIndex
        terms.insert(extended, at: position)
        guard position == terms.endIndex - 1 else { return [] }
        expiresMs = extended.expiresMs
        guard status != .revoked else { return [] }
        var effects: [SubscriptionEffect] = []
        if baseStatus == .expired, atMs >= statusMs {
            statusMs = atMs
            baseStatus = .active
            if reportsStatusChanges { effects = [.extended] }
        } else if baseStatus == .grace, storeGraceExpiresMs == nil {
            graceExpiresMs = expiresMs + gracePeriodMs
        }
        layRefundOverStatus()
        return effects
    }
}

extension SubscriptionEffect {
    /// An expired subscription whose current term the store extended: access is back.
    static let extended = SubscriptionEffect(.renewal, details: [EventDetail("reason", .string("renewal_extended"))])
}
