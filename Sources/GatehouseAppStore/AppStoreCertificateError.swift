/// A configured trust anchor that cannot be used: bytes that are neither a DER certificate nor
/// PEM text holding at least one. A configuration error, reported when the verifier is built.
public struct AppStoreCertificateError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String

    public init(reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
