/// The kind of In-App Purchase a transaction is for (`type` in JWSTransactionDecodedPayload).
///
/// An open set: a value Apple adds later decodes as itself rather than failing, so new values
/// never make genuine data unreadable. Match the named values below, with a `default:`.
public struct AppStoreProductType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The string exactly as Apple sends it.
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }
}

extension AppStoreProductType {
    public static let autoRenewableSubscription = AppStoreProductType(rawValue: "Auto-Renewable Subscription")
    public static let nonConsumable = AppStoreProductType(rawValue: "Non-Consumable")
    public static let consumable = AppStoreProductType(rawValue: "Consumable")
    public static let nonRenewingSubscription = AppStoreProductType(rawValue: "Non-Renewing Subscription")
}
