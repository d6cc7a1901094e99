import COpenSSL

/// A fresh P-256 key pair for the test chain, freed with the last reference.
///
/// `@unchecked Sendable`: the key is only read after generation; each signature uses its own
/// `EVP_MD_CTX`.
final class TestSigningKey: @unchecked Sendable {
    let pointer: OpaquePointer

    init?() {
        guard let key = copenssl_ec_p256_generate() else {
            ERR_clear_error()
            return nil
        }
        self.pointer = key
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    /// 16 random hex digits, to tell generated chains apart.
    static func randomTag() -> String {
        var bytes = [UInt8](repeating: 0, count: 8)
        let status = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
        if status != 1 { ERR_clear_error() }
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }

    /// An ES256 signature of `message` as a JWS carries it: 64 bytes `r || s`.
    func signES256(_ message: [UInt8]) -> [UInt8]? {
        defer { ERR_clear_error() }
        guard let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pointer) == 1 else { return nil }
        var length = 0
        let sized = message.withUnsafeBufferPointer { input in
            EVP_DigestSign(context, nil, &length, input.baseAddress, input.count)
        }
        guard sized == 1, length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: length)
        let signed = der.withUnsafeMutableBufferPointer { output in
            message.withUnsafeBufferPointer { input in
                EVP_DigestSign(context, output.baseAddress, &length, input.baseAddress, input.count)
            }
        }
        guard signed == 1 else { return nil }
        return ES256.rawSignature(der: Array(der.prefix(length)))
    }
}
