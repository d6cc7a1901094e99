import COpenSSL

/// SHA-256 through libcrypto's EVP interface (the non-deprecated one in OpenSSL 3).
public enum SHA256 {
    /// The digest length in bytes.
    public static let byteCount = 32

    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        if let digest = bytes.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) {
            return digest
        }
        return Array(bytes).withUnsafeBytes { hash($0) }
    }

    /// The digest of the string's UTF-8 encoding.
    public static func hash(_ string: String) -> [UInt8] {
        var string = string
        return string.withUTF8 { hash(UnsafeRawBufferPointer($0)) }
    }

    /// The digest as 64 lowercase hex digits.
    public static func hex(_ bytes: some Collection<UInt8>) -> String {
        Hex.encode(hash(bytes))
    }

    /// The digest of the string's UTF-8 encoding as 64 lowercase hex digits.
    public static func hex(_ string: String) -> String {
        Hex.encode(hash(string))
    }

    private static func hash(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        let status = digest.withUnsafeMutableBufferPointer { output in
            EVP_Digest(input.baseAddress, input.count, output.baseAddress, &length, EVP_sha256(), nil)
        }
        // Only an allocation failure inside libcrypto gets here; there is no sane way on.
        precondition(status == 1 && length == byteCount, "EVP_Digest(SHA-256) failed")
        return digest
    }
}
