/// The kind of In-App Purchase a transaction is for (`type` in JWSTransactionDecodedPayload).
public struct AppStoreProductType: AppleStringValue {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }
}

extension AppStoreProductType {
    public static let autoRenewableSubscription = AppStoreProductType(rawValue: "Auto-Renewable Subscription")
    public static let nonConsumable = AppStoreProductType(rawValue: "Non-Consumable")
    public static let consumable = AppStoreProductType(rawValue: "Consumable")
    public static let nonRenewingSubscription = AppStoreProductType(rawValue: "Non-Renewing Subscription")
}
