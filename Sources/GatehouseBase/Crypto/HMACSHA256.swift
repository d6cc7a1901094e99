import COpenSSL

/// HMAC-SHA256 (RFC 2104) through libcrypto's one-shot `HMAC`.
public enum HMACSHA256 {
    /// The code's length in bytes.
    public static let byteCount = 32

    /// The authentication code of `message` under `key` (a key of any length, empty included).
    public static func code(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        let written = key.withUnsafeBytes { key in
            message.withUnsafeBytes { message in
                output.withUnsafeMutableBufferPointer { output in
                    // A null key pointer means "no key" to libcrypto, so an empty key points at a zero byte.
                    withUnsafeBytes(of: UInt8(0)) { zero in
                        HMAC(
                            EVP_sha256(), key.count == 0 ? zero.baseAddress : key.baseAddress, Int32(key.count),
                            message.baseAddress.map { $0.assumingMemoryBound(to: UInt8.self) }, message.count,
                            output.baseAddress, &length)
                    }
                }
            }
        }
        // Only an allocation failure inside libcrypto gets here; there is no sane way on.
        precondition(written != nil && length == byteCount, "HMAC(SHA-256) failed")
        return output
    }
}
