/// The event an App Store Server Notification V2 reports (`notificationType`).
public struct AppStoreNotificationType: AppleStringValue {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }
}

extension AppStoreNotificationType {
    public static let consumptionRequest = AppStoreNotificationType(rawValue: "CONSUMPTION_REQUEST")
    public static let didChangeRenewalPref = AppStoreNotificationType(rawValue: "DID_CHANGE_RENEWAL_PREF")
    public static let didChangeRenewalStatus = AppStoreNotificationType(rawValue: "DID_CHANGE_RENEWAL_STATUS")
    public static let didFailToRenew = AppStoreNotificationType(rawValue: "DID_FAIL_TO_RENEW")
    public static let didRenew = AppStoreNotificationType(rawValue: "DID_RENEW")
    public static let expired = AppStoreNotificationType(rawValue: "EXPIRED")
    public static let externalPurchaseToken = AppStoreNotificationType(rawValue: "EXTERNAL_PURCHASE_TOKEN")
    public static let gracePeriodExpired = AppStoreNotificationType(rawValue: "GRACE_PERIOD_EXPIRED")
    public static let metadataUpdate = AppStoreNotificationType(rawValue: "METADATA_UPDATE")
    public static let migration = AppStoreNotificationType(rawValue: "MIGRATION")
    public static let offerRedeemed = AppStoreNotificationType(rawValue: "OFFER_REDEEMED")
    public static let oneTimeCharge = AppStoreNotificationType(rawValue: "ONE_TIME_CHARGE")
    public static let priceChange = AppStoreNotificationType(rawValue: "PRICE_CHANGE")
    public static let priceIncrease = AppStoreNotificationType(rawValue: "PRICE_INCREASE")
    public static let refund = AppStoreNotificationType(rawValue: "REFUND")
    public static let refundDeclined = AppStoreNotificationType(rawValue: "REFUND_DECLINED")
    public static let refundReversed = AppStoreNotificationType(rawValue: "REFUND_REVERSED")
    public static let renewalExtended = AppStoreNotificationType(rawValue: "RENEWAL_EXTENDED")
    public static let renewalExtension = AppStoreNotificationType(rawValue: "RENEWAL_EXTENSION")
    public static let rescindConsent = AppStoreNotificationType(rawValue: "RESCIND_CONSENT")
    public static let revoke = AppStoreNotificationType(rawValue: "REVOKE")
    public static let subscribed = AppStoreNotificationType(rawValue: "SUBSCRIBED")
    public static let test = AppStoreNotificationType(rawValue: "TEST")
}
