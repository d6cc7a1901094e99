/// Why a transaction happened (`transactionReason`): a purchase by the customer, or an automatic renewal.
public struct AppStoreTransactionReason: AppleStringValue {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }
}

extension AppStoreTransactionReason {
    public static let purchase = AppStoreTransactionReason(rawValue: "PURCHASE")
    public static let renewal = AppStoreTransactionReason(rawValue: "RENEWAL")
}
