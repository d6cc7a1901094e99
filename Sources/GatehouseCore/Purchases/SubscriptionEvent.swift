/// What the store says about an existing subscription, normalized from the App Store's signed
/// notifications or the test store's events (PROTOCOL.md, "Purchases and the store"). The
/// store's own date of the notification travels beside it (`apply(_:atMs:…)`).
public enum SubscriptionEvent: Sendable, Equatable {
    /// A purchase of a subscription already known: a resubscribe with a new term.
    case purchase(SubscriptionTerm, periodType: SubscriptionPeriodType)
    case renewal(SubscriptionTerm)
    /// Auto-renew turned off.
    case cancel
    /// Auto-renew turned back on.
    case uncancel
    /// Without a grace expiry, grace lasts until `expiresMs + gracePeriodMs`.
    case billingIssue(graceExpiresMs: Int64?)
    /// Billing fixed: a new term, or without one only the billing issue cleared.
    case recover(SubscriptionTerm?)
    case expire
    case refund(transactionID: String, fraction: Double)
    case refundReversed(transactionID: String)
    /// Family sharing ended or a chargeback: access ends for good.
    case revoke
    case productChange(newProductID: String)
    /// A plan change that takes effect at once with a new term (the App Store's upgrade): the
    /// product changes as with `productChange`, and the term is added as a renewal adds it.
    case upgrade(newProductID: String, term: SubscriptionTerm)
    /// The store moved a term's end later (the App Store's renewal-date extension). A term's end
    /// only ever moves later, so a late or repeated extension changes nothing; an unknown term
    /// is added as a renewal adds it.
    case extend(SubscriptionTerm)
}
