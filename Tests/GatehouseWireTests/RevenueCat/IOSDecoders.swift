import Foundation
import Testing

// What the RevenueCat iOS SDK (purchases-ios) decodes, written from its decoders as read at
// commit ff486da: `Sources/Networking/Responses/CustomerInfoResponse.swift`,
// `OfferingsResponse.swift`, `ProductEntitlementMappingResponse.swift`,
// `VirtualCurrenciesResponse.swift`, `GetIntroEligibilityResponse.swift`,
// `Sources/Networking/HTTPClient/ErrorResponse.swift`, and the decoder they all use,
// `JSONDecoder.default` (`Codable+Extensions.swift`): snake_case keys read as camelCase, and
// dates as ISO 8601 internet date-time with fractional seconds, else without. These are not the
// SDK's types: they hold the same fields with the same optionality, so a body that lacks a field
// the SDK requires, or gives it the wrong type or date form, fails to decode here as it would
// there. Where the SDK forgives a bad value (`@IgnoreDecodeErrors` on `store`, `period_type`,
// `ownership_type` and the subscriber's `management_url`), these read it strictly instead,
// which the bodies never need forgiven.
enum IOSDecoders {
    /// `JSONDecoder.makeDefault()`.
    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        // One decoder decodes on one thread at a time, so its formatters are never shared.
        nonisolated(unsafe) let withFraction = ISO8601DateFormatter()
        withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        nonisolated(unsafe) let withoutFraction = ISO8601DateFormatter()
        withoutFraction.formatOptions = [.withInternetDateTime]
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = withFraction.date(from: text) ?? withoutFraction.date(from: text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "Invalid ISO8601 date: \(text)")
            }
            return date
        }
        return decoder
    }

    static func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) throws -> T {
        try decoder().decode(type, from: Data(bytes))
    }

    /// The stores `Store+Extensions.swift` names; anything else the SDK reads as unknown.
    static let stores: Set<String> = [
        "app_store", "mac_app_store", "play_store", "stripe", "promotional", "amazon", "rc_billing", "external", "paddle",
        "test_store", "galaxy",
    ]
    static let periodTypes: Set<String> = ["normal", "intro", "trial", "prepaid"]
    static let ownershipTypes: Set<String> = ["PURCHASED", "FAMILY_SHARED"]
}

/// `CustomerInfoResponse`.
struct IOSCustomerInfo: Decodable {
    var requestDate: Date
    var subscriber: Subscriber

    struct Subscriber: Decodable {
        var originalAppUserId: String
        var managementUrl: URL?
        var originalApplicationVersion: String?
        var originalPurchaseDate: Date?
        var firstSeen: Date
        // `@DefaultDecodable.EmptyDictionary`: absent or `null` reads as empty.
        var subscriptions: [String: Subscription]?
        var nonSubscriptions: [String: [Transaction]]?
        var entitlements: [String: Entitlement]?
        var subscriberAttributes: [String: Attribute]?
    }

    struct Subscription: Decodable {
        var periodType: String
        var purchaseDate: Date
        var originalPurchaseDate: Date?
        var expiresDate: Date?
        var store: String
        var isSandbox: Bool?
        var unsubscribeDetectedAt: Date?
        var billingIssuesDetectedAt: Date?
        var ownershipType: String
        var productPlanIdentifier: String?
        var metadata: [String: String]?
        var gracePeriodExpiresDate: Date?
        var refundedAt: Date?
        var storeTransactionId: String?
        var autoResumeDate: Date?
        var displayName: String?
        var price: Price?
        var managementUrl: URL?
    }

    struct Price: Decodable {
        var currency: String
        var amount: Double
    }

    struct Transaction: Decodable {
        var purchaseDate: Date
        var originalPurchaseDate: Date?
        var id: String?
        var storeTransactionId: String?
        var store: String
        var isSandbox: Bool
        var displayName: String?
        var price: Price?
    }

