/// The App Store environment that produced signed data (`environment` in Apple's payloads).
public struct AppStoreEnvironment: AppleStringValue {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }
}

extension AppStoreEnvironment {
    public static let sandbox = AppStoreEnvironment(rawValue: "Sandbox")
    public static let production = AppStoreEnvironment(rawValue: "Production")
    public static let xcode = AppStoreEnvironment(rawValue: "Xcode")
    public static let localTesting = AppStoreEnvironment(rawValue: "LocalTesting")
}
