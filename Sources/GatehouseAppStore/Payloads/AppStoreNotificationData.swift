/// The `data` of a notification: which app and environment it concerns, and the signed
/// transaction and renewal info it carries (still signed; verify them before use).
public struct AppStoreNotificationData: Sendable, Equatable {
    public var appAppleId: Int64?
    public var bundleId: String?
    public var bundleVersion: String?
    public var environment: AppStoreEnvironment?
    /// A JWS of an ``AppStoreTransaction``.
    public var signedTransactionInfo: String?
    /// A JWS of an ``AppStoreRenewalInfo``.
    public var signedRenewalInfo: String?
    /// The subscription's status: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
    public var status: Int?
    /// Why the customer asked for a refund (`CONSUMPTION_REQUEST`).
    public var consumptionRequestReason: String?

    public init() {}

    init(_ fields: PayloadReader) throws(AppStoreVerificationError) {
        appAppleId = try fields.int64("appAppleId")
        bundleId = try fields.string("bundleId")
        bundleVersion = try fields.string("bundleVersion")
        environment = try fields.kind("environment", as: AppStoreEnvironment.self)
        signedTransactionInfo = try fields.string("signedTransactionInfo")
        signedRenewalInfo = try fields.string("signedRenewalInfo")
        status = try fields.int("status")
        consumptionRequestReason = try fields.string("consumptionRequestReason")
    }
}
