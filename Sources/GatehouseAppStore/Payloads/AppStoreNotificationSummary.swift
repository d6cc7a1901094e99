/// The `summary` of a `RENEWAL_EXTENSION` notification, reduced to what identifies the app.
public struct AppStoreNotificationSummary: Sendable, Equatable {
    public var bundleId: String?
    public var environment: AppStoreEnvironment?
    public var appAppleId: Int64?

    public init() {}

    init(_ fields: PayloadReader) throws(AppStoreVerificationError) {
        bundleId = try fields.string("bundleId")
        environment = try fields.kind("environment", as: AppStoreEnvironment.self)
        appAppleId = try fields.int64("appAppleId")
    }
}
