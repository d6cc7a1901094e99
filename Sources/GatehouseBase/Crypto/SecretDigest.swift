/// The SHA-256 digest of a secret (an admin key, a project key), kept instead of the secret.
///
/// Checking a presented secret hashes it and compares digests in constant time. The
/// description shows only a short fingerprint: even a full digest of a low-entropy secret
/// invites offline guessing, and descriptions end up in logs.
public struct SecretDigest: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The 32 digest bytes.
    public let bytes: [UInt8]

    public init(secret: String) {
        bytes = SHA256.hash(secret)
    }

    /// A digest read back from storage: exactly 32 bytes, else nil.
    public init?(bytes: [UInt8]) {
        guard bytes.count == SHA256.byteCount else { return nil }
        self.bytes = bytes
    }

    /// A digest stored as 64 hex digits (configuration files keep digests, not secrets);
    /// nil unless `hex` is exactly that.
    public init?(hex: String) {
        guard let bytes = Hex.decode(hex), bytes.count == SHA256.byteCount else { return nil }
        self.bytes = bytes
    }

    /// Whether `secret` hashes to this digest, compared in constant time.
    public func matches(_ secret: String) -> Bool {
        constantTimeEquals(SHA256.hash(secret), bytes)
    }

    /// The full digest as 64 lowercase hex digits, for writing into configuration.
    public var hex: String {
        Hex.encode(bytes)
    }

    /// `sha256:1a2b3c4d…`, enough to tell digests apart in a log without publishing them.
    public var description: String {
        "sha256:" + Hex.encode(bytes.prefix(4)) + "…"
    }

    public var debugDescription: String {
        "SecretDigest(\(description))"
    }

    // Equality of digests is a secret check too, so it goes through the constant-time path.
    public static func == (lhs: SecretDigest, rhs: SecretDigest) -> Bool {
        constantTimeEquals(lhs.bytes, rhs.bytes)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes)
    }
}
