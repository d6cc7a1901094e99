import COpenSSL

/// Compares two byte strings in time that does not depend on where they first differ, so an
/// attacker timing responses cannot guess a secret's digest byte by byte.
///
/// Lengths are treated as public: a length mismatch returns `false` at once. That is safe for
/// what we compare (fixed-size SHA-256 digests, whose length everyone knows); do not use it to
/// compare raw secrets of secret length. The comparison itself is libcrypto's
/// `CRYPTO_memcmp`, written so that compilers cannot turn it back into an early exit.
public func constantTimeEquals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
    guard a.count == b.count else { return false }
    guard !a.isEmpty else { return true }
    return withContiguousBytes(a) { left in
        withContiguousBytes(b) { right in
            CRYPTO_memcmp(left.baseAddress, right.baseAddress, left.count) == 0
        }
    }
}

private func withContiguousBytes<R>(
    _ bytes: some Collection<UInt8>,
    _ body: (UnsafeRawBufferPointer) -> R
) -> R {
    if let result = bytes.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) {
        return result
    }
    return Array(bytes).withUnsafeBytes(body)
}
