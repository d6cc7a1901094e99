/// Why signed App Store data was refused: a stable code and a reason for people.
///
/// Every way a JWS can be wrong (not three parts, bad base64 or JSON, a wrong `alg`, a short or
/// missing `x5c`, a chain that does not reach a configured root, a missing Apple marker
/// extension, a date outside a certificate's validity, a bad signature, a payload field of the
/// wrong type) is the one code ``Code/invalidSignature``: callers act on the code, and the
/// reason is only for logs. ``Code/wrongApp`` means the data is genuine but was issued for
/// another app or environment; it is only ever reported after the signature has verified.
public struct AppStoreVerificationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The stable codes, spelled as the wire error codes they map onto.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The data is not genuine App Store data (or could not be read as such).
        case invalidSignature = "invalid_signature"
        /// Genuine data for another bundle id, App Apple ID or environment.
        case wrongApp = "wrong_app"
    }

    public var code: Code
    /// What went wrong, for logs; never parse it.
    public var reason: String

    public init(code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code.rawValue): \(reason)" }

    static func invalidSignature(_ reason: String) -> AppStoreVerificationError {
        AppStoreVerificationError(code: .invalidSignature, reason: reason)
    }

    static func wrongApp(_ reason: String) -> AppStoreVerificationError {
        AppStoreVerificationError(code: .wrongApp, reason: reason)
    }
}
