import GatehouseAppStore
import GatehouseCore
import GatehouseWire
import Testing

/// The mapping from verified App Store payloads to what the purchase rules take, without a
/// server: transaction fields, and the event of every notification type and subtype
/// (docs/app-store.md, "What each notification does").
@Suite struct AppStoreMapping {
    static func decoded(_ payload: JSONObject) throws -> AppStoreTransaction {
        try AppStoreTransaction(verifiedPayload: payload)
    }

    static let subscription: JSONObject = [
        "transactionId": "20", "originalTransactionId": "10", "productId": "pro_monthly", "purchaseDate": 1_000,
        "expiresDate": 2_000, "type": "Auto-Renewable Subscription", "price": 10_990, "currency": "EUR",
        "environment": "Production", "inAppOwnershipType": "PURCHASED",
        "appAccountToken": "6B1F0D2E-3C4A-4E5F-8A9B-0C1D2E3F4A5B",
    ]

    @Test func aSubscriptionTransactionMapsFieldForField() throws {
        let transaction = try Self.decoded(Self.subscription).storeTransaction()
        #expect(transaction == Self.transaction)
        #expect(transaction.key == PurchaseKey(store: "app_store", id: "10"))
    }

    @Test(arguments: ["Consumable", "Non-Consumable", "Non-Renewing Subscription"])
    func everyOtherTypeIsAOneTimePurchaseKeyedByItsTransactionID(_ type: String) throws {
        var payload = Self.subscription
        payload["type"] = .string(type)
        payload["expiresDate"] = nil
        let transaction = try Self.decoded(payload).storeTransaction()
        #expect(transaction.kind == .oneTime)
        #expect(transaction.key == PurchaseKey(store: "app_store", id: "20"))
    }

    @Test func familySharingSandboxAndOddTokens() throws {
        var payload = Self.subscription
        payload["inAppOwnershipType"] = "FAMILY_SHARED"
        payload["environment"] = "Sandbox"
        payload["appAccountToken"] = "not-a-uuid"
        payload["price"] = nil
        let transaction = try Self.decoded(payload).storeTransaction()
        #expect(transaction.familyShared)
        #expect(transaction.environment == .sandbox)
        #expect(transaction.token == nil)
        #expect(transaction.price == 0, "no price is a free term")
    }

    @Test(arguments: [
        (nil, nil, 9_990, SubscriptionPeriodType.normal), (1, "FREE_TRIAL", 0, .trial), (1, nil, 0, .trial),
        (1, "PAY_AS_YOU_GO", 990, .intro), (1, "PAY_UP_FRONT", 2_990, .intro), (2, nil, 4_990, .normal),
        (3, "FREE_TRIAL", 0, .trial), (4, "PAY_AS_YOU_GO", 990, .normal),
    ] as [(Int?, String?, Int64, SubscriptionPeriodType)])
    func offersSetThePeriodType(_ offerType: Int?, _ discount: String?, _ price: Int64, _ expected: SubscriptionPeriodType) throws {
        var payload = Self.subscription
        payload["price"] = .int(price)
        if let offerType { payload["offerType"] = .int(offerType) }
        if let discount { payload["offerDiscountType"] = .string(discount) }
        #expect(try Self.decoded(payload).storeTransaction().periodType == expected)
    }

