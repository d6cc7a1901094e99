import GatehouseWire

/// An In-App Purchase key from App Store Connect (`stores.app_store.api`) and the tokens it
/// signs for the App Store Server API: JWTs signed ES256 that name the key (`kid`), the issuer,
/// the app (`bid`) and the audience `appstoreconnect-v1`, as Apple's server libraries make them.
///
/// The private key is read once, here, so a damaged one is refused with the configuration
/// rather than at the first request. A key holds only read-only state and signs from many
/// threads at once.
public struct AppStoreServerAPIKey: Sendable {
    /// The audience every App Store Server API token names.
    public static let audience = "appstoreconnect-v1"
    /// Apple refuses a token whose `exp` is more than an hour after its `iat`.
    public static let tokenLifetimeSecondsMax: Int64 = 3600

    /// The issuer id of the App Store Connect team.
    public let issuerID: String
    /// The key's id, written as the token header's `kid`.
    public let keyID: String
    /// The app the tokens are for.
    public let bundleID: String
    private let privateKey: P256PrivateKey

    /// - Parameter privateKeyPEM: The `.p8` file's text: one `PRIVATE KEY` block (PKCS#8) of a
    ///   P-256 key.
    /// - Throws: When an identifier is empty or the key is anything else.
    public init(issuerID: String, keyID: String, privateKeyPEM: String, bundleID: String)
        throws(AppStoreServerAPIKeyError)
    {
        for (name, value) in [("issuer_id", issuerID), ("key_id", keyID), ("bundle_id", bundleID)] where value.isEmpty {
            throw AppStoreServerAPIKeyError(reason: "\(name) is empty")
        }
        self.issuerID = issuerID
        self.keyID = keyID
        self.bundleID = bundleID
        self.privateKey = try Self.readPrivateKey(pem: privateKeyPEM)
    }

    private static func readPrivateKey(pem: String) throws(AppStoreServerAPIKeyError) -> P256PrivateKey {
        guard let blocks = PEM.blocks(labeled: "PRIVATE KEY", in: Array(pem.utf8)) else {
            throw AppStoreServerAPIKeyError(reason: "private_key: the PRIVATE KEY block is damaged")
        }
        guard blocks.count == 1 else {
            throw AppStoreServerAPIKeyError(
                reason: "private_key: \(blocks.count) PRIVATE KEY blocks, not one (the .p8 file's text, PKCS#8 PEM)")
        }
        guard let key = P256PrivateKey(pkcs8DER: blocks[0]) else {
            throw AppStoreServerAPIKeyError(reason: "private_key: not a PKCS#8 P-256 private key")
        }
        return key
    }

    /// A compact JWT issued at `issuedAt` (UNIX seconds) and expiring `lifetimeSeconds` later
    /// (1 to ``tokenLifetimeSecondsMax``).
    ///
    /// - Throws: Only when libcrypto fails to sign, which a key it has read does not do.
    public func token(issuedAt: Int64, lifetimeSeconds: Int64) throws(AppStoreServerAPIKeyError) -> String {
        precondition((1...Self.tokenLifetimeSecondsMax).contains(lifetimeSeconds), "a token lives 1 s to 60 min")
        let header: JSONObject = ["alg": "ES256", "kid": .string(keyID), "typ": "JWT"]
        let claims: JSONObject = [
            "iss": .string(issuerID), "iat": .int(issuedAt), "exp": .int(issuedAt + lifetimeSeconds),
            "aud": .string(Self.audience), "bid": .string(bundleID),
        ]
        guard let token = privateKey.compactJWS(header: header, payload: JSONWriter.serialize(.object(claims))) else {
            throw AppStoreServerAPIKeyError(reason: "libcrypto failed to sign the token")
        }
        return token
    }
}
