public import GatehouseCore

/// The profile document, the answer of most profile ops (PROTOCOL.md, "Profiles"), with its
/// members in the documented order.
public enum ProfileDocument {
    public static func json(
        _ profile: Profile, holdings: ProjectState.Holdings, config: ProjectConfig, includeAttributes: Bool
    ) -> JSONObject {
        var document: JSONObject = [
            "profile": profileObject(profile),
            "entitlements": .object(JSONObject(members: holdings.entitlements.map {
                JSONObject.Member(key: $0.entitlementID, value: entitlement($0))
            })),
            "subscriptions": .object(JSONObject(members: holdings.subscriptions.map {
                JSONObject.Member(key: $0.originalTransactionID, value: subscription($0))
            })),
            "purchases": .array(holdings.purchases.map(purchase)),
            "currencies": .object(JSONObject(members: holdings.balances.map { JSONObject.Member(key: $0.code, value: .int($0.balance)) })),
            "cursor": .int(Int64(profile.cursor)),
        ]
        if includeAttributes {
            document.append("attributes", attributes(profile))
        }
        return document
    }

    static func entitlement(_ view: EntitlementView) -> JSONValue {
        [
            "is_active": .bool(view.isActive),
            "product_id": .optional(view.productID) { .string($0) },
            "store": .string(view.store),
            "expires_ms": .optional(view.expiresMs) { .int($0) },
            "grace_expires_ms": .optional(view.graceExpiresMs) { .int($0) },
            "will_renew": .bool(view.willRenew),
            "period_type": .string(view.periodType),
            "billing_issue": .bool(view.billingIssue),
        ]
    }

    static func subscription(_ subscription: Subscription) -> JSONValue {
        [
            "product_id": .string(subscription.productID),
            "store": .string(subscription.store),
            "status": .string(subscription.status.rawValue),
            "expires_ms": .int(subscription.expiresMs),
            "will_renew": .bool(subscription.willRenew),
            "period_type": .string(subscription.periodType.rawValue),
            "environment": .string(subscription.environment.rawValue),
        ]
    }

    static func purchase(_ purchase: OneTimePurchase) -> JSONValue {
        [
            "transaction_id": .string(purchase.transactionID),
            "product_id": .string(purchase.productID),
            "store": .string(purchase.store),
            "purchased_ms": .int(purchase.purchasedMs),
            "refunded": .bool(purchase.refunded),
        ]
    }

    static func profileObject(_ profile: Profile) -> JSONValue {
        [
            "profile_id": .string(profile.id.description),
            "customer_user_id": .optional(profile.customerUserID) { .string($0) },
            "install_id": .optional(profile.installID) { .string($0.description) },
            "app_account_token": .string(profile.token.description),
            "aliases": .array(profile.aliases.map { .string($0.description) }),
            "created_ms": .int(profile.createdMs),
            "last_seen_ms": .int(profile.lastSeenMs),
        ]
    }

    /// A profile's attributes, keys in order, each as its value (the times are in
    /// ``Profile/attributes``, for forms that show them).
    public static func attributes(_ profile: Profile) -> JSONValue {
        .object(JSONObject(members: profile.attributes.sorted { $0.key < $1.key }.map {
            JSONObject.Member(key: $0.key, value: .string($0.value.value))
        }))
    }
}

/// Events of the feed as the `events` op lists them (PROTOCOL.md, "The event feed").
public enum EventDocument {
    public static func json(_ event: Event) -> JSONValue {
        var object: JSONObject = [
            "id": .string(event.id),
            "cursor": .int(Int64(event.cursor)),
            "type": .string(event.type.rawValue),
            "profile_id": .optional(event.profileID) { .string($0.description) },
            "customer_user_id": .optional(event.customerUserID) { .string($0) },
            "at_ms": .int(event.atMs),
        ]
        for detail in event.details { object.append(detail.name, json(detail.value)) }
        return .object(object)
    }

    /// A detail's value as the feed shows it (profile ids as their text).
    public static func json(_ value: EventDetail.Value) -> JSONValue {
        switch value {
        case .string(let string): .string(string)
        case .int(let int): .int(int)
        case .profiles(let ids): .array(ids.map { .string($0.description) })
        case .strings(let strings): .array(strings.map { .string($0) })
        case .bool(let bool): .bool(bool)
        }
    }
}
