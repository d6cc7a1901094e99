/// Why a transaction happened (`transactionReason`): a purchase by the customer, or an automatic renewal.
///
/// An open set: a value Apple adds later decodes as itself rather than failing, so new values
/// never make genuine data unreadable. Match the named values below, with a `default:`.
public struct AppStoreTransactionReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The string exactly as Apple sends it.
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }
}

extension AppStoreTransactionReason {
    public static let purchase = AppStoreTransactionReason(rawValue: "PURCHASE")
    public static let renewal = AppStoreTransactionReason(rawValue: "RENEWAL")
}
