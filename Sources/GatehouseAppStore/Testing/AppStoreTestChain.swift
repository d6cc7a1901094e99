public import GatehouseWire
import COpenSSL
import GatehouseBase

/// A freshly generated three-level certificate chain shaped like Apple's, and a signer that
/// turns any JSON payload into a JWS the way the App Store does. For tests only: trust
/// ``rootDER`` in an ``AppStoreVerifier`` and sign every kind of notification, transaction or
/// renewal info a test needs.
///
/// ```swift
/// let chain = try AppStoreTestChain()
/// let verifier = try AppStoreVerifier(rootCertificates: [chain.rootDER])
/// let jws = chain.sign(payload: ["notificationType": "TEST", "notificationUUID": "…"])
/// ```
///
/// The root is self-signed; the intermediate (CA:TRUE) carries Apple's intermediate marker
/// extension; the leaf carries the leaf marker. All keys are P-256. ``Options`` can leave out
/// either marker or make the intermediate a non-CA, for negative tests.
public final class AppStoreTestChain: Sendable {
    /// How to generate the chain.
    public struct Options: Sendable {
        /// Start of every certificate's validity, UNIX milliseconds (default 2000-01-01).
        public var validFrom: Int64
        /// End of every certificate's validity, UNIX milliseconds (default 2100-01-01).
        public var validUntil: Int64
        /// Whether the leaf carries 1.2.840.113635.100.6.11.1.
        public var leafMarker: Bool
        /// Whether the intermediate carries 1.2.840.113635.100.6.2.1.
        public var intermediateMarker: Bool
        /// Whether the intermediate's basicConstraints say CA:TRUE.
        public var intermediateIsCA: Bool

        public init(
            validFrom: Int64 = 946_684_800_000, validUntil: Int64 = 4_102_444_800_000, leafMarker: Bool = true,
            intermediateMarker: Bool = true, intermediateIsCA: Bool = true
        ) {
            self.validFrom = validFrom
            self.validUntil = validUntil
            self.leafMarker = leafMarker
            self.intermediateMarker = intermediateMarker
            self.intermediateIsCA = intermediateIsCA
        }
    }

    /// The self-signed root, to trust in a verifier.
    public let rootDER: [UInt8]
    public let intermediateDER: [UInt8]
    public let leafDER: [UInt8]
    private let leafKey: P256PrivateKey

    /// The `x5c` the App Store sends: leaf, intermediate, root.
    public var certificates: [[UInt8]] { [leafDER, intermediateDER, rootDER] }

    /// Generates new keys and certificates.
    public init(options: Options = Options()) throws(AppStoreCertificateError) {
        guard let rootKey = P256PrivateKey(), let intermediateKey = P256PrivateKey(), let leafKey = P256PrivateKey()
        else { throw AppStoreCertificateError(reason: "cannot generate P-256 keys") }
        let notBefore = Int(options.validFrom / 1000)
        let notAfter = Int(options.validUntil / 1000)
        // Names unique to this chain: certificate paths are found by name, and two chains whose
        // roots shared a name would make a verifier trusting both pick one root for both.
        let tag = randomTag()
        let root = TestCertificateBuilder(
            subject: "Gatehouse Test Root \(tag)", issuer: "Gatehouse Test Root \(tag)", serial: 1,
            notBefore: notBefore, notAfter: notAfter, isCertificateAuthority: true, markerOID: nil)
        let intermediate = TestCertificateBuilder(
            subject: "Gatehouse Test Intermediate \(tag)", issuer: root.subject, serial: 2, notBefore: notBefore,
            notAfter: notAfter, isCertificateAuthority: options.intermediateIsCA,
            markerOID: options.intermediateMarker ? AppStoreVerifier.intermediateMarkerOID : nil)
        let leaf = TestCertificateBuilder(
            subject: "Gatehouse Test Leaf \(tag)", issuer: intermediate.subject, serial: 3, notBefore: notBefore,
            notAfter: notAfter, isCertificateAuthority: false,
            markerOID: options.leafMarker ? AppStoreVerifier.leafMarkerOID : nil)
        guard let rootCertificate = root.build(publicKey: rootKey, signingKey: rootKey),
            let intermediateCertificate = intermediate.build(publicKey: intermediateKey, signingKey: rootKey),
            let leafCertificate = leaf.build(publicKey: leafKey, signingKey: intermediateKey)
        else { throw AppStoreCertificateError(reason: "cannot build the test certificates") }
        self.rootDER = rootCertificate.der
        self.intermediateDER = intermediateCertificate.der
        self.leafDER = leafCertificate.der
        self.leafKey = leafKey
    }

    /// Signs `payload` (the exact bytes of a JSON document) with the leaf key, with the header
    /// `{"alg":"ES256","x5c":[…]}` naming `certificates` (default: this chain's).
    public func sign(payload: [UInt8], certificates: [[UInt8]]? = nil) -> String {
        sign(header: Self.header(certificates: certificates ?? self.certificates), payload: payload)
    }

    /// Signs a JSON object payload, written compactly. (A payload that is not an object, itself
    /// a negative test, is signed as bytes.)
    public func sign(payload: JSONObject, certificates: [[UInt8]]? = nil) -> String {
        sign(payload: JSONWriter.serialize(.object(payload)), certificates: certificates)
    }

    /// Signs `payload` under an arbitrary protected header, for tests of malformed headers.
    public func sign(header: JSONObject, payload: [UInt8]) -> String {
        guard let jws = leafKey.compactJWS(header: header, payload: payload) else {
            preconditionFailure("libcrypto failed to sign with a freshly generated P-256 key")
        }
        return jws
    }

    /// The header Apple writes: `alg` ES256 and the certificates in standard base64.
    public static func header(certificates: [[UInt8]]) -> JSONObject {
        let x5c = certificates.map { JSONValue.string(Base64.encode($0, alphabet: .standard, padded: true)) }
        return ["alg": "ES256", "x5c": .array(x5c)]
    }
}

/// 16 random hex digits, to tell generated chains apart.
private func randomTag() -> String {
    var bytes = [UInt8](repeating: 0, count: 8)
    let status = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
    if status != 1 { ERR_clear_error() }
    let digits = Array("0123456789abcdef".utf8)
    return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
}
