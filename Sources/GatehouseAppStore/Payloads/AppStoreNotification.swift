public import GatehouseWire

/// An App Store Server Notification V2, decoded (Apple's `ResponseBodyV2DecodedPayload`).
///
/// Exactly one of `data`, `summary`, `externalPurchaseToken` and `appData` is normally present,
/// depending on the type; the nested transaction and renewal info stay signed strings here
/// (``AppStoreVerifier/decodeNotification(signedPayloadBody:)`` verifies and decodes them too).
public struct AppStoreNotification: Sendable, Equatable {
    public var notificationType: AppStoreNotificationType
    public var subtype: AppStoreNotificationSubtype?
    /// Unique per notification; Apple resends the same UUID when it retries.
    public var notificationUUID: String
    /// `"2.0"`.
    public var version: String?
    public var signedDate: Int64?
    /// The app, environment and signed transaction of most notification types.
    public var data: AppStoreNotificationData?
    /// The outcome of a subscription-renewal-date extension request (`RENEWAL_EXTENSION`/`SUMMARY`).
    public var summary: AppStoreNotificationSummary?
    /// An external purchase token (`EXTERNAL_PURCHASE_TOKEN`).
    public var externalPurchaseToken: AppStoreExternalPurchaseToken?
    /// App-level data without a transaction (`RESCIND_CONSENT`).
    public var appData: AppStoreNotificationAppData?

    public init(notificationType: AppStoreNotificationType, notificationUUID: String) {
        self.notificationType = notificationType
        self.notificationUUID = notificationUUID
    }

    /// The signed transaction carried in `data`, not yet verified.
    public var signedTransactionInfo: String? { data?.signedTransactionInfo }
    /// The signed renewal info carried in `data`, not yet verified.
    public var signedRenewalInfo: String? { data?.signedRenewalInfo }

    /// Decodes a payload that has already been verified. `notificationType` and
    /// `notificationUUID` are required; everything else is optional; unknown fields are ignored.
    public init(verifiedPayload payload: JSONObject) throws(AppStoreVerificationError) {
        let fields = PayloadReader(payload)
        notificationType = AppStoreNotificationType(rawValue: try fields.requiredString("notificationType"))
        subtype = try fields.kind("subtype", as: AppStoreNotificationSubtype.self)
        notificationUUID = try fields.requiredString("notificationUUID")
        version = try fields.string("version")
        signedDate = try fields.timestamp("signedDate")
        data = try fields.object("data", AppStoreNotificationData.init)
        summary = try fields.object("summary", AppStoreNotificationSummary.init)
        externalPurchaseToken = try fields.object("externalPurchaseToken", AppStoreExternalPurchaseToken.init)
        appData = try fields.object("appData", AppStoreNotificationAppData.init)
    }
}

extension AppStoreNotification {
    /// Which app and environment the notification is for, taken as Apple's libraries take it:
    /// from `data`, else `summary`, else `externalPurchaseToken` (whose environment is Sandbox
    /// exactly when its id starts with `SANDBOX`), else `appData`.
    var appScope: (bundleId: String?, appAppleId: Int64?, environment: AppStoreEnvironment?) {
        if let data { return (data.bundleId, data.appAppleId, data.environment) }
        if let summary { return (summary.bundleId, summary.appAppleId, summary.environment) }
        if let token = externalPurchaseToken {
            let sandbox = token.externalPurchaseId?.hasPrefix("SANDBOX") ?? false
            return (token.bundleId, token.appAppleId, sandbox ? .sandbox : .production)
        }
        if let appData { return (appData.bundleId, appData.appAppleId, appData.environment) }
        return (nil, nil, nil)
    }
}
