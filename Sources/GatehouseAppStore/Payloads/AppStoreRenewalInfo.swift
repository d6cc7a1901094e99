public import GatehouseWire

/// Signed renewal information, decoded (Apple's `JWSRenewalInfoDecodedPayload`): the state of
/// an auto-renewable subscription's next renewal.
///
/// Every field is optional, for the reasons given on ``AppStoreTransaction``. Dates are UNIX
/// times in milliseconds; prices are in milliunits of `currency`.
public struct AppStoreRenewalInfo: Sendable, Equatable {
    public var originalTransactionId: String?
    /// The product that renews at the next billing period.
    public var autoRenewProductId: String?
    /// The product the customer is subscribed to now.
    public var productId: String?
    /// 1 when the subscription renews automatically, 0 when the customer turned that off.
    public var autoRenewStatus: Int?
    /// Why the subscription expired: 1 customer cancelled, 2 billing error, 3 declined a price
    /// increase, 4 product unavailable, 5 other.
    public var expirationIntent: Int?
    /// Until when the customer keeps access during a billing grace period.
    public var gracePeriodExpiresDate: Int64?
    /// Whether the App Store is still trying to renew after a billing failure.
    public var isInBillingRetryPeriod: Bool?
    /// 0 the customer has not responded to a price increase yet, 1 consented or notified.
    public var priceIncreaseStatus: Int?
    public var signedDate: Int64?
    public var environment: AppStoreEnvironment?
    /// When the subscription renews (or would have, after it expired).
    public var renewalDate: Int64?
    /// The earliest start of the current run of uninterrupted paid periods.
    public var recentSubscriptionStartDate: Int64?
    /// The price of the next renewal in milliunits of `currency`.
    public var renewalPrice: Int64?
    public var currency: String?
    /// 1 introductory offer, 2 promotional offer, 3 offer code, 4 win-back offer.
    public var offerType: Int?
    public var offerIdentifier: String?
    public var offerDiscountType: String?
    public var offerPeriod: String?
    public var eligibleWinBackOfferIds: [String]?
    /// The UUID the app attached to the purchase, as sent (an empty string reads as `nil`).
    public var appAccountToken: String?
    public var appTransactionId: String?

    public init() {}

    /// Decodes a payload that has already been verified (``AppStoreVerifier/verifyRenewalInfo(jws:)``
    /// verifies and decodes in one step). Unknown fields are ignored; a known field of the
    /// wrong type is ``AppStoreVerificationError/Code/invalidSignature``.
    public init(verifiedPayload payload: JSONObject) throws(AppStoreVerificationError) {
        let fields = PayloadReader(payload)
        originalTransactionId = try fields.string("originalTransactionId")
        autoRenewProductId = try fields.string("autoRenewProductId")
        productId = try fields.string("productId")
        autoRenewStatus = try fields.int("autoRenewStatus")
        expirationIntent = try fields.int("expirationIntent")
        gracePeriodExpiresDate = try fields.timestamp("gracePeriodExpiresDate")
        isInBillingRetryPeriod = try fields.bool("isInBillingRetryPeriod")
        priceIncreaseStatus = try fields.int("priceIncreaseStatus")
        signedDate = try fields.timestamp("signedDate")
        environment = try fields.kind("environment", as: AppStoreEnvironment.self)
        renewalDate = try fields.timestamp("renewalDate")
        recentSubscriptionStartDate = try fields.timestamp("recentSubscriptionStartDate")
        renewalPrice = try fields.int64("renewalPrice")
        currency = try fields.string("currency")
        offerType = try fields.int("offerType")
        offerIdentifier = try fields.string("offerIdentifier")
        offerDiscountType = try fields.string("offerDiscountType")
        offerPeriod = try fields.string("offerPeriod")
        eligibleWinBackOfferIds = try fields.strings("eligibleWinBackOfferIds")
        appAccountToken = try fields.string("appAccountToken").flatMap { $0.isEmpty ? nil : $0 }
        appTransactionId = try fields.string("appTransactionId")
    }
}
