public import GatehouseCore

/// The `test` store's transactions and events (PROTOCOL.md, "Purchases and the store"), read
/// against the project's config: the store must be enabled, and a transaction's product must be
/// in the config (its type says whether it is a subscription or a one-time purchase).
public enum TestStore {
    public static let name = "test"
    /// Ids (transaction, original transaction, notification, product) are 1–128 characters.
    static let idLength = 1...128
    static let priceRange = 0.0...1_000_000_000.0

    /// A price in range, with `-0` read as `0` (equal values, equal bytes in the log).
    static func price(_ fields: Fields) throws(GatehouseError) -> Double {
        let price = try fields.optionalDouble("price", in: priceRange) ?? 0
        return price == 0 ? 0 : price
    }
    static let msRange: ClosedRange<Int64> = 0...(Int64(1) << 53)

    /// The App Store's name on the wire (its signed data is read by the GatehouseAppStore module).
    public static let appStoreName = "app_store"
    /// The web store's name in a request (its purchases are `ProjectState.stripeStore`'s).
    public static let stripeName = "stripe"

    /// What ``requireEnabled(_:in:)`` answers for a known store the project has not enabled
    /// (HTTP's store endpoints tell it apart: it is their 404).
    public static func notEnabled(_ store: String) -> GatehouseError {
        switch store {
        case appStoreName: .badField("store", "the App Store is not enabled in the project's config (stores.app_store)")
        case stripeName: .badField("store", "Stripe is not enabled in the project's config (stores.stripe)")
        default: .badField("store", "the test store is not enabled in the project's config (stores.test)")
        }
    }

    /// Checks that `store` names a store the project has enabled: `test` with `stores.test`,
    /// `app_store` with `stores.app_store`.
    public static func requireEnabled(_ store: String, in config: ProjectConfig) throws(GatehouseError) {
        switch store {
        case name:
            guard config.stores.test else { throw notEnabled(store) }
        case appStoreName:
            guard config.stores.appStore != nil else { throw notEnabled(store) }
        case stripeName:
            guard config.stores.stripe != nil else { throw notEnabled(store) }
        default:
            throw .badField("store", "unknown store \"\(store)\" (expected test, app_store or stripe)")
        }
    }

    /// A test `transaction` object. `purchased_ms` defaults to `nowMs`, `original_transaction_id`
    /// to `transaction_id`, `price` to 0 (a free term), `period_type` to `normal`, `environment`
    /// to `sandbox`, `family_shared` (an addition: a family member's copy, which grants no
    /// currency) to false; a subscription's `expires_ms` is required.
    public static func transaction(_ fields: Fields, config: ProjectConfig, nowMs: Int64) throws(GatehouseError)
        -> StoreTransaction
    {
        let transactionID = try fields.string("transaction_id", length: idLength)
        let productID = try fields.string("product_id", length: idLength)
        guard let product = config.products.first(where: { $0.id == productID }) else {
            throw .badField(fields.name("product_id"), "\"\(productID)\" is not a product of the project's config")
        }
        let kind: StoreTransaction.Kind = product.type == .subscription ? .subscription : .oneTime
        let expiresMs = kind == .subscription ? try fields.int("expires_ms", in: msRange) : 0
        var token: AppAccountToken?
        if let text = try fields.optionalString("app_account_token") {
            guard let parsed = AppAccountToken(parsing: text) else {
                throw .badField(fields.name("app_account_token"), "must be a UUID")
            }
            token = parsed
        }
        return StoreTransaction(
            store: name, kind: kind, transactionID: transactionID,
            originalTransactionID: try fields.optionalString("original_transaction_id", length: idLength) ?? transactionID,
            productID: productID, purchasedMs: try fields.optionalInt("purchased_ms", in: msRange) ?? nowMs,
            expiresMs: expiresMs, token: token, price: try price(fields),
            currency: try fields.optionalString("currency", length: 1...16),
            periodType: try fields.optionalEnumeration("period_type", SubscriptionPeriodType.self) ?? .normal,
            environment: try fields.optionalEnumeration("environment", StoreEnvironment.self) ?? .sandbox,
            familyShared: try fields.optionalBool("family_shared") ?? false)
    }

    /// The test event types and what each carries.
    public enum EventType: String, CaseIterable, Sendable {
        case purchase, renewal, cancel, uncancel
        case billingIssue = "billing_issue"
        case recover, expire, refund
        case refundReversed = "refund_reversed"
        case revoke
        case productChange = "product_change"
    }

    /// A test `event`. Every event names its `original_transaction_id` and a `notification_id`;
    /// `event_ms` (an addition: the store's date of the event, which orders late deliveries)
    /// defaults to `nowMs`.
    public static func notification(_ fields: Fields, config: ProjectConfig, nowMs: Int64) throws(GatehouseError)
        -> StoreNotification
    {
        let notificationID = try fields.string("notification_id", length: idLength)
        let type = try fields.enumeration("type", EventType.self)
        let originalTransactionID = try fields.string("original_transaction_id", length: idLength)
        let atMs = try fields.optionalInt("event_ms", in: msRange) ?? nowMs
        let event: StoreNotification.Event
        switch type {
        case .purchase:
            var transaction = try transaction(fields, config: config, nowMs: nowMs)
            transaction.originalTransactionID = originalTransactionID
            event = .purchase(transaction)
        case .renewal:
            event = .change(.renewal(try term(fields, nowMs: nowMs)))
        case .cancel:
            event = .change(.cancel)
        case .uncancel:
            event = .change(.uncancel)
        case .billingIssue:
            event = .change(.billingIssue(graceExpiresMs: try fields.optionalInt("grace_expires_ms", in: msRange)))
        case .recover:
            event = .change(.recover(fields.has("transaction_id") ? try term(fields, nowMs: nowMs) : nil))
        case .expire:
            event = .change(.expire)
        case .refund:
            let fraction = try fields.optionalDouble("fraction", in: 0...1) ?? 1
            guard fraction > 0 else { throw .badField(fields.name("fraction"), "must be above 0 (a reversal is refund_reversed)") }
            event = .change(.refund(transactionID: try fields.string("transaction_id", length: idLength), fraction: fraction))
        case .refundReversed:
            event = .change(.refundReversed(transactionID: try fields.string("transaction_id", length: idLength)))
        case .revoke:
            event = .change(.revoke)
        case .productChange:
            let newProductID = try fields.string("new_product_id", length: idLength)
            guard config.products.contains(where: { $0.id == newProductID && $0.type == .subscription }) else {
                throw .badField(fields.name("new_product_id"), "\"\(newProductID)\" is not a subscription product of the project's config")
            }
            event = .change(.productChange(newProductID: newProductID))
        }
        return StoreNotification(store: name, notificationID: notificationID, originalTransactionID: originalTransactionID,
                                 atMs: atMs, event: event)
    }

    /// A new term: `transaction_id`, `expires_ms`, `price` (default 0), `purchased_ms` (default now).
    private static func term(_ fields: Fields, nowMs: Int64) throws(GatehouseError) -> SubscriptionTerm {
        SubscriptionTerm(
            transactionID: try fields.string("transaction_id", length: idLength),
            purchasedMs: try fields.optionalInt("purchased_ms", in: msRange) ?? nowMs,
            expiresMs: try fields.int("expires_ms", in: msRange),
            price: try price(fields))
    }
}
