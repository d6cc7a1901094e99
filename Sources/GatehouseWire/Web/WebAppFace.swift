/// What a web buyer's page shows of the app (the project's `web` config, DESIGN.md "Web
/// purchases and redemption links"): its name, where to ask for help, and where to get it.
public struct WebAppFace: Sendable, Equatable {
    public var appName: String
    public var supportEmail: String?
    /// The App Store page; its button shows only when this is an http(s) URL.
    public var appStoreURL: String?
    /// The Google Play page; its button shows only when this is an http(s) URL.
    public var playStoreURL: String?

    public init(appName: String, supportEmail: String? = nil, appStoreURL: String? = nil, playStoreURL: String? = nil) {
        self.appName = appName
        self.supportEmail = supportEmail
        self.appStoreURL = appStoreURL
        self.playStoreURL = playStoreURL
    }
}
