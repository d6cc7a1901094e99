import GatehouseBase
import GatehouseWire

/// A JWS in compact serialization, split and decoded but not yet trusted: the checks of the
/// form that come before any cryptography.
///
/// Apple's rules: exactly three dot-separated base64url parts; a header with `alg` `ES256` and
/// an `x5c` of exactly three standard-base64 DER certificates; a JSON object as payload.
struct CompactJWS {
    static let payloadDepthMax = 64

    let header: JSONObject
    let payload: JSONObject
    let payloadBytes: [UInt8]
    /// The DER certificates of `x5c`, leaf first.
    let certificates: [[UInt8]]
    /// The 64 bytes `r || s`.
    let signature: [UInt8]
    /// The ASCII bytes `header.payload`, which the signature covers.
    let signingInput: [UInt8]

    init(_ text: String, bytesMax: Int) throws(AppStoreVerificationError) {
        // Measured before copying: the limit also bounds the work done on hostile input.
        guard text.utf8.count <= bytesMax else { throw .invalidSignature("JWS longer than \(bytesMax) bytes") }
        let bytes = Array(text.utf8)
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .invalidSignature("JWS has \(parts.count) parts, not 3") }
        self.header = try Self.object(parts[0], part: "header")
        self.certificates = try Self.checkHeader(header)
        self.payloadBytes = try Self.decode(parts[1], part: "payload")
        self.payload = try Self.object(payloadBytes, part: "payload")
        guard let signature = Base64.decode(parts[2], alphabet: .url) else {
            throw .invalidSignature("signature is not base64url")
        }
        guard signature.count == ES256.signatureByteCount else {
            throw .invalidSignature("signature is \(signature.count) bytes, not 64")
        }
        self.signature = signature
        self.signingInput = Array(bytes[..<parts[1].endIndex])
    }

    private static func checkHeader(_ header: JSONObject) throws(AppStoreVerificationError) -> [[UInt8]] {
        guard header["alg"]?.stringValue == "ES256" else { throw .invalidSignature("header alg is not ES256") }
        // A critical extension would change how the JWS must be read; none is understood here.
        guard header["crit"] == nil else { throw .invalidSignature("header has crit") }
        guard let x5c = header["x5c"]?.arrayValue else { throw .invalidSignature("header has no x5c array") }
        guard x5c.count == 3 else { throw .invalidSignature("x5c has \(x5c.count) certificates, not 3") }
        var certificates: [[UInt8]] = []
        for (index, entry) in x5c.enumerated() {
            guard let text = entry.stringValue, let der = Base64.decode(text, alphabet: .standard), !der.isEmpty else {
                throw .invalidSignature("x5c[\(index)] is not base64")
            }
            certificates.append(der)
        }
        return certificates
    }

    private static func decode(_ part: ArraySlice<UInt8>, part name: String) throws(AppStoreVerificationError)
        -> [UInt8]
    {
        guard let bytes = Base64.decode(part, alphabet: .url) else {
            throw .invalidSignature("\(name) is not base64url")
        }
        return bytes
    }

    private static func object(_ part: ArraySlice<UInt8>, part name: String) throws(AppStoreVerificationError)
        -> JSONObject
    {
        try object(decode(part, part: name), part: name)
    }

    private static func object(_ bytes: [UInt8], part name: String) throws(AppStoreVerificationError) -> JSONObject {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes, maxDepth: payloadDepthMax)
        } catch {
            throw .invalidSignature("\(name) is not JSON: \(error)")
        }
        guard let object = value.objectValue else { throw .invalidSignature("\(name) is not a JSON object") }
        return object
    }

    /// When the chain must be valid: the payload's `signedDate` (or an AppTransaction's
    /// `receiptCreationDate`) in milliseconds, or `nil` when it has neither (then: now).
    func effectiveDate() throws(AppStoreVerificationError) -> Int64? {
        for key in ["signedDate", "receiptCreationDate"] {
            guard let value = payload[key], !value.isNull else { continue }
            guard let milliseconds = PayloadReader.timestamp(value) else {
                throw .invalidSignature("payload \(key) is not a timestamp")
            }
            return milliseconds
        }
        return nil
    }
}
