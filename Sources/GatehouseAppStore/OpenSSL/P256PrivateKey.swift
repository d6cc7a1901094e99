import COpenSSL
import GatehouseBase
import GatehouseWire

/// A P-256 private key in libcrypto, freed with the last reference: an App Store Server API
/// key read from its `.p8` file, or a fresh one for the test chain.
///
/// `@unchecked Sendable`: the key is only read after it is made; each signature uses its own
/// `EVP_MD_CTX`.
final class P256PrivateKey: @unchecked Sendable {
    let pointer: OpaquePointer

    /// A freshly generated key pair, or `nil` when libcrypto cannot make one.
    init?() {
        guard let key = copenssl_ec_p256_generate() else {
            ERR_clear_error()
            return nil
        }
        self.pointer = key
    }

    /// The key in a DER PKCS#8 `PrivateKeyInfo` (the body of a `.p8` file's `PRIVATE KEY`
    /// block), or `nil` when the bytes are not one or hold a key of another kind or curve.
    init?(pkcs8DER der: [UInt8]) {
        defer { ERR_clear_error() }
        let info: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_PKCS8_PRIV_KEY_INFO(nil, &cursor, buffer.count)
        }
        guard let info else { return nil }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        guard let key = EVP_PKCS82PKEY(info) else { return nil }
        guard ES256.isP256(key) else {
            EVP_PKEY_free(key)
            return nil
        }
        self.pointer = key
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    /// An ES256 signature of `message` as a JWS carries it: 64 bytes `r || s`.
    func signES256(_ message: [UInt8]) -> [UInt8]? {
        ES256.sign(message, with: pointer)
    }

    /// `header.payload.signature` in compact serialization (RFC 7515 §7.1), signed ES256: the
    /// form of App Store JWS and of App Store Server API tokens. `nil` when libcrypto fails.
    func compactJWS(header: JSONObject, payload: [UInt8]) -> String? {
        let signingInput =
            Base64.encode(JSONWriter.serialize(.object(header)), alphabet: .url, padded: false) + "."
            + Base64.encode(payload, alphabet: .url, padded: false)
        guard let signature = signES256(Array(signingInput.utf8)) else { return nil }
        return signingInput + "." + Base64.encode(signature, alphabet: .url, padded: false)
    }
}