    @Test(arguments: ["transactionId", "productId", "purchaseDate", "expiresDate"])
    func aMissingFieldIsBadRequestNamingIt(_ field: String) throws {
        var payload = Self.subscription
        payload[field] = nil
        #expect(throws: GatehouseError.badField("signed transaction \(field)", "is missing from the App Store's payload")) {
            try Self.decoded(payload).storeTransaction()
        }
    }

    // MARK: Notification types

    struct Row: Sendable, CustomTestStringConvertible {
        let type: String
        let subtype: String?
        let event: StoreNotification.Event
        var testDescription: String { subtype.map { "\(type) \($0)" } ?? type }
    }

    /// ``subscription`` as the rules take it.
    static let transaction = StoreTransaction(
        store: "app_store", kind: .subscription, transactionID: "20", originalTransactionID: "10", productID: "pro_monthly",
        purchasedMs: 1_000, expiresMs: 2_000, token: AppAccountToken(parsing: "6b1f0d2e-3c4a-4e5f-8a9b-0c1d2e3f4a5b"),
        price: 10.99, currency: "EUR", periodType: .normal, environment: .production, familyShared: false)
    static let term = SubscriptionTerm(transactionID: "20", purchasedMs: 1_000, expiresMs: 2_000, price: 10.99)
    static let graceEnd: Int64 = 5_000

    static let rows: [Row] = [
        Row(type: "SUBSCRIBED", subtype: "INITIAL_BUY", event: .purchase(transaction)),
        Row(type: "SUBSCRIBED", subtype: "RESUBSCRIBE", event: .purchase(transaction)),
        Row(type: "ONE_TIME_CHARGE", subtype: nil, event: .purchase(transaction)),
        Row(type: "OFFER_REDEEMED", subtype: "INITIAL_BUY", event: .purchase(transaction)),
        Row(type: "OFFER_REDEEMED", subtype: "RESUBSCRIBE", event: .purchase(transaction)),
        Row(type: "OFFER_REDEEMED", subtype: "UPGRADE", event: .change(.upgrade(newProductID: "pro_monthly", term: term))),
        Row(type: "OFFER_REDEEMED", subtype: "DOWNGRADE", event: .recordOnly),
        Row(type: "OFFER_REDEEMED", subtype: nil, event: .recordOnly),
        Row(type: "DID_RENEW", subtype: nil, event: .change(.renewal(term))),
        Row(type: "DID_RENEW", subtype: "BILLING_RECOVERY", event: .change(.recover(term))),
        Row(type: "DID_FAIL_TO_RENEW", subtype: nil, event: .change(.billingIssue(graceExpiresMs: nil))),
        Row(type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", event: .change(.billingIssue(graceExpiresMs: graceEnd))),
        Row(type: "GRACE_PERIOD_EXPIRED", subtype: nil, event: .change(.expire)),
        Row(type: "EXPIRED", subtype: "VOLUNTARY", event: .change(.expire)),
        Row(type: "EXPIRED", subtype: "BILLING_RETRY", event: .change(.expire)),
        Row(type: "EXPIRED", subtype: "PRICE_INCREASE", event: .change(.expire)),
        Row(type: "EXPIRED", subtype: "PRODUCT_NOT_FOR_SALE", event: .change(.expire)),
        Row(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", event: .change(.cancel)),
        Row(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED", event: .change(.uncancel)),
        Row(type: "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", event: .change(.upgrade(newProductID: "pro_monthly", term: term))),
        Row(type: "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE", event: .recordOnly),
        Row(type: "DID_CHANGE_RENEWAL_PREF", subtype: nil, event: .recordOnly),
        Row(type: "REFUND", subtype: nil, event: .change(.refund(transactionID: "20", fraction: 1))),
        Row(type: "REFUND_REVERSED", subtype: nil, event: .change(.refundReversed(transactionID: "20"))),
        Row(type: "REVOKE", subtype: nil, event: .change(.revoke)),
        Row(type: "RENEWAL_EXTENDED", subtype: nil, event: .change(.extend(term))),
        Row(type: "REFUND_DECLINED", subtype: nil, event: .recordOnly),
        Row(type: "PRICE_INCREASE", subtype: "PENDING", event: .recordOnly),
        Row(type: "PRICE_INCREASE", subtype: "ACCEPTED", event: .recordOnly),
        Row(type: "CONSUMPTION_REQUEST", subtype: nil, event: .recordOnly),
        Row(type: "RENEWAL_EXTENSION", subtype: "SUMMARY", event: .recordOnly),
        Row(type: "TEST", subtype: nil, event: .recordOnly),
        Row(type: "METADATA_UPDATE", subtype: nil, event: .recordOnly),
    ]

    @Test(arguments: rows)
    func everyTypeAndSubtypeHasItsEvent(_ row: Row) throws {
        var renewal = AppStoreRenewalInfo()
        renewal.gracePeriodExpiresDate = Self.graceEnd
        let event = AppStoreVerifiedNotification.event(
            for: AppStoreNotificationType(rawValue: row.type), subtype: row.subtype.map(AppStoreNotificationSubtype.init(rawValue:)),
            transaction: Self.transaction, appStoreTransaction: try Self.decoded(Self.subscription), renewalInfo: renewal)
        #expect(event == row.event)
    }

    @Test(arguments: [(67_932, 0.67932), (100_000, 1.0), (15, 0.00015), (0, 0.00001)] as [(Int64, Double)])
    func aRefundTakesRevocationPercentageInMilliunits(_ milliunits: Int64, _ fraction: Double) throws {
        var payload = Self.subscription
        payload["revocationPercentage"] = .int(milliunits)
        let event = AppStoreVerifiedNotification.event(
            for: .refund, subtype: nil, transaction: Self.transaction, appStoreTransaction: try Self.decoded(payload), renewalInfo: nil)
        #expect(event == .change(.refund(transactionID: "20", fraction: fraction)))
    }

    @Test(arguments: ["DID_RENEW", "EXPIRED", "DID_FAIL_TO_RENEW", "DID_CHANGE_RENEWAL_STATUS", "RENEWAL_EXTENDED"])
    func subscriptionTypesAboutAOneTimePurchaseAreRecordedOnly(_ type: String) throws {
        var payload = Self.subscription
        payload["type"] = "Consumable"
        let appStoreTransaction = try Self.decoded(payload)
        let event = AppStoreVerifiedNotification.event(
            for: AppStoreNotificationType(rawValue: type), subtype: .autoRenewDisabled,
            transaction: try appStoreTransaction.storeTransaction(), appStoreTransaction: appStoreTransaction, renewalInfo: nil)
        #expect(event == .recordOnly)
    }

    @Test func aNotificationIsDatedBySignedDateAndNamesItsPurchase() throws {
        var notification = AppStoreNotification(notificationType: .didRenew, notificationUUID: "uuid-1")
        notification.signedDate = 7_000
        let verified = AppStoreVerifiedNotification(
            notification: notification, transaction: try Self.decoded(Self.subscription), renewalInfo: nil, signedPayload: "")
        let mapped = try verified.storeNotification(receivedAtMs: 9_000)
        #expect(mapped.notificationID == "uuid-1")
        #expect(mapped.atMs == 7_000)
        #expect(mapped.originalTransactionID == "10")
        #expect(mapped.store == "app_store")
        #expect(mapped.transaction == Self.transaction)
        notification.signedDate = nil
        let undated = AppStoreVerifiedNotification(notification: notification, transaction: nil, renewalInfo: nil, signedPayload: "")
        #expect(try undated.storeNotification(receivedAtMs: 9_000).atMs == 9_000)
        #expect(try undated.storeNotification(receivedAtMs: 9_000).event == .recordOnly)
    }
}
