import GatehouseWire
import Testing

// What the RevenueCat Android SDK (purchases-android) requires of a body, written from its
// readers as read at commit 4980371: `common/CustomerInfoFactory.kt`,
// `common/EntitlementInfoFactories.kt`, `common/responses/SubscriptionInfoResponse.kt`,
// `utils/JSONObjectExtensions.kt` (`getDate`, `optDate`), `utils/Iso8601Utils.java`,
// `common/OfferingParser.kt`, `common/offlineentitlements/ProductEntitlementMapping.kt` and
// `virtualcurrencies/VirtualCurrency.kt`. Android reads bodies with `org.json`, where `getX`
// throws on a missing key and `optX` does not; these checks fail a test where it would throw.
// Where `org.json` would coerce (a number read by `getString`), they are strict instead.
enum AndroidDecoders {
    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    /// `Iso8601Utils.parse`: four digits of year, `-`, month, `-`, day, `T`, hours, `:`,
    /// minutes, `:`, seconds, an optional fraction, then `Z` or an offset; anything else throws.
    static func date(_ value: JSONValue?, _ what: String) throws -> Int64 {
        guard let text = value?.stringValue else { throw Refused(description: "\(what): expected a date string") }
        let bytes = Array(text.utf8)
        func digits(_ range: Range<Int>) -> Bool { range.upperBound <= bytes.count && range.allSatisfy { (0x30...0x39).contains(bytes[$0]) } }
        func byte(_ at: Int, _ expected: UInt8) -> Bool { at < bytes.count && bytes[at] == expected }
        guard digits(0..<4), byte(4, 0x2D), digits(5..<7), byte(7, 0x2D), digits(8..<10), byte(10, 0x54), digits(11..<13),
            byte(13, 0x3A), digits(14..<16), byte(16, 0x3A), digits(17..<19)
        else { throw Refused(description: "\(what): not an RFC 3339 date: \(text)") }
        var offset = 19
        if byte(offset, 0x2E) {
            offset += 1
            while offset < bytes.count, (0x30...0x39).contains(bytes[offset]) { offset += 1 }
        }
        guard offset < bytes.count, [0x5A, 0x2B, 0x2D].contains(bytes[offset]) else {
            throw Refused(description: "\(what): no time zone indicator: \(text)")
        }
        guard let ms = ISO8601Text.ms(text) else { throw Refused(description: "\(what): not the bodies' date form: \(text)") }
        return ms
    }

    /// `optDate`: `null` or absent is none, anything else must be a date.
    static func optionalDate(_ value: JSONValue?, _ what: String) throws -> Int64? {
        guard let value, !value.isNull else { return nil }
        return try date(value, what)
    }

    static func object(_ value: JSONValue?, _ what: String) throws -> JSONObject {
        guard let object = value?.objectValue else { throw Refused(description: "\(what): expected an object") }
        return object
    }

    static func string(_ value: JSONValue?, _ what: String) throws -> String {
        guard let string = value?.stringValue else { throw Refused(description: "\(what): expected a string") }
        return string
    }

    static func bool(_ value: JSONValue?, _ what: String) throws -> Bool {
        guard let bool = value?.boolValue else { throw Refused(description: "\(what): expected a boolean") }
        return bool
    }

    /// `CustomerInfoFactory.buildCustomerInfo`, with `buildEntitlementInfos` and the
    /// `SubscriptionInfoResponse` of each subscription. Answers the entitlements it keeps.
    @discardableResult
    static func customerInfo(_ body: JSONObject) throws -> Set<String> {
        let subscriber = try object(body["subscriber"], "subscriber")
        let nonSubscriptions = try object(subscriber["non_subscriptions"], "non_subscriptions")
        var latestNonSubscriptions: [String: JSONObject] = [:]
        for member in nonSubscriptions.members {
            guard let list = member.value.arrayValue else { throw Refused(description: "non_subscriptions.\(member.key): expected an array") }
            if let last = list.last { latestNonSubscriptions[member.key] = try object(last, "non_subscriptions.\(member.key)[]") }
        }
        let subscriptions = try object(subscriber["subscriptions"], "subscriptions")
        for member in subscriptions.members {
            try subscriptionInfo(try object(member.value, "subscriptions.\(member.key)"), member.key)
        }
        _ = try date(body["request_date"], "request_date")
        _ = try date(subscriber["first_seen"], "first_seen")
        if let url = subscriber["management_url"], !url.isNull, url.stringValue == nil {
            throw Refused(description: "management_url: expected a string or null")
        }
        var kept: Set<String> = []
        guard let entitlements = subscriber["entitlements"]?.objectValue else { return kept }
        for member in entitlements.members {
            let entitlement = try object(member.value, "entitlements.\(member.key)")
            let product = entitlement["product_identifier"]?.stringValue ?? ""
            guard !product.isEmpty else { continue }
            guard let productData = subscriptions[product]?.objectValue ?? latestNonSubscriptions[product] else { continue }
            try entitlementInfo(entitlement, productData, member.key)
            kept.insert(member.key)
        }
        return kept
    }

