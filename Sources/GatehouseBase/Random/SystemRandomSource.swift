import COpenSSL

/// The cryptographically secure source for tokens, keys and ids in production.
///
/// It is libcrypto's `RAND_bytes`: a DRBG seeded from the kernel (`getrandom`), thread-safe,
/// reseeded after `fork`, and one call per fill instead of one system call per eight bytes.
/// (`getrandom` itself is not exported by Swift's Glibc module.)
public struct SystemRandomSource: RandomSource {
    public init() {}

    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        var remaining = buffer
        while !remaining.isEmpty {
            let chunk = min(remaining.count, Int(Int32.max))
            let status = RAND_bytes(remaining.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(chunk))
            // Handing out predictable bytes as secrets would be worse than stopping.
            precondition(status == 1, "RAND_bytes failed: the system CSPRNG is unavailable")
            remaining = UnsafeMutableRawBufferPointer(rebasing: remaining[chunk...])
        }
    }
}
