/// An In-App Purchase key that cannot be used: a missing identifier, or a `private_key` that is
/// not the PKCS#8 PEM of a P-256 key. A configuration error, reported when the key is read.
public struct AppStoreServerAPIKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String

    public init(reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
