public import GatehouseWire

/// A signed transaction, decoded (Apple's `JWSTransactionDecodedPayload`): one purchase,
/// renewal or restore of an In-App Purchase.
///
/// Every field is optional because Apple documents none as always present and its own test
/// vectors leave most out; a caller that needs an identifier checks it is there. Dates are UNIX
/// times in milliseconds; prices are in milliunits of `currency` (10990 = 10.99).
public struct AppStoreTransaction: Sendable, Equatable {
    public var transactionId: String?
    public var originalTransactionId: String?
    /// The id of a subscription purchase event across devices, including renewals.
    public var webOrderLineItemId: String?
    public var bundleId: String?
    public var productId: String?
    public var subscriptionGroupIdentifier: String?
    public var purchaseDate: Int64?
    public var originalPurchaseDate: Int64?
    /// When a subscription expires or renews; absent for other product types.
    public var expiresDate: Int64?
    public var quantity: Int?
    public var type: AppStoreProductType?
    /// The UUID the app attached to the purchase, as sent (an empty string reads as `nil`).
    public var appAccountToken: String?
    public var inAppOwnershipType: AppStoreOwnershipType?
    public var signedDate: Int64?
    public var environment: AppStoreEnvironment?
    /// The price in milliunits of `currency`.
    public var price: Int64?
    /// ISO 4217 currency code of `price`.
    public var currency: String?
    /// 1 introductory offer, 2 promotional offer, 3 offer code, 4 win-back offer.
    public var offerType: Int?
    public var offerIdentifier: String?
    /// `FREE_TRIAL`, `PAY_AS_YOU_GO`, `PAY_UP_FRONT` (or a later value).
    public var offerDiscountType: String?
    /// An ISO 8601 duration such as `P1Y`.
    public var offerPeriod: String?
    /// When the App Store refunded the transaction or revoked it from Family Sharing.
    public var revocationDate: Int64?
    /// 0 another reason, 1 an issue in the app.
    public var revocationReason: Int?
    /// `REFUND_FULL`, `REFUND_PRORATED`, `FAMILY_REVOKE` (or a later value).
    public var revocationType: String?
    /// The refunded share in milliunits of a percent: 0–100000 (67932 = 67.932 %).
    public var revocationPercentage: Int?
    /// Whether the customer upgraded to another subscription, which replaces this one.
    public var isUpgraded: Bool?
    public var transactionReason: AppStoreTransactionReason?
    /// The storefront's ISO 3166-1 alpha-3 country code.
    public var storefront: String?
    public var storefrontId: String?
    public var appTransactionId: String?

    public init() {}

    /// Decodes a payload that has already been verified (``AppStoreVerifier/verifyTransaction(jws:)``
    /// verifies and decodes in one step). Unknown fields are ignored; a known field of the
    /// wrong type is ``AppStoreVerificationError/Code/invalidSignature``.
    public init(verifiedPayload payload: JSONObject) throws(AppStoreVerificationError) {
        let fields = PayloadReader(payload)
        transactionId = try fields.string("transactionId")
        originalTransactionId = try fields.string("originalTransactionId")
        webOrderLineItemId = try fields.string("webOrderLineItemId")
        bundleId = try fields.string("bundleId")
        productId = try fields.string("productId")
        subscriptionGroupIdentifier = try fields.string("subscriptionGroupIdentifier")
        purchaseDate = try fields.timestamp("purchaseDate")
        originalPurchaseDate = try fields.timestamp("originalPurchaseDate")
        expiresDate = try fields.timestamp("expiresDate")
        quantity = try fields.int("quantity")
        type = try fields.kind("type", as: AppStoreProductType.self)
        appAccountToken = try fields.string("appAccountToken").flatMap { $0.isEmpty ? nil : $0 }
        inAppOwnershipType = try fields.kind("inAppOwnershipType", as: AppStoreOwnershipType.self)
        signedDate = try fields.timestamp("signedDate")
        environment = try fields.kind("environment", as: AppStoreEnvironment.self)
        price = try fields.int64("price")
        currency = try fields.string("currency")
        offerType = try fields.int("offerType")
        offerIdentifier = try fields.string("offerIdentifier")
        offerDiscountType = try fields.string("offerDiscountType")
        offerPeriod = try fields.string("offerPeriod")
        revocationDate = try fields.timestamp("revocationDate")
        revocationReason = try fields.int("revocationReason")
        revocationType = try fields.string("revocationType")
        revocationPercentage = try fields.int("revocationPercentage")
        isUpgraded = try fields.bool("isUpgraded")
        transactionReason = try fields.kind("transactionReason", as: AppStoreTransactionReason.self)
        storefront = try fields.string("storefront")
        storefrontId = try fields.string("storefrontId")
        appTransactionId = try fields.string("appTransactionId")
    }
}
