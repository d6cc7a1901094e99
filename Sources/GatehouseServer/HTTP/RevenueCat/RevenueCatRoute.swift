import GatehouseHTTP

/// The RevenueCat-compatible REST endpoints (HTTP.md, "Endpoints"), served at the origin's root
/// because RevenueCat's SDKs drop any path in their proxy URL.
enum RevenueCatRoute: Sendable {
    case subscriber
    case identify
    case receipts
    case attributes
    case offerings
    case productEntitlementMapping
    case virtualCurrencies
    case introEligibility
    case events
    case healthReport
    case health
    case deleteSubscriber
    case promotional
    case revokePromotionals
    case currencyTransaction
    case redeemPurchase

    /// Each route's method and pattern.
    static let patterns: [(method: String, pattern: String, route: RevenueCatRoute)] = [
        ("GET", "/v1/subscribers/{app_user_id}", .subscriber),
        ("POST", "/v1/subscribers/identify", .identify),
        ("POST", "/v1/subscribers/redeem_purchase", .redeemPurchase),
        ("POST", "/v1/receipts", .receipts),
        ("POST", "/v1/subscribers/{app_user_id}/attributes", .attributes),
        ("GET", "/v1/subscribers/{app_user_id}/offerings", .offerings),
        ("GET", "/v1/product_entitlement_mapping", .productEntitlementMapping),
        ("GET", "/v1/subscribers/{app_user_id}/virtual_currencies", .virtualCurrencies),
        ("POST", "/v1/subscribers/{app_user_id}/intro_eligibility", .introEligibility),
        ("POST", "/v1/events", .events),
        ("GET", "/v1/subscribers/{app_user_id}/health_report_availability", .healthReport),
        ("GET", "/v1/health", .health),
        ("DELETE", "/v1/subscribers/{app_user_id}", .deleteSubscriber),
        ("POST", "/v1/subscribers/{app_user_id}/entitlements/{entitlement}/promotional", .promotional),
        ("POST", "/v1/subscribers/{app_user_id}/entitlements/{entitlement}/revoke_promotionals", .revokePromotionals),
        ("POST", "/v1/virtual-currencies/{app_user_id}/{code}/transactions", .currencyTransaction),
    ]

    /// The key a route needs: none (the SDK sends none), the public key or the secret one
    /// (which may do everything the public key may).
    enum Key {
        case none
        case `public`
        case secret
    }

    var key: Key {
        switch self {
        case .health, .healthReport: .none
        case .deleteSubscriber, .promotional, .revokePromotionals, .currencyTransaction: .secret
        default: .public
        }
    }

    /// Whether a path is RevenueCat's (so that an answer refusing it takes RevenueCat's error
    /// form): everything under `/v1/` but Gatehouse's own `/v1/op` and `/v1/stores/…`.
    static func owns(path: String) -> Bool {
        path.hasPrefix("/v1/") && path != "/v1/op" && !path.hasPrefix("/v1/stores/")
    }
}
