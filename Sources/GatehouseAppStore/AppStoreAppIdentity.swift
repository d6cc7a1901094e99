/// The app a Gatehouse project serves on the App Store, as configured (`stores.app_store`):
/// signed data for any other app or environment is ``AppStoreVerificationError/Code/wrongApp``.
public struct AppStoreAppIdentity: Sendable, Hashable {
    public var bundleID: String
    /// `"sandbox"` or `"production"`, compared with Apple's `Sandbox`/`Production` ignoring case.
    public var environment: String
    /// The app's Apple ID; when set, production notifications must carry the same one.
    public var appAppleID: Int64?

    public init(bundleID: String, environment: String, appAppleID: Int64? = nil) {
        self.bundleID = bundleID
        self.environment = environment
        self.appAppleID = appAppleID
    }

    var isProduction: Bool { environment.lowercased() == "production" }
}
