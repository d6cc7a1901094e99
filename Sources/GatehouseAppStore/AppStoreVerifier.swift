#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Verifies data the App Store signed (JWS with an `x5c` chain), the way Apple's App Store
/// Server Library does in offline mode.
///
/// For each JWS: exactly three base64url parts; header `alg` `ES256`; an `x5c` of exactly three
/// certificates; a path leaf (`x5c[0]`) ← intermediate (`x5c[1]`) ← one of the configured
/// roots, valid at the payload's `signedDate` (or now, when it has none), `x5c[2]` being
/// ignored; Apple's marker extensions on the leaf (1.2.840.113635.100.6.11.1) and the
/// intermediate (1.2.840.113635.100.6.2.1); and finally the signature over `header.payload`
/// with the leaf's P-256 key. Anything else is ``AppStoreVerificationError/Code/invalidSignature``.
///
/// A verifier holds only read-only state and is safe to use from many threads at once.
public struct AppStoreVerifier: Sendable {
    /// The longest JWS accepted, in bytes. Apple's notifications, which nest two more JWS, are
    /// about 20 KiB.
    public static let jwsBytesMax = 64 * 1024
    /// The longest notification body accepted, in bytes: a JWS and its JSON wrapping.
    public static let signedPayloadBodyBytesMax = jwsBytesMax + 4 * 1024

    /// The dotted OID of the extension Apple puts on every App Store signing (leaf) certificate.
    public static let leafMarkerOID = "1.2.840.113635.100.6.11.1"
    /// The dotted OID of the extension on Apple's WWDR intermediate certificates.
    public static let intermediateMarkerOID = "1.2.840.113635.100.6.2.1"

    /// Apple Root CA - G3 in DER, the root every App Store signature chains to.
    public static var appleRootCAG3: [UInt8] { AppleRootCertificates.appleRootCAG3 }

    private let trustStore: TrustStore
    private let currentTimeMilliseconds: @Sendable () -> Int64

    /// A verifier trusting exactly `rootCertificates` (DER). Use
    /// ``certificates(fromFileBytes:)`` to read them from a file.
    ///
    /// - Parameter currentTimeMilliseconds: The clock for a payload without a `signedDate`;
    ///   tests pass a fixed one.
    /// - Throws: When the list is empty or an entry is not exactly one DER certificate.
    public init(
        rootCertificates: [[UInt8]],
        currentTimeMilliseconds: @escaping @Sendable () -> Int64 = AppStoreVerifier.systemTimeMilliseconds
    ) throws(AppStoreCertificateError) {
        guard !rootCertificates.isEmpty else { throw AppStoreCertificateError(reason: "no root certificates") }
        var roots: [X509Certificate] = []
        for (index, der) in rootCertificates.enumerated() {
            guard let root = X509Certificate(der: der) else {
                throw AppStoreCertificateError(reason: "root certificate \(index) is not a DER certificate")
            }
            roots.append(root)
        }
        guard let store = TrustStore(roots: roots) else {
            throw AppStoreCertificateError(reason: "cannot build the certificate store")
        }
        self.trustStore = store
        self.currentTimeMilliseconds = currentTimeMilliseconds
    }

    /// A verifier trusting Apple Root CA - G3 only, which is what production needs.
    public init(currentTimeMilliseconds: @escaping @Sendable () -> Int64 = AppStoreVerifier.systemTimeMilliseconds) {
        do {
            try self.init(rootCertificates: [Self.appleRootCAG3], currentTimeMilliseconds: currentTimeMilliseconds)
        } catch {
            preconditionFailure("the built-in Apple Root CA - G3 does not load: \(error)")
        }
    }

    /// The real-time clock in UNIX milliseconds.
    public static func systemTimeMilliseconds() -> Int64 {
        var spec = timespec()
        guard clock_gettime(CLOCK_REALTIME, &spec) == 0 else { return 0 }
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }

    /// Verifies a compact JWS and returns its decoded payload.
    public func verify(jws: String) throws(AppStoreVerificationError) -> VerifiedJWS {
        let parsed = try CompactJWS(jws, bytesMax: Self.jwsBytesMax)
        let effectiveDate = try parsed.effectiveDate() ?? currentTimeMilliseconds()
        let leaf = try validatedLeaf(parsed.certificates, at: effectiveDate)
        if let failure = ES256.verify(signature: parsed.signature, message: parsed.signingInput, certificate: leaf) {
            throw .invalidSignature(failure)
        }
        return VerifiedJWS(
            header: parsed.header, payload: parsed.payload, payloadBytes: parsed.payloadBytes,
            effectiveDate: effectiveDate)
    }

    /// Checks an `x5c` chain (three DER certificates, leaf first; the third is ignored) against
    /// the configured roots at `effectiveDate` (UNIX milliseconds), exactly as ``verify(jws:)``
    /// does before it checks the signature.
    public func verifyCertificateChain(_ certificates: [[UInt8]], at effectiveDate: Int64)
        throws(AppStoreVerificationError)
    {
        _ = try validatedLeaf(certificates, at: effectiveDate)
    }

    private func validatedLeaf(_ certificates: [[UInt8]], at effectiveDate: Int64) throws(AppStoreVerificationError)
        -> X509Certificate
    {
        guard certificates.count == 3 else {
            throw .invalidSignature("x5c has \(certificates.count) certificates, not 3")
        }
        guard let leaf = X509Certificate(der: certificates[0]) else {
            throw .invalidSignature("x5c[0] is not a DER certificate")
        }
        guard let intermediate = X509Certificate(der: certificates[1]) else {
            throw .invalidSignature("x5c[1] is not a DER certificate")
        }
        let seconds = effectiveDate / 1000 - (effectiveDate % 1000 < 0 ? 1 : 0)  // floor, without overflow
        if let failure = trustStore.validate(leaf: leaf, intermediate: intermediate, time: Int(seconds)) {
            throw .invalidSignature(failure)
        }
        guard intermediate.isCertificateAuthority else {
            throw .invalidSignature("intermediate certificate is not a CA")
        }
        guard leaf.hasExtension(oid: Self.leafMarkerOID) else {
            throw .invalidSignature("leaf certificate lacks Apple's marker extension \(Self.leafMarkerOID)")
        }
        guard intermediate.hasExtension(oid: Self.intermediateMarkerOID) else {
            throw .invalidSignature(
                "intermediate certificate lacks Apple's marker extension \(Self.intermediateMarkerOID)")
        }
        return leaf
    }
}
