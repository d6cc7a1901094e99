import GatehouseCore
import GatehouseWire
import Testing

// The bodies of deliveries: RevenueCat's webhook envelope for every event type, and OneSignal's
// create-message call.

private let profile = ProfileID(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210, tag: 0x00AB_CDEF)

private let identity = EventIdentity(
    appUserID: "user-1", originalAppUserID: "$inst_1", aliases: ["prf_0123456789abcdef", "$inst_1", "user-1"],
    entitlementIDs: ["pro", "ads_free"], currencyName: "Coins", transferredFrom: ["user-0"], transferredTo: ["user-1"],
    pushTo: ["user-1"])

private func subscriptionDetails(_ extra: [EventDetail] = []) -> [EventDetail] {
    [
        EventDetail("store", .string("app_store")),
        EventDetail("product_id", .string("pro_monthly")),
        EventDetail("original_transaction_id", .string("1000")),
        EventDetail("transaction_id", .string("1002")),
        EventDetail("expires_ms", .int(1_700_002_592_000)),
        EventDetail("period_type", .string("trial")),
        EventDetail("environment", .string("sandbox")),
    ] + extra
}

private let oneTimeDetails = [
    EventDetail("store", .string("test")),
    EventDetail("product_id", .string("coins_500")),
    EventDetail("transaction_id", .string("t-9")),
    EventDetail("environment", .string("production")),
]

/// What each type's event holds, as the rules record it.
private func recordedDetails(of type: EventType) -> [EventDetail] {
    switch type {
    case .initialPurchase, .renewal, .productChange, .cancellation, .uncancellation, .billingIssue: subscriptionDetails()
    case .expiration: subscriptionDetails([EventDetail("reason", .string("revoked"))])
    case .nonRenewingPurchase, .refund, .refundReversed: oneTimeDetails
    case .transfer:
        [
            EventDetail("transferred_from", .profiles([profile])), EventDetail("transferred_to", .profiles([profile])),
            EventDetail("original_transaction_ids", .strings(["1000"])),
        ]
    case .subscriberAlias: [EventDetail("merged_from", .profiles([profile]))]
    case .purchaseRedeemed:
        [
            EventDetail("product_id", .string("pro_monthly")), EventDetail("store", .string("stripe")),
            EventDetail("original_transaction_id", .string("sub_1")), EventDetail("transaction_id", .string("in_1")),
            EventDetail("merged_from", .profiles([profile])),
        ]
    case .virtualCurrencyTransaction:
        [
            EventDetail("transaction_id", .string("vct_9_0")), EventDetail("currency", .string("COINS")),
            EventDetail("amount", .int(-5)), EventDetail("balance", .int(95)), EventDetail("source", .string("transaction")),
            EventDetail("ref", .string("idem-1")), EventDetail("reason", .string("spent")),
        ]
    case .promotionalGrant: [EventDetail("entitlement", .string("pro")), EventDetail("expires_ms", .int(1_800_000_000_000))]
    case .promotionalRevoke: [EventDetail("entitlement", .string("pro"))]
    case .test: [EventDetail("webhook", .string("backend"))]
    }
}

private func event(_ type: EventType, details: [EventDetail]? = nil) -> Event {
    Event(cursor: 42, index: 1, type: type, profileID: profile, customerUserID: "user-1", atMs: 1_700_000_000_000,
          details: details ?? recordedDetails(of: type))
}

/// The body's `event` object, parsed back.
private func body(_ event: Event, identity: EventIdentity = identity) throws -> JSONObject {
    let bytes = WebhookEventBody.render(projectID: "acme", event: event, identity: identity)
    let envelope = try #require(try JSONParser.parse(String(decoding: bytes, as: UTF8.self)).objectValue)
    #expect(envelope.keys == ["api_version", "event"])
    #expect(envelope["api_version"] == "1.0")
    return try #require(envelope["event"]?.objectValue)
}

private let commonKeys = [
    "id", "type", "app_id", "event_timestamp_ms", "app_user_id", "original_app_user_id", "aliases", "cursor",
    "environment", "store",
]

private let purchaseKeys = [
    "product_id", "entitlement_ids", "entitlement_id", "period_type", "purchased_at_ms", "expiration_at_ms",
    "transaction_id", "original_transaction_id", "price", "currency", "is_family_share",
]

@Suite struct WebhookBodyTests {
    @Test(arguments: EventType.allCases)
    func everyTypeHasTheCommonFieldsFirst(type: EventType) throws {
        let object = try body(event(type))
        #expect(Array(object.keys.prefix(commonKeys.count)) == commonKeys)
        #expect(object["id"] == "evt_42_1")
        #expect(object["type"] == .string(type.rawValue))
        #expect(object["app_id"] == "acme")
        #expect(object["event_timestamp_ms"] == 1_700_000_000_000)
        #expect(object["app_user_id"] == "user-1")
        #expect(object["original_app_user_id"] == "$inst_1")
        #expect(object["aliases"] == ["prf_0123456789abcdef", "$inst_1", "user-1"])
        #expect(object["cursor"] == 42)
    }

