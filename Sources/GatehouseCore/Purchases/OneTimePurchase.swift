/// A one-time store purchase (DESIGN.md, "Subscription life and entitlements"): a consumable or
/// a non-consumable, keyed by store and transaction id.
///
/// A consumable never grants an entitlement; a non-consumable grants its product's entitlements
/// for life while it is live (neither refunded nor revoked). Which kind it is comes from the
/// project's config at the time of the answer (see ``Entitlements``).
public struct OneTimePurchase: Sendable, Equatable {
    public let store: String
    public let transactionID: String
    public let productID: String
    public let purchasedMs: Int64
    /// In the store's currency units.
    public let price: Double
    public let environment: StoreEnvironment
    /// A family member's copy: it entitles, but never grants currency.
    public let familyShared: Bool
    public var refunded: Bool
    /// How much of it was refunded while `refunded` (0 … 1): what a refund takes back of its
    /// currency grant.
    public var refundedFraction: Double
    public var revoked: Bool

    public init(
        store: String, transactionID: String, productID: String, purchasedMs: Int64, price: Double,
        environment: StoreEnvironment, refunded: Bool = false, revoked: Bool = false, familyShared: Bool = false,
        refundedFraction: Double? = nil
    ) {
        self.refundedFraction = refundedFraction ?? (refunded ? 1 : 0)
        self.familyShared = familyShared
        self.store = store
        self.transactionID = transactionID
        self.productID = productID
        self.purchasedMs = purchasedMs
        self.price = price
        self.environment = environment
        self.refunded = refunded
        self.revoked = revoked
    }

    /// A store charge above zero.
    public var isPaid: Bool { price > 0 }

    /// Neither refunded nor revoked. Time does not end a one-time purchase.
    public var isLive: Bool { !refunded && !revoked }
}
