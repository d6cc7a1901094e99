/// Gatehouse's store names as RevenueCat's bodies spell them (HTTP.md: `app_store`,
/// `play_store`, `stripe`, `promotional`, `test_store`), and the subscription page of each store
/// that has one.
public enum RevenueCatStore {
    public static let appStoreManagementURL = "https://apps.apple.com/account/subscriptions"
    public static let playStoreManagementURL = "https://play.google.com/store/account/subscriptions"

    /// RevenueCat's name for the store Gatehouse calls `store`. A name this table does not know
    /// is passed through: both SDKs read an unknown store as "unknown" rather than failing.
    public static func name(_ store: String) -> String {
        switch store {
        case TestStore.name: "test_store"
        case "google_play": "play_store"
        default: store
        }
    }

    /// The page where a buyer manages subscriptions of `store` (a Gatehouse name); `nil` for a
    /// store without one.
    public static func managementURL(_ store: String) -> String? {
        switch name(store) {
        case "app_store": appStoreManagementURL
        case "play_store": playStoreManagementURL
        default: nil
        }
    }
}
