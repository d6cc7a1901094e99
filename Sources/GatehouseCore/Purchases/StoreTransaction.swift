/// One store transaction as a store reported it, already verified (App Store) or taken from the
/// test store, and normalized (PROTOCOL.md, "Purchases and the store").
public struct StoreTransaction: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// An auto-renewing subscription: keyed by its original transaction id.
        case subscription
        /// A consumable or non-consumable: keyed by its own transaction id.
        case oneTime
    }

    public var store: String
    public var kind: Kind
    public var transactionID: String
    public var originalTransactionID: String
    public var productID: String
    public var purchasedMs: Int64
    /// Required for a subscription; ignored for a one-time purchase.
    public var expiresMs: Int64
    public var token: AppAccountToken?
    /// In the store's currency units; 0 for a free term.
    public var price: Double
    public var currency: String?
    public var periodType: SubscriptionPeriodType
    public var environment: StoreEnvironment
    /// A family member's copy (no currency grants).
    public var familyShared: Bool

    public init(
        store: String, kind: Kind, transactionID: String, originalTransactionID: String, productID: String,
        purchasedMs: Int64, expiresMs: Int64, token: AppAccountToken?, price: Double, currency: String?,
        periodType: SubscriptionPeriodType, environment: StoreEnvironment, familyShared: Bool = false
    ) {
        self.familyShared = familyShared
        self.store = store
        self.kind = kind
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.purchasedMs = purchasedMs
        self.expiresMs = expiresMs
        self.token = token
        self.price = price
        self.currency = currency
        self.periodType = periodType
        self.environment = environment
    }

    /// The purchase this transaction belongs to.
    public var key: PurchaseKey {
        PurchaseKey(store: store, id: kind == .subscription ? originalTransactionID : transactionID)
    }

    var term: SubscriptionTerm {
        SubscriptionTerm(transactionID: transactionID, purchasedMs: purchasedMs, expiresMs: expiresMs, price: price)
    }

    var oneTimePurchase: OneTimePurchase {
        OneTimePurchase(store: store, transactionID: transactionID, productID: productID, purchasedMs: purchasedMs,
                        price: price, environment: environment, familyShared: familyShared)
    }
}

/// A store's notification, normalized: what happened to which purchase, dated by the store.
public struct StoreNotification: Sendable, Equatable {
    public enum Event: Sendable, Equatable {
        /// A purchase: new to the server, or a resubscribe of a known subscription.
        case purchase(StoreTransaction)
        /// Anything else that happens to a known purchase. A one-time purchase takes only
        /// `refund`, `refundReversed` and `revoke`.
        case change(SubscriptionEvent)
        /// Nothing changes: the notification id is only recorded as seen, so a repeat answers
        /// `applied: false` (the App Store's notifications that report without changing a
        /// purchase: `REFUND_DECLINED`, `PRICE_INCREASE`, `CONSUMPTION_REQUEST`, `TEST`…).
        case recordOnly
    }

    public var store: String
    /// Applied once: a repeat is answered `applied: false` and changes nothing.
    public var notificationID: String
    /// The subscription's original transaction id, or a one-time purchase's transaction id.
    public var originalTransactionID: String
    /// The store's date of the notification: what orders late and out-of-order deliveries.
    public var atMs: Int64
    public var event: Event
    /// The whole transaction the notification carries, when the store sends one (the App
    /// Store does): a `change` for a purchase the server has never seen creates the purchase
    /// from it first, as a purchase notification would, instead of answering `not_found`.
    /// `nil` for the test store, whose events name a purchase the server must already know.
    public var transaction: StoreTransaction?

    public init(
        store: String, notificationID: String, originalTransactionID: String, atMs: Int64, event: Event,
        transaction: StoreTransaction? = nil
    ) {
        self.store = store
        self.notificationID = notificationID
        self.originalTransactionID = originalTransactionID
        self.atMs = atMs
        self.event = event
        self.transaction = transaction
    }
}
