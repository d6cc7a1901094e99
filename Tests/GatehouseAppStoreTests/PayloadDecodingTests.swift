import GatehouseAppStore
import GatehouseWire
import Testing

/// Apple's model payloads (from its libraries' tests), signed with a generated chain, decode
/// to the values Apple's libraries expect.
@Suite struct PayloadsDecodeApplesModels {
    let chain: AppStoreTestChain
    let verifier: AppStoreVerifier

    init() throws {
        chain = try AppStoreTestChain()
        verifier = try GatehouseAppStoreTests.verifier(trusting: chain)
    }

    @Test func transaction() throws {
        let transaction = try verifier.verifyTransaction(
            jws: chain.sign(payload: Vectors.model("signedTransaction.json")))
        #expect(transaction.transactionId == "23456")
        #expect(transaction.originalTransactionId == "12345")
        #expect(transaction.webOrderLineItemId == "34343")
        #expect(transaction.bundleId == "com.example")
        #expect(transaction.productId == "com.example.product")
        #expect(transaction.subscriptionGroupIdentifier == "55555")
        #expect(transaction.purchaseDate == 1_698_148_900_000)
        #expect(transaction.originalPurchaseDate == 1_698_148_800_000)
        #expect(transaction.expiresDate == 1_698_149_000_000)
        #expect(transaction.quantity == 1)
        #expect(transaction.type == .autoRenewableSubscription)
        #expect(transaction.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(transaction.signedDate == 1_698_148_900_000)
        #expect(transaction.revocationReason == 1)
        #expect(transaction.revocationDate == 1_698_148_950_000)
        #expect(transaction.isUpgraded == true)
        #expect(transaction.offerType == 1)
        #expect(transaction.offerIdentifier == "abc.123")
        #expect(transaction.environment == .localTesting)
        #expect(transaction.transactionReason == .purchase)
        #expect(transaction.storefront == "USA")
        #expect(transaction.storefrontId == "143441")
        #expect(transaction.price == 10990)
        #expect(transaction.currency == "USD")
        #expect(transaction.offerDiscountType == "PAY_AS_YOU_GO")
        #expect(transaction.appTransactionId == "71134")
        #expect(transaction.offerPeriod == "P1Y")
        #expect(transaction.revocationPercentage == nil)
    }

    @Test func renewalInfo() throws {
        let renewal = try verifier.verifyRenewalInfo(jws: chain.sign(payload: Vectors.model("signedRenewalInfo.json")))
        #expect(renewal.expirationIntent == 1)
        #expect(renewal.originalTransactionId == "12345")
        #expect(renewal.autoRenewProductId == "com.example.product.2")
        #expect(renewal.productId == "com.example.product")
        #expect(renewal.autoRenewStatus == 1)
        #expect(renewal.isInBillingRetryPeriod == true)
        #expect(renewal.priceIncreaseStatus == 0)
        #expect(renewal.gracePeriodExpiresDate == 1_698_148_900_000)
        #expect(renewal.offerType == 2)
        #expect(renewal.offerIdentifier == "abc.123")
        #expect(renewal.signedDate == 1_698_148_800_000)
        #expect(renewal.environment == .localTesting)
        #expect(renewal.recentSubscriptionStartDate == 1_698_148_800_000)
        #expect(renewal.renewalDate == 1_698_148_850_000)
        #expect(renewal.renewalPrice == 9990)
        #expect(renewal.currency == "USD")
        #expect(renewal.offerDiscountType == "PAY_AS_YOU_GO")
        #expect(renewal.eligibleWinBackOfferIds == ["eligible1", "eligible2"])
        #expect(renewal.appTransactionId == "71134")
        #expect(renewal.offerPeriod == "P1Y")
        #expect(renewal.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
    }

    @Test func notification() throws {
        let notification = try verifier.verifyNotification(
            jws: chain.sign(payload: Vectors.model("signedNotification.json")))
        #expect(notification.notificationType == .subscribed)
        #expect(notification.subtype == .initialBuy)
        #expect(notification.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(notification.version == "2.0")
        #expect(notification.signedDate == 1_698_148_900_000)
        var data = AppStoreNotificationData()
        data.environment = .localTesting
        data.appAppleId = 41234
        data.bundleId = "com.example"
        data.bundleVersion = "1.2.3"
        data.signedTransactionInfo = "signed_transaction_info_value"
        data.signedRenewalInfo = "signed_renewal_info_value"
        data.status = 1
        #expect(notification.data == data)
        #expect(notification.signedTransactionInfo == "signed_transaction_info_value")
        #expect(notification.signedRenewalInfo == "signed_renewal_info_value")
        #expect(notification.summary == nil && notification.externalPurchaseToken == nil && notification.appData == nil)
    }

    @Test func consumptionRequestNotification() throws {
        let notification = try AppStoreNotification(
            verifiedPayload: Vectors.model("signedConsumptionRequestNotification.json"))
        #expect(notification.notificationType == .consumptionRequest)
        #expect(notification.data?.consumptionRequestReason == "UNINTENDED_PURCHASE")
    }

    @Test func summaryNotification() throws {
        let notification = try AppStoreNotification(verifiedPayload: Vectors.model("signedSummaryNotification.json"))
        #expect(notification.notificationType == .renewalExtension)
        #expect(notification.subtype == .summary)
        #expect(notification.summary?.bundleId == "com.example")
        #expect(notification.summary?.appAppleId == 41234)
        #expect(notification.summary?.environment == .localTesting)
        #expect(notification.data == nil)
    }

