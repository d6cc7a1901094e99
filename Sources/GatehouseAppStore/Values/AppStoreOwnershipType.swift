/// Whether the customer bought the product or has it through Family Sharing (`inAppOwnershipType`).
public struct AppStoreOwnershipType: AppleStringValue {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }
}

extension AppStoreOwnershipType {
    public static let purchased = AppStoreOwnershipType(rawValue: "PURCHASED")
    public static let familyShared = AppStoreOwnershipType(rawValue: "FAMILY_SHARED")
}
