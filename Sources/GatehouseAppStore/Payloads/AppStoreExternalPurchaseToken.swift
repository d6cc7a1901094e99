/// The `externalPurchaseToken` of an `EXTERNAL_PURCHASE_TOKEN` notification. It names no
/// environment: a token id starting with `SANDBOX` is a sandbox token.
public struct AppStoreExternalPurchaseToken: Sendable, Equatable {
    public var externalPurchaseId: String?
    public var tokenCreationDate: Int64?
    public var appAppleId: Int64?
    public var bundleId: String?

    public init() {}

    init(_ fields: PayloadReader) throws(AppStoreVerificationError) {
        externalPurchaseId = try fields.string("externalPurchaseId")
        tokenCreationDate = try fields.timestamp("tokenCreationDate")
        appAppleId = try fields.int64("appAppleId")
        bundleId = try fields.string("bundleId")
    }
}
