/// A string-valued field of Apple's payloads whose set of values Apple may grow
/// (`environment`, `notificationType`, `type`…). An open set: a value Apple adds later decodes as
/// itself rather than failing, so new values never make genuine data unreadable. Match the
/// named values with a `default:`.
public protocol AppleStringValue: RawRepresentable<String>, Hashable, Sendable, CustomStringConvertible {
    init(rawValue: String)
}

extension AppleStringValue {
    /// The string exactly as Apple sends it.
    public var description: String { rawValue }
}
