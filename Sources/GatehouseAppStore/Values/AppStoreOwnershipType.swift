/// Whether the customer bought the product or has it through Family Sharing (`inAppOwnershipType`).
///
/// An open set: a value Apple adds later decodes as itself rather than failing, so new values
/// never make genuine data unreadable. Match the named values below, with a `default:`.
public struct AppStoreOwnershipType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The string exactly as Apple sends it.
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }
}

extension AppStoreOwnershipType {
    public static let purchased = AppStoreOwnershipType(rawValue: "PURCHASED")
    public static let familyShared = AppStoreOwnershipType(rawValue: "FAMILY_SHARED")
}
