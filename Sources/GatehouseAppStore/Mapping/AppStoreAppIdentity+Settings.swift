public import GatehouseCore

extension AppStoreAppIdentity {
    /// The app a project's `stores.app_store` configures: bundle id, environment (`sandbox` or
    /// `production`, which Apple spells `Sandbox`/`Production`) and optional App Apple ID.
    public init(_ settings: AppStoreSettings) {
        self.init(bundleID: settings.bundleID, environment: settings.environment.rawValue, appAppleID: settings.appAppleID)
    }
}
