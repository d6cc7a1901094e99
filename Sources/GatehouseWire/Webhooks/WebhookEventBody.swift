public import GatehouseCore

/// The body of a webhook delivery (DESIGN.md, "Outbound delivery"; PROTOCOL.md, "Webhook
/// bodies"): RevenueCat's envelope `{"api_version":"1.0","event":{…}}` with RevenueCat's field
/// names and value spellings, so a backend written for RevenueCat's webhooks reads it unchanged.
/// A pure function of its inputs, keys in a fixed order: every attempt of a delivery sends the
/// same bytes, which the signature covers.
public enum WebhookEventBody {
    public static let apiVersion = "1.0"

    public static func render(projectID: String, event: Event, identity: EventIdentity) -> [UInt8] {
        JSONWriter.serialize(["api_version": .string(apiVersion), "event": .object(json(projectID: projectID, event: event, identity: identity))])
    }

    /// The `event` object: the fields every type has, then the type's own.
    static func json(projectID: String, event: Event, identity: EventIdentity) -> JSONObject {
        let details = EventDetails(event.details)
        var object: JSONObject = [
            "id": .string(event.id),
            "type": .string(event.type.rawValue),
            "app_id": .string(projectID),
            "event_timestamp_ms": .int(event.atMs),
            "app_user_id": .string(identity.appUserID),
            "original_app_user_id": .string(identity.originalAppUserID),
            "aliases": strings(identity.aliases),
            "cursor": .int(Int64(event.cursor)),
            "environment": .string(details.string("environment")?.uppercased() ?? "PRODUCTION"),
            "store": .optional(store(of: event.type, details), JSONValue.string),
        ]
        switch event.type {
        case .initialPurchase, .renewal, .productChange, .cancellation, .uncancellation, .billingIssue, .expiration,
            .nonRenewingPurchase, .refund, .refundReversed:
            object.append(contentsOf: purchaseFields(event.type, details, identity: identity))
        case .promotionalGrant, .promotionalRevoke:
            object.append(contentsOf: promotionalFields(details, identity: identity))
        case .transfer:
            object.append("transferred_from", strings(identity.transferredFrom))
            object.append("transferred_to", strings(identity.transferredTo))
            object.append("original_transaction_ids", .optional(details.value("original_transaction_ids"), EventDocument.json))
        case .virtualCurrencyTransaction:
            object.append(contentsOf: currencyFields(details, identity: identity))
        case .subscriberAlias, .purchaseRedeemed, .test:
            for detail in event.details where !Self.commonDetails.contains(detail.name) {
                object.append(detail.name, EventDocument.json(detail.value))
            }
            // What the redeemed purchase unlocks, as a purchase event names it.
            if event.type == .purchaseRedeemed { object.append("entitlement_ids", strings(identity.entitlementIDs)) }
        }
        return object
    }

    /// Details the common fields already show.
    private static let commonDetails: Set<String> = ["store", "environment"]

    /// RevenueCat's store spelling (`APP_STORE`, `TEST_STORE`, `STRIPE`, `PROMOTIONAL`); `nil`
    /// for an event about no store (an alias, a currency transaction, a test).
    private static func store(of type: EventType, _ details: EventDetails) -> String? {
        if let store = details.string("store") { return RevenueCatStore.name(store).uppercased() }
        switch type {
        case .promotionalGrant, .promotionalRevoke: return RevenueCatStore.name(Entitlements.promotionalStore).uppercased()
        default: return nil
        }
    }

    // MARK: Purchases

