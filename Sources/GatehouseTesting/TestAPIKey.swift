import COpenSSL
import Foundation
public import GatehouseWire

/// A P-256 key made for one test, in the form App Store Connect hands out (a `.p8`: PKCS#8 PEM),
/// and a check of tokens against its public half that shares no code with the signer: libcrypto
/// verifies a DER signature this file assembles by hand from the token's `r || s`.
public final class TestAPIKey: @unchecked Sendable {
    private let pointer: OpaquePointer
    public let pem: String

    public init() {
        guard let key = copenssl_ec_p256_generate() else { preconditionFailure("cannot generate a P-256 key") }
        pointer = key
        pem = Self.pkcs8PEM(key)
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    /// The same key in SEC1 form (`-----BEGIN EC PRIVATE KEY-----`), which is not what Apple
    /// hands out.
    public var sec1PEM: String { Self.sec1PEM(pointer) }

    /// `key` as `-----BEGIN PRIVATE KEY-----` PEM.
    private static func pkcs8PEM(_ key: OpaquePointer) -> String {
        guard let info = EVP_PKEY2PKCS8(key) else { preconditionFailure("EVP_PKEY2PKCS8 failed") }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_PKCS8_PRIV_KEY_INFO(info, &output)
        guard length > 0, let output else { preconditionFailure("i2d_PKCS8_PRIV_KEY_INFO failed") }
        defer { copenssl_free(output) }
        return pem(label: "PRIVATE KEY", der: Array(UnsafeBufferPointer(start: output, count: Int(length))))
    }

    private static func sec1PEM(_ key: OpaquePointer) -> String {
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_PrivateKey(key, &output)
        guard length > 0, let output else { preconditionFailure("i2d_PrivateKey failed") }
        defer { copenssl_free(output) }
        return pem(label: "EC PRIVATE KEY", der: Array(UnsafeBufferPointer(start: output, count: Int(length))))
    }

    /// `der` in a PEM block labelled `label`, 64 base64 characters a line.
    public static func pem(label: String, der: [UInt8]) -> String {
        let base64 = Data(der).base64EncodedString()
        var lines: [String] = []
        var rest = Substring(base64)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(64)))
            rest = rest.dropFirst(64)
        }
        return "-----BEGIN \(label)-----\n" + lines.joined(separator: "\n") + "\n-----END \(label)-----\n"
    }

    /// A P-384 key, PKCS#8: the right form with the wrong curve.
    public static func p384PEM() -> String {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil) else { preconditionFailure("EVP_PKEY_CTX_new_id failed") }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_secp384r1) == 1,
            EVP_PKEY_keygen(context, &key) == 1, let key
        else { preconditionFailure("cannot generate a P-384 key") }
        defer { EVP_PKEY_free(key) }
        return pkcs8PEM(key)
    }

    // MARK: Checking tokens

    /// A compact JWS taken apart: its JSON header and claims, its raw signature.
    public struct DecodedToken: Sendable {
        public let header: JSONObject
        public let claims: JSONObject
        public let signature: [UInt8]
        public let signingInput: [UInt8]
    }

    public static func decode(_ token: String) -> DecodedToken? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = base64URL(parts[0]), let claims = base64URL(parts[1]),
            let signature = base64URL(parts[2]),
            let headerObject = (try? JSONParser.parse(header))?.objectValue,
            let claimsObject = (try? JSONParser.parse(claims))?.objectValue
        else { return nil }
        return DecodedToken(
            header: headerObject, claims: claimsObject, signature: signature,
            signingInput: Array((parts[0] + "." + parts[1]).utf8))
    }

    /// Whether `signature` (64 bytes `r || s`) is this key's ES256 signature of `message`.
    public func verifies(signature: [UInt8], of message: [UInt8]) -> Bool {
        guard signature.count == 64 else { return false }
        let der = Self.derSignature(r: Array(signature[..<32]), s: Array(signature[32...]))
        guard let context = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(context)
            ERR_clear_error()
        }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, pointer) == 1 else { return false }
        return EVP_DigestVerify(context, der, der.count, message, message.count) == 1
    }

    /// `SEQUENCE { INTEGER r, INTEGER s }` in DER: each integer without its leading zero bytes,
    /// and with one zero byte put back when its top bit is set (it would read as negative).
    static func derSignature(r: [UInt8], s: [UInt8]) -> [UInt8] {
        func integer(_ bytes: [UInt8]) -> [UInt8] {
            var magnitude = Array(bytes.drop { $0 == 0 })
            if magnitude.isEmpty { magnitude = [0] }
            if magnitude[0] & 0x80 != 0 { magnitude.insert(0, at: 0) }
            return [0x02, UInt8(magnitude.count)] + magnitude
        }
        let body = integer(r) + integer(s)
        return [0x30, UInt8(body.count)] + body
    }

    static func base64URL(_ text: some StringProtocol) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map { [UInt8]($0) }
    }
}