    @Test(arguments: EventType.allCases)
    func theSameInputsGiveTheSameBytes(type: EventType) {
        let first = WebhookEventBody.render(projectID: "acme", event: event(type), identity: identity)
        let second = WebhookEventBody.render(projectID: "acme", event: event(type), identity: identity)
        #expect(first == second)
        #expect(first != WebhookEventBody.render(projectID: "acme2", event: event(type), identity: identity))
    }

    @Test(arguments: [EventType.initialPurchase, .renewal, .productChange, .cancellation, .uncancellation, .billingIssue, .expiration])
    func subscriptionEventsSpeakRevenueCat(type: EventType) throws {
        let object = try body(event(type))
        #expect(Array(object.keys.dropFirst(commonKeys.count).prefix(purchaseKeys.count)) == purchaseKeys)
        #expect(object["environment"] == "SANDBOX")
        #expect(object["store"] == "APP_STORE")
        #expect(object["product_id"] == "pro_monthly")
        #expect(object["entitlement_ids"] == ["pro", "ads_free"])
        #expect(object["entitlement_id"] == "pro")
        #expect(object["period_type"] == "TRIAL")
        #expect(object["purchased_at_ms"] == .null)
        #expect(object["expiration_at_ms"] == 1_700_002_592_000)
        #expect(object["transaction_id"] == "1002")
        #expect(object["original_transaction_id"] == "1000")
        #expect(object["price"] == .null)
        #expect(object["currency"] == .null)
        #expect(object["is_family_share"] == false)
    }

