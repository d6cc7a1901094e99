public import GatehouseCore

/// The profile document, the answer of most profile ops (PROTOCOL.md, "Profiles"), with its
/// members in the documented order.
public enum ProfileDocument {
    public static func json(_ profile: Profile, config: ProjectConfig, includeAttributes: Bool) -> JSONObject {
        var document: JSONObject = [
            "profile": profileObject(profile),
            // Purchases, entitlements and balances arrive with the purchase and currency work;
            // until then every profile truly has none, and every balance is 0.
            "entitlements": .object(JSONObject()),
            "subscriptions": .object(JSONObject()),
            "purchases": .array([]),
            "currencies": .object(JSONObject(members: config.currencies.map { JSONObject.Member(key: $0.code, value: 0) })),
            "cursor": .int(Int64(profile.cursor)),
        ]
        if includeAttributes {
            document.append("attributes", attributes(profile))
        }
        return document
    }

    static func profileObject(_ profile: Profile) -> JSONValue {
        [
            "profile_id": .string(profile.id.description),
            "customer_user_id": .optional(profile.customerUserID) { .string($0) },
            "app_account_token": .string(profile.token.description),
            "aliases": .array(profile.aliases.map { .string($0.description) }),
            "created_ms": .int(profile.createdMs),
            "last_seen_ms": .int(profile.lastSeenMs),
        ]
    }

    /// A profile's attributes, keys in order.
    public static func attributes(_ profile: Profile) -> JSONValue {
        .object(JSONObject(members: profile.attributes.sorted { $0.key < $1.key }.map { JSONObject.Member(key: $0.key, value: .string($0.value)) }))
    }
}

/// Events of the feed as the `events` op lists them (PROTOCOL.md, "The event feed").
public enum EventDocument {
    public static func json(_ event: Event) -> JSONValue {
        var object: JSONObject = [
            "id": .string(event.id),
            "cursor": .int(Int64(event.cursor)),
            "type": .string(event.type.rawValue),
            "profile_id": .string(event.profileID.description),
            "customer_user_id": .optional(event.customerUserID) { .string($0) },
            "at_ms": .int(event.atMs),
        ]
        for detail in event.details {
            switch detail.value {
            case .string(let string): object.append(detail.name, .string(string))
            case .int(let int): object.append(detail.name, .int(int))
            case .profiles(let ids): object.append(detail.name, .array(ids.map { .string($0.description) }))
            }
        }
        return .object(object)
    }
}
