/// The detail of a notification's event (`subtype`), when its type has one.
public struct AppStoreNotificationSubtype: AppleStringValue {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }
}

extension AppStoreNotificationSubtype {
    public static let accepted = AppStoreNotificationSubtype(rawValue: "ACCEPTED")
    public static let activeTokenReminder = AppStoreNotificationSubtype(rawValue: "ACTIVE_TOKEN_REMINDER")
    public static let autoRenewDisabled = AppStoreNotificationSubtype(rawValue: "AUTO_RENEW_DISABLED")
    public static let autoRenewEnabled = AppStoreNotificationSubtype(rawValue: "AUTO_RENEW_ENABLED")
    public static let billingRecovery = AppStoreNotificationSubtype(rawValue: "BILLING_RECOVERY")
    public static let billingRetry = AppStoreNotificationSubtype(rawValue: "BILLING_RETRY")
    public static let created = AppStoreNotificationSubtype(rawValue: "CREATED")
    public static let downgrade = AppStoreNotificationSubtype(rawValue: "DOWNGRADE")
    public static let failure = AppStoreNotificationSubtype(rawValue: "FAILURE")
    public static let gracePeriod = AppStoreNotificationSubtype(rawValue: "GRACE_PERIOD")
    public static let initialBuy = AppStoreNotificationSubtype(rawValue: "INITIAL_BUY")
    public static let pending = AppStoreNotificationSubtype(rawValue: "PENDING")
    public static let priceIncrease = AppStoreNotificationSubtype(rawValue: "PRICE_INCREASE")
    public static let productNotForSale = AppStoreNotificationSubtype(rawValue: "PRODUCT_NOT_FOR_SALE")
    public static let resubscribe = AppStoreNotificationSubtype(rawValue: "RESUBSCRIBE")
    public static let summary = AppStoreNotificationSubtype(rawValue: "SUMMARY")
    public static let unreported = AppStoreNotificationSubtype(rawValue: "UNREPORTED")
    public static let upgrade = AppStoreNotificationSubtype(rawValue: "UPGRADE")
    public static let voluntary = AppStoreNotificationSubtype(rawValue: "VOLUNTARY")
}
