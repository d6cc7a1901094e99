/// An error a client sees: a stable ``ErrorCode``, a message for people, and, for a few codes,
/// extra machine-readable fields that travel inside the wire `error` object.
public struct GatehouseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    public var details: [Detail]

    /// Extra fields of the wire `error` object (PROTOCOL.md: "An error may carry extra fields").
    public enum Detail: Sendable, Equatable {
        /// `insufficient_funds`: the balance that was too small.
        case balance(Int64)
        /// Redemption outcomes carry the legacy numeric code of the hosted services.
        case legacyCode(Int)
        /// `line_too_long` and friends: the limit that was exceeded.
        case limit(Int)
        /// `expired` redemption: the buyer's address the fresh link went to, obfuscated.
        case obfuscatedEmail(String)
    }

    public init(_ code: ErrorCode, _ message: String, details: [Detail] = []) {
        self.code = code
        self.message = message
        self.details = details
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

extension GatehouseError {
    /// `bad_request` naming the offending field, the shape every parameter check uses.
    public static func badField(_ field: String, _ problem: String) -> GatehouseError {
        GatehouseError(.badRequest, "\(field): \(problem)")
    }

    public static func notFound(_ what: String) -> GatehouseError {
        GatehouseError(.notFound, "\(what) does not exist")
    }
}