    struct Entitlement: Decodable {
        var expiresDate: Date?
        var productIdentifier: String
        var purchaseDate: Date?
    }

    struct Attribute: Decodable {
        var value: String?
        var updatedAtMs: Double
    }

    /// What the SDK does after decoding (`EntitlementInfos`, `NonSubscriptionTransaction`): an
    /// entitlement whose product is in neither purchase list is dropped, and so is a transaction
    /// without both ids. The bodies must lose nothing that way; the values must be ones the SDK
    /// knows.
    func checkNothingIsDropped() {
        let subscriptions = subscriber.subscriptions ?? [:]
        let nonSubscriptions = subscriber.nonSubscriptions ?? [:]
        for (id, entitlement) in subscriber.entitlements ?? [:] {
            let product = entitlement.productIdentifier
            #expect(subscriptions[product] != nil || nonSubscriptions[product]?.last != nil, "entitlement \(id) dropped")
        }
        for (product, subscription) in subscriptions {
            #expect(IOSDecoders.stores.contains(subscription.store), "\(product): store \(subscription.store)")
            #expect(IOSDecoders.periodTypes.contains(subscription.periodType), "\(product): \(subscription.periodType)")
            #expect(IOSDecoders.ownershipTypes.contains(subscription.ownershipType), "\(product): \(subscription.ownershipType)")
        }
        for (product, transactions) in nonSubscriptions {
            for transaction in transactions {
                #expect(transaction.id != nil && transaction.storeTransactionId != nil, "\(product): a transaction dropped")
                #expect(IOSDecoders.stores.contains(transaction.store), "\(product): store \(transaction.store)")
            }
        }
    }
}

/// `OfferingsResponse` (without paywalls, placements or targeting, which the bodies never send).
struct IOSOfferings: Decodable {
    var currentOfferingId: String?
    var offerings: [Offering]

    struct Offering: Decodable {
        var identifier: String
        var description: String
        var packages: [Package]
        var metadata: [String: IOSAnyJSON]?
        var webCheckoutUrl: URL?
    }

    struct Package: Decodable {
        var identifier: String
        var platformProductIdentifier: String
        var platformProductPlanIdentifier: String?
        var webCheckoutUrl: URL?
    }
}

/// Any JSON value, as the SDK's `AnyDecodable` takes offering metadata.
enum IOSAnyJSON: Decodable {
    case null, bool(Bool), number(Double), string(String), array([IOSAnyJSON]), object([String: IOSAnyJSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let bool = try? container.decode(Bool.self) { self = .bool(bool) }
        else if let number = try? container.decode(Double.self) { self = .number(number) }
        else if let string = try? container.decode(String.self) { self = .string(string) }
        else if let array = try? container.decode([IOSAnyJSON].self) { self = .array(array) }
        else { self = .object(try container.decode([String: IOSAnyJSON].self)) }
    }
}

/// `ProductEntitlementMappingResponse`.
struct IOSProductEntitlementMapping: Decodable {
    var productEntitlementMapping: [String: Product]

    struct Product: Decodable {
        var productIdentifier: String
        var basePlanId: String?
        var entitlements: [String]
    }
}

/// `VirtualCurrenciesResponse`.
struct IOSVirtualCurrencies: Decodable {
    var virtualCurrencies: [String: Currency]

    struct Currency: Decodable {
        var balance: Int
        var name: String
        var code: String
        var description: String?
    }
}

/// `ErrorResponse`: every field optional, `code` an integer (or a numeric string),
/// `attribute_errors` a list of `{key_name, message}`.
struct IOSErrorResponse: Decodable {
    var code: Int?
    var message: String?
    var attributeErrors: [AttributeError]?
    var purchaseRedemptionErrorInfo: RedemptionInfo?

    struct AttributeError: Decodable {
        var keyName: String
        var message: String
    }

    struct RedemptionInfo: Decodable {
        var obfuscatedEmail: String
    }
}
