/// The App Store environment that produced signed data (`environment` in Apple's payloads).
///
/// An open set: a value Apple adds later decodes as itself rather than failing, so new values
/// never make genuine data unreadable. Match the named values below, with a `default:`.
public struct AppStoreEnvironment: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The string exactly as Apple sends it.
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }
}

extension AppStoreEnvironment {
    public static let sandbox = AppStoreEnvironment(rawValue: "Sandbox")
    public static let production = AppStoreEnvironment(rawValue: "Production")
    public static let xcode = AppStoreEnvironment(rawValue: "Xcode")
    public static let localTesting = AppStoreEnvironment(rawValue: "LocalTesting")
}
