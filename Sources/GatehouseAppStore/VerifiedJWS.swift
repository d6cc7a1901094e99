public import GatehouseWire

/// A JWS whose certificate chain and signature have verified: its decoded payload, ready for a
/// typed decoder such as ``AppStoreTransaction/init(verifiedPayload:)``.
public struct VerifiedJWS: Sendable, Equatable {
    /// The protected header (`alg`, `x5c`, anything else Apple put there).
    public var header: JSONObject
    /// The payload as a JSON object.
    public var payload: JSONObject
    /// The payload's exact bytes, as signed.
    public var payloadBytes: [UInt8]
    /// The instant, in UNIX milliseconds, at which the chain was found valid: the payload's
    /// `signedDate` (or `receiptCreationDate`), or the current time when it had neither.
    public var effectiveDate: Int64

    public init(header: JSONObject, payload: JSONObject, payloadBytes: [UInt8], effectiveDate: Int64) {
        self.header = header
        self.payload = payload
        self.payloadBytes = payloadBytes
        self.effectiveDate = effectiveDate
    }
}
