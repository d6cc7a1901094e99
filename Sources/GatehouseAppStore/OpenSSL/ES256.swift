import COpenSSL

/// ECDSA with P-256 and SHA-256 (JWS `ES256`, RFC 7518 §3.4), through libcrypto's EVP interface.
///
/// A JWS carries the signature as 64 raw bytes `r || s`; libcrypto signs and verifies the DER
/// `ECDSA-Sig-Value`, so the pair is converted with `ECDSA_SIG` on the way in and out.
enum ES256 {
    static let signatureByteCount = 64

    /// Checks `signature` over `message` with the public key of `certificate`; `nil` when it
    /// verifies, otherwise why not.
    static func verify(signature: [UInt8], message: [UInt8], certificate: X509Certificate) -> String? {
        defer { ERR_clear_error() }
        guard signature.count == signatureByteCount else { return "signature is not 64 bytes" }
        // Owned by the certificate: not freed here.
        guard let key = X509_get0_pubkey(certificate.pointer) else { return "leaf public key unreadable" }
        guard isP256(key) else { return "leaf key is not an EC P-256 key" }
        guard let der = derSignature(raw: signature) else { return "signature is not a valid (r, s) pair" }
        guard let context = EVP_MD_CTX_new() else { return "out of memory" }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else {
            return "cannot set up signature verification"
        }
        let status = der.withUnsafeBufferPointer { signatureBuffer in
            message.withUnsafeBufferPointer { messageBuffer in
                EVP_DigestVerify(
                    context, signatureBuffer.baseAddress, signatureBuffer.count, messageBuffer.baseAddress,
                    messageBuffer.count)
            }
        }
        return status == 1 ? nil : "signature does not verify"
    }

    /// The signature of `message` with the private key `key`, as a JWS carries it: 64 bytes
    /// `r || s`; `nil` when libcrypto fails.
    static func sign(_ message: [UInt8], with key: OpaquePointer) -> [UInt8]? {
        defer { ERR_clear_error() }
        guard let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else { return nil }
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
        return rawSignature(der: Array(der.prefix(length)))
    }

    static func isP256(_ key: OpaquePointer) -> Bool {
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC else { return false }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else { return false }
        let group = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return group == "prime256v1" || group == "P-256"
    }

    /// The DER `ECDSA-Sig-Value` for the 64 raw bytes `r || s`, or `nil`.
    static func derSignature(raw: [UInt8]) -> [UInt8]? {
        guard raw.count == signatureByteCount, let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let half = signatureByteCount / 2
        let (r, s) = raw.withUnsafeBufferPointer { buffer in
            (
                BN_bin2bn(buffer.baseAddress, Int32(half), nil),
                BN_bin2bn(buffer.baseAddress.map { $0 + half }, Int32(half), nil)
            )
        }
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
            // Ownership passes to the signature only when set0 succeeds.
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? der : nil
    }

    /// The 64 raw bytes `r || s` of a DER `ECDSA-Sig-Value` (what libcrypto signs), or `nil`.
    static func rawSignature(der: [UInt8]) -> [UInt8]? {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let parsed else { return nil }
        defer { ECDSA_SIG_free(parsed) }
        guard let r = ECDSA_SIG_get0_r(parsed), let s = ECDSA_SIG_get0_s(parsed) else { return nil }
        let half = signatureByteCount / 2
        var raw = [UInt8](repeating: 0, count: signatureByteCount)
        let written = raw.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            return BN_bn2binpad(r, base, Int32(half)) == half && BN_bn2binpad(s, base + half, Int32(half)) == half
        }
        return written ? raw : nil
    }
}
