import GatehouseAppStore
import GatehouseTesting
import GatehouseWire
import Testing

/// The In-App Purchase key: read once from its `.p8` text, refused at once when it is not a
/// P-256 PKCS#8 key, and signing the tokens Apple's API asks for.
@Suite struct AppStoreServerAPIKeyTests {
    let testKey = TestAPIKey()

    func key(pem: String? = nil, issuerID: String = "issuer", keyID: String = "KEY123", bundleID: String = "com.example.app")
        throws -> AppStoreServerAPIKey
    {
        try AppStoreServerAPIKey(issuerID: issuerID, keyID: keyID, privateKeyPEM: pem ?? testKey.pem, bundleID: bundleID)
    }

    @Test func tokenHasApplesHeaderAndClaims() throws {
        let token = try key().token(issuedAt: 1_767_225_600, lifetimeSeconds: 1200)
        let decoded = try #require(TestAPIKey.decode(token))
        #expect(decoded.header == ["alg": "ES256", "kid": "KEY123", "typ": "JWT"])
        #expect(
            decoded.claims == [
                "iss": "issuer", "iat": 1_767_225_600, "exp": 1_767_226_800, "aud": "appstoreconnect-v1",
                "bid": "com.example.app",
            ])
    }

    @Test func tokenSignatureIsRawRAndSAndVerifiesWithThePublicKey() throws {
        let signer = try key()
        for second in 0..<8 {
            let token = try signer.token(issuedAt: 1_767_225_600 + Int64(second), lifetimeSeconds: 600)
            let decoded = try #require(TestAPIKey.decode(token))
            // Not DER: an ECDSA-Sig-Value starts with 0x30 and is 70 to 72 bytes.
            #expect(decoded.signature.count == 64)
            #expect(testKey.verifies(signature: decoded.signature, of: decoded.signingInput))
        }
    }

    @Test func aSignatureOverOtherClaimsDoesNotVerify() throws {
        let token = try key().token(issuedAt: 1_767_225_600, lifetimeSeconds: 600)
        let decoded = try #require(TestAPIKey.decode(token))
        var altered = decoded.signingInput
        altered[altered.count - 2] ^= 1
        #expect(!testKey.verifies(signature: decoded.signature, of: altered))
        #expect(!TestAPIKey().verifies(signature: decoded.signature, of: decoded.signingInput))
    }

    static let damagedBlock = "-----BEGIN PRIVATE KEY-----\n!!notbase64!!\n-----END PRIVATE KEY-----\n"
    static let unterminated = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n"
    static let notAKey = TestAPIKey.pem(label: "PRIVATE KEY", der: Array("certainly not DER".utf8))

    @Test(arguments: [
        ("", "0 PRIVATE KEY blocks"),
        ("a .p8 file's name, not its text", "0 PRIVATE KEY blocks"),
        (damagedBlock, "damaged"),
        (unterminated, "damaged"),
        (notAKey, "not a PKCS#8 P-256 private key"),
    ])
    func aPrivateKeyThatIsNotOneIsRefused(pem: String, reason: String) {
        expectRefused(reason: reason) { try key(pem: pem) }
    }

    @Test func aKeyOnAnotherCurveIsRefused() {
        expectRefused(reason: "not a PKCS#8 P-256 private key") { try key(pem: TestAPIKey.p384PEM()) }
    }

    @Test func aKeyInSEC1FormIsRefused() {
        expectRefused(reason: "0 PRIVATE KEY blocks") { try key(pem: testKey.sec1PEM) }
    }

    @Test func twoKeysInOneTextAreRefused() {
        expectRefused(reason: "2 PRIVATE KEY blocks") { try key(pem: testKey.pem + TestAPIKey().pem) }
    }

    @Test func aKeyAmidOtherTextIsRead() throws {
        _ = try key(pem: "Downloaded from App Store Connect\n" + testKey.pem + "\n")
    }

    @Test(arguments: [("", "KEY123", "com.example.app", "issuer_id"), ("issuer", "", "b", "key_id"), ("issuer", "KEY123", "", "bundle_id")])
    func anEmptyIdentifierIsRefused(issuerID: String, keyID: String, bundleID: String, name: String) {
        expectRefused(reason: "\(name) is empty") { try key(issuerID: issuerID, keyID: keyID, bundleID: bundleID) }
    }

    func expectRefused(reason: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> AppStoreServerAPIKey) {
        do {
            _ = try body()
            Issue.record("the key was accepted", sourceLocation: sourceLocation)
        } catch let error as AppStoreServerAPIKeyError {
            #expect(error.reason.contains(reason), "reason: \(error.reason)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        }
    }
}