    @Test func typeSpecificPurchaseFields() throws {
        #expect(try body(event(.cancellation))["cancel_reason"] == "UNKNOWN")
        #expect(try body(event(.expiration))["expiration_reason"] == "CUSTOMER_SUPPORT")
        #expect(try body(event(.expiration, details: subscriptionDetails()))["expiration_reason"] == "UNKNOWN")
        #expect(
            try body(event(.cancellation, details: subscriptionDetails([EventDetail("reason", .string("billing_error"))])))[
                "cancel_reason"] == "BILLING_ERROR")
        #expect(try body(event(.productChange))["new_product_id"] == "pro_monthly")
        #expect(try body(event(.billingIssue))["grace_period_expiration_at_ms"] == .null)
        #expect(
            try body(event(.billingIssue, details: subscriptionDetails([EventDetail("grace_expires_ms", .int(5))])))[
                "grace_period_expiration_at_ms"] == 5)
        for type in [EventType.initialPurchase, .renewal, .uncancellation, .refund] {
            let keys = try body(event(type)).keys
            #expect(keys.count == commonKeys.count + purchaseKeys.count, "\(type) has only the purchase fields")
        }
    }

    @Test(arguments: [EventType.nonRenewingPurchase, .refund, .refundReversed])
    func oneTimePurchaseEventsHaveNoExpiration(type: EventType) throws {
        let object = try body(event(type))
        #expect(object["store"] == "TEST_STORE")
        #expect(object["environment"] == "PRODUCTION")
        #expect(object["expiration_at_ms"] == .null)
        #expect(object["period_type"] == "NORMAL")
        #expect(object["transaction_id"] == "t-9")
        #expect(object["original_transaction_id"] == "t-9")
    }

    @Test func anExpiredGrantIsPromotional() throws {
        let details = [EventDetail("store", .string("promotional")), EventDetail("entitlement", .string("pro"))]
        let noEntitlements = EventIdentity(appUserID: "u", originalAppUserID: "u", aliases: ["u"])
        let object = try body(event(.expiration, details: details), identity: noEntitlements)
        #expect(object["store"] == "PROMOTIONAL")
        #expect(object["period_type"] == "PROMOTIONAL")
        #expect(object["entitlement_ids"] == ["pro"])
        #expect(object["product_id"] == .null)
    }

    @Test func promotionalGrantsAndRevokes() throws {
        let noEntitlements = EventIdentity(appUserID: "u", originalAppUserID: "u", aliases: ["u"])
        let grant = try body(event(.promotionalGrant), identity: noEntitlements)
        #expect(grant.keys == commonKeys + ["entitlement_ids", "entitlement_id", "period_type", "expiration_at_ms"])
        #expect(grant["store"] == "PROMOTIONAL")
        #expect(grant["environment"] == "PRODUCTION")
        #expect(grant["entitlement_ids"] == ["pro"])
        #expect(grant["entitlement_id"] == "pro")
        #expect(grant["expiration_at_ms"] == 1_800_000_000_000)
        let revoke = try body(event(.promotionalRevoke), identity: noEntitlements)
        #expect(revoke["store"] == "PROMOTIONAL")
        #expect(revoke["expiration_at_ms"] == .null)
    }

    @Test func aTransferNamesBothSides() throws {
        let object = try body(event(.transfer))
        #expect(object.keys == commonKeys + ["transferred_from", "transferred_to", "original_transaction_ids"])
        #expect(object["app_user_id"] == "user-1")
        #expect(object["transferred_from"] == ["user-0"])
        #expect(object["transferred_to"] == ["user-1"])
        #expect(object["original_transaction_ids"] == ["1000"])
        #expect(object["store"] == .null)
    }

    @Test func aCurrencyTransactionHasAdjustments() throws {
        let object = try body(event(.virtualCurrencyTransaction))
        #expect(
            object.keys
                == commonKeys + [
                    "adjustments", "virtual_currency_transaction_id", "source", "source_detail", "transaction_id", "reason",
                    "balance",
                ])
        #expect(object["adjustments"] == [["amount": -5, "currency": ["code": "COINS", "name": "Coins"]]])
        #expect(object["virtual_currency_transaction_id"] == "vct_9_0")
        #expect(object["source"] == "admin_api")
        #expect(object["source_detail"] == "transaction")
        #expect(object["transaction_id"] == .null)
        #expect(object["reason"] == "spent")
        #expect(object["balance"] == 95)
    }

    @Test func aPurchasesGrantNamesItsStoreTransaction() throws {
        let details = [
            EventDetail("transaction_id", .string("vct_9_0")), EventDetail("currency", .string("GEMS")),
            EventDetail("amount", .int(100)), EventDetail("balance", .int(100)), EventDetail("source", .string("purchase")),
            EventDetail("ref", .string("1002")),
        ]
        let noName = EventIdentity(appUserID: "u", originalAppUserID: "u", aliases: ["u"])
        let object = try body(event(.virtualCurrencyTransaction, details: details), identity: noName)
        #expect(object["source"] == "in_app_purchase")
        #expect(object["transaction_id"] == "1002")
        #expect(object["reason"] == .null)
        #expect(object["adjustments"] == [["amount": 100, "currency": ["code": "GEMS", "name": "GEMS"]]])
    }

    @Test func otherTypesCarryTheirDetails() throws {
        let alias = try body(event(.subscriberAlias))
        #expect(alias.keys == commonKeys + ["merged_from"])
        #expect(alias["merged_from"] == [.string(profile.description)])
        #expect(alias["store"] == .null)
        let test = try body(event(.test), identity: .nobody)
        #expect(test.keys == commonKeys + ["webhook"])
        #expect(test["webhook"] == "backend")
        #expect(test["app_user_id"] == "")
        #expect(test["aliases"] == [])
        let redeemed = try body(event(.purchaseRedeemed))
        #expect(redeemed.keys == commonKeys + ["product_id", "original_transaction_id", "transaction_id", "merged_from", "entitlement_ids"])
        #expect(redeemed["store"] == "STRIPE")
        #expect(redeemed["merged_from"] == [.string(profile.description)])
        #expect(redeemed["entitlement_ids"] == .array(identity.entitlementIDs.map(JSONValue.string)))
    }
}

@Suite struct OneSignalMessageTests {
    @Test func theBodyIsOneSignalsCreateMessage() throws {
        let settings = OneSignalSettings(appID: "5eb5a37e", apiKey: "secret-key")
        let notification = OneSignalNotification(type: .renewal, title: "Thanks", message: "Renewed \"pro\"")
        let transfer = EventIdentity(appUserID: "b", originalAppUserID: "b", aliases: ["b"], pushTo: ["b", "a"])
        let bytes = OneSignalMessage.render(settings: settings, notification: notification, event: event(.renewal), identity: transfer)
        let expected: JSONValue = [
            "app_id": "5eb5a37e",
            "target_channel": "push",
            "include_aliases": ["external_id": ["b", "a"]],
            "headings": ["en": "Thanks"],
            "contents": ["en": "Renewed \"pro\""],
            "data": ["type": "RENEWAL", "event_id": "evt_42_1"],
        ]
        #expect(try JSONParser.parse(String(decoding: bytes, as: UTF8.self)) == expected)
        #expect(!String(decoding: bytes, as: UTF8.self).contains("secret-key"))
        #expect(bytes == OneSignalMessage.render(settings: settings, notification: notification, event: event(.renewal), identity: transfer))
    }
}
