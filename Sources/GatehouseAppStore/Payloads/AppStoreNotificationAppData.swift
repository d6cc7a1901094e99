/// The `appData` of a notification about the app rather than a transaction.
public struct AppStoreNotificationAppData: Sendable, Equatable {
    public var appAppleId: Int64?
    public var bundleId: String?
    public var environment: AppStoreEnvironment?
    /// A JWS of an app transaction, still signed.
    public var signedAppTransactionInfo: String?

    public init() {}

    init(_ fields: PayloadReader) throws(AppStoreVerificationError) {
        appAppleId = try fields.int64("appAppleId")
        bundleId = try fields.string("bundleId")
        environment = try fields.kind("environment", as: AppStoreEnvironment.self)
        signedAppTransactionInfo = try fields.string("signedAppTransactionInfo")
    }
}