    /// `buildEntitlementInfo`: dates of the entitlement, and of the purchase it names `store`,
    /// `is_sandbox` and `original_purchase_date`, all required.
    static func entitlementInfo(_ entitlement: JSONObject, _ productData: JSONObject, _ id: String) throws {
        _ = try optionalDate(entitlement["expires_date"], "\(id).expires_date")
        _ = try optionalDate(productData["unsubscribe_detected_at"], "\(id): unsubscribe_detected_at")
        _ = try optionalDate(productData["billing_issues_detected_at"], "\(id): billing_issues_detected_at")
        _ = try string(productData["store"], "\(id): store")
        _ = try date(entitlement["purchase_date"], "\(id).purchase_date")
        _ = try date(productData["original_purchase_date"], "\(id): original_purchase_date")
        _ = try string(entitlement["product_identifier"], "\(id).product_identifier")
        _ = try bool(productData["is_sandbox"], "\(id): is_sandbox")
    }

    /// `SubscriptionInfoResponse` (kotlinx): `purchase_date`, `store`, `is_sandbox` and
    /// `period_type` required; its other dates and a `price` of `{amount, currency}` optional.
    static func subscriptionInfo(_ subscription: JSONObject, _ product: String) throws {
        _ = try date(subscription["purchase_date"], "\(product).purchase_date")
        for key in ["original_purchase_date", "expires_date", "unsubscribe_detected_at", "billing_issues_detected_at",
                    "grace_period_expires_date", "refunded_at", "auto_resume_date"]
        {
            _ = try optionalDate(subscription[key], "\(product).\(key)")
        }
        _ = try string(subscription["store"], "\(product).store")
        _ = try bool(subscription["is_sandbox"], "\(product).is_sandbox")
        let periodType = try string(subscription["period_type"], "\(product).period_type")
        guard ["normal", "intro", "trial", "prepaid"].contains(periodType) else {
            throw Refused(description: "\(product).period_type: \(periodType)")
        }
        if let price = subscription["price"], !price.isNull {
            let price = try object(price, "\(product).price")
            guard price["amount"]?.numberValue != nil else { throw Refused(description: "\(product).price.amount") }
            _ = try string(price["currency"], "\(product).price.currency")
        }
    }

    /// `OfferingParser.createOfferings`: `offerings` and `current_offering_id` (`getString`:
    /// the key must be there), each offering's `identifier`, `description` and `packages`, each
    /// package's `identifier` and `platform_product_identifier`.
    static func offerings(_ body: JSONObject) throws {
        guard let offerings = body["offerings"]?.arrayValue else { throw Refused(description: "offerings: expected an array") }
        guard body["current_offering_id"] != nil else { throw Refused(description: "current_offering_id: missing") }
        for (index, value) in offerings.enumerated() {
            let offering = try object(value, "offerings[\(index)]")
            _ = try string(offering["identifier"], "offerings[\(index)].identifier")
            _ = try string(offering["description"], "offerings[\(index)].description")
            if let metadata = offering["metadata"], metadata.objectValue == nil {
                throw Refused(description: "offerings[\(index)].metadata: expected an object")
            }
            guard let packages = offering["packages"]?.arrayValue else { throw Refused(description: "offerings[\(index)].packages") }
            for package in packages {
                let package = try object(package, "offerings[\(index)].packages[]")
                _ = try string(package["identifier"], "package identifier")
                _ = try string(package["platform_product_identifier"], "platform_product_identifier")
            }
        }
    }
}