    /// A store purchase's fields. The feed keeps neither price nor the purchase's own time, so
    /// `price`, `currency` and (unless a detail holds it) `purchased_at_ms` are `null`.
    private static func purchaseFields(_ type: EventType, _ details: EventDetails, identity: EventIdentity) -> JSONObject {
        let entitlementIDs = entitlements(details, identity: identity)
        let isGrant = details.string("store") == Entitlements.promotionalStore
        let transactionID = details.string("transaction_id")
        var object: JSONObject = [
            "product_id": .optional(details.string("product_id"), JSONValue.string),
            "entitlement_ids": strings(entitlementIDs),
            "entitlement_id": .optional(entitlementIDs.first, JSONValue.string),
            "period_type": .string(isGrant ? "PROMOTIONAL" : details.string("period_type")?.uppercased() ?? "NORMAL"),
            "purchased_at_ms": .optional(details.int("purchased_ms"), JSONValue.int),
            "expiration_at_ms": .optional(details.int("expires_ms"), JSONValue.int),
            "transaction_id": .optional(transactionID, JSONValue.string),
            "original_transaction_id": .optional(details.string("original_transaction_id") ?? transactionID, JSONValue.string),
            "price": .null,
            "currency": .null,
            "is_family_share": .bool(false),
        ]
        switch type {
        case .cancellation: object.append("cancel_reason", .string(reason(details)))
        case .expiration: object.append("expiration_reason", .string(reason(details)))
        case .productChange: object.append("new_product_id", .optional(details.string("product_id"), JSONValue.string))
        case .billingIssue:
            object.append("grace_period_expiration_at_ms", .optional(details.int("grace_expires_ms"), JSONValue.int))
        default: break
        }
        return object
    }

    /// RevenueCat's reason spellings; a revoke (a refund through Apple, family sharing ended)
    /// is support's doing, and a reason the feed does not give is `UNKNOWN`.
    private static func reason(_ details: EventDetails) -> String {
        guard let reason = details.string("reason") else { return "UNKNOWN" }
        if reason == "revoked" { return "CUSTOMER_SUPPORT" }
        let spelled = reason.uppercased()
        return revenueCatReasons.contains(spelled) ? spelled : "UNKNOWN"
    }

    private static let revenueCatReasons: Set<String> = [
        "UNSUBSCRIBE", "BILLING_ERROR", "DEVELOPER_INITIATED", "PRICE_INCREASE", "CUSTOMER_SUPPORT", "SUBSCRIPTION_PAUSED",
    ]

    private static func promotionalFields(_ details: EventDetails, identity: EventIdentity) -> JSONObject {
        let entitlementIDs = entitlements(details, identity: identity)
        return [
            "entitlement_ids": strings(entitlementIDs),
            "entitlement_id": .optional(entitlementIDs.first, JSONValue.string),
            "period_type": "PROMOTIONAL",
            "expiration_at_ms": .optional(details.int("expires_ms"), JSONValue.int),
        ]
    }

    /// What the identity says the event unlocks, else the one entitlement a grant names.
    private static func entitlements(_ details: EventDetails, identity: EventIdentity) -> [String] {
        if !identity.entitlementIDs.isEmpty { return identity.entitlementIDs }
        return details.string("entitlement").map { [$0] } ?? []
    }

    // MARK: Currencies

    /// RevenueCat's `adjustments` and `source` (`in_app_purchase` for what a purchase moved,
    /// `admin_api` for a backend's transaction or a merge), Gatehouse's own source as
    /// `source_detail` and the balance after it.
    private static func currencyFields(_ details: EventDetails, identity: EventIdentity) -> JSONObject {
        let code = details.string("currency") ?? ""
        let source = details.string("source") ?? ""
        let byPurchase = source != CurrencySource.transaction.rawValue && source != CurrencySource.merge.rawValue
        return [
            "adjustments": [
                ["amount": .int(details.int("amount") ?? 0),
                 "currency": ["code": .string(code), "name": .string(identity.currencyName ?? code)]],
            ],
            "virtual_currency_transaction_id": .optional(details.string("transaction_id"), JSONValue.string),
            "source": .string(byPurchase ? "in_app_purchase" : "admin_api"),
            "source_detail": .string(source),
            "transaction_id": byPurchase ? .optional(details.string("ref"), JSONValue.string) : .null,
            "reason": .optional(details.string("reason"), JSONValue.string),
            "balance": .int(details.int("balance") ?? 0),
        ]
    }

    private static func strings(_ values: [String]) -> JSONValue {
        .array(values.map(JSONValue.string))
    }
}

/// An event's details by name.
struct EventDetails {
    private let details: [EventDetail]

    init(_ details: [EventDetail]) {
        self.details = details
    }

    func value(_ name: String) -> EventDetail.Value? {
        details.first { $0.name == name }?.value
    }

    func string(_ name: String) -> String? {
        if case .string(let string) = value(name) { return string }
        return nil
    }

    func int(_ name: String) -> Int64? {
        if case .int(let int) = value(name) { return int }
        return nil
    }
}