    @Test func externalPurchaseTokenNotification() throws {
        let notification = try AppStoreNotification(
            verifiedPayload: Vectors.model("signedExternalPurchaseTokenNotification.json"))
        #expect(notification.notificationType == .externalPurchaseToken)
        #expect(notification.subtype == .unreported)
        #expect(notification.externalPurchaseToken?.externalPurchaseId == "b2158121-7af9-49d4-9561-1f588205523e")
        #expect(notification.externalPurchaseToken?.tokenCreationDate == 1_698_148_950_000)
        #expect(notification.externalPurchaseToken?.appAppleId == 55555)
        #expect(notification.externalPurchaseToken?.bundleId == "com.example")
    }

    @Test func unknownNotificationTypesAndSubtypesDecodeAsThemselves() throws {
        let payload: JSONObject = ["notificationType": "SOMETHING_NEW", "subtype": "ALSO_NEW", "notificationUUID": "u"]
        let notification = try AppStoreNotification(verifiedPayload: payload)
        #expect(notification.notificationType.rawValue == "SOMETHING_NEW")
        #expect(notification.subtype?.rawValue == "ALSO_NEW")
    }
}

/// Decoding is tolerant of fields it does not use and strict about the types of those it does.
@Suite struct PayloadFieldTypes {
    let transaction: JSONObject = ["transactionId": "1", "bundleId": "com.example", "price": 10990]

    @Test func unknownFieldsAndNullsAreIgnored() throws {
        let decoded = try AppStoreTransaction(
            verifiedPayload: transaction.with("somethingNew", ["deep": [1, 2]]).with("expiresDate", .null))
        #expect(decoded.transactionId == "1")
        #expect(decoded.expiresDate == nil)
        #expect(decoded.price == 10990)
    }

    static let mistyped: [(String, JSONValue)] = [
        ("transactionId", .int(23456)), ("price", "10990"), ("price", .double(1.5)), ("isUpgraded", "true"),
        ("purchaseDate", "2023-10-24"), ("offerType", true), ("environment", 1), ("type", .array(["Consumable"])),
        ("revocationPercentage", "50000"), ("quantity", .number(JSONNumber(uncheckedText: "1e30"))),
    ]

    @Test(arguments: mistyped)
    func wrongTypeOfAUsedField(key: String, value: JSONValue) {
        expectInvalidSignature(reason: key) {
            try AppStoreTransaction(verifiedPayload: transaction.with(key, value))
        }
    }

    @Test func revocationPercentageIsInMilliunitsOfAPercent() throws {
        let decoded = try AppStoreTransaction(
            verifiedPayload: transaction.with("revocationPercentage", 67932).with("revocationType", "REFUND_PRORATED"))
        #expect(decoded.revocationPercentage == 67932)
        #expect(decoded.revocationType == "REFUND_PRORATED")
    }

    @Test func emptyAppAccountTokenMeansNone() throws {
        #expect(
            try AppStoreTransaction(verifiedPayload: transaction.with("appAccountToken", "")).appAccountToken == nil)
        #expect(try AppStoreRenewalInfo(verifiedPayload: ["appAccountToken": ""]).appAccountToken == nil)
    }

    @Test func renewalInfoTypes() {
        let cases: [(String, JSONValue)] = [
            ("autoRenewStatus", "1"), ("eligibleWinBackOfferIds", ["a", 1]), ("isInBillingRetryPeriod", 1),
        ]
        for (key, value) in cases {
            expectInvalidSignature(reason: key) {
                try AppStoreRenewalInfo(verifiedPayload: [key: value])
            }
        }
    }

    @Test func notificationNeedsTypeAndUUID() {
        let cases: [JSONObject] = [
            ["notificationUUID": "u"], ["notificationType": "TEST"], ["notificationType": 1, "notificationUUID": "u"],
            ["notificationType": "TEST", "notificationUUID": "u", "data": "x"],
            ["notificationType": "TEST", "notificationUUID": "u", "data": ["appAppleId": "1234"]],
            ["notificationType": "TEST", "notificationUUID": "u", "summary": ["bundleId": 1]],
        ]
        for payload in cases {
            expectInvalidSignature { try AppStoreNotification(verifiedPayload: payload) }
        }
    }

    @Test func xcodeFractionalDatesAreTruncated() throws {
        let transaction = try AppStoreTransaction(verifiedPayload: Vectors.decodedPayload("xcode-signed-transaction"))
        #expect(transaction.purchaseDate == 1_697_679_936_049)
        #expect(transaction.signedDate == 1_697_679_936_056)
        #expect(transaction.expiresDate == 1_700_358_336_049)
        #expect(transaction.transactionId == "0")
        #expect(transaction.productId == "pass.premium")
        #expect(transaction.bundleId == "com.example.naturelab.backyardbirds.example")
        #expect(transaction.environment == .xcode)
        let renewal = try AppStoreRenewalInfo(verifiedPayload: Vectors.decodedPayload("xcode-signed-renewal-info"))
        #expect(renewal.renewalDate == 1_700_358_336_049)
        #expect(renewal.signedDate == 1_697_679_936_711)
    }
}
