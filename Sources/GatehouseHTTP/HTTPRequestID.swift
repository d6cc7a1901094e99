public import GatehouseBase

/// The id every answer carries in `X-Request-Id` (HTTP.md, "Transport").
public enum HTTPRequestID {
    public static let lengthMax = 128

    /// The request's own id, if it is 1...128 printable ASCII characters (0x20–0x7E) without
    /// a space at either end; otherwise nil, and the server makes one.
    public static func accept(_ header: String?) -> String? {
        guard let header, let first = header.utf8.first, let last = header.utf8.last else { return nil }
        guard header.utf8.count <= lengthMax, first != 0x20, last != 0x20 else { return nil }
        return header.utf8.allSatisfy { (0x20...0x7E).contains($0) } ? header : nil
    }
}

/// Fresh request ids: a random 64-bit prefix per generator and a counter, both hex. Unique
/// across generators (the prefix) and cheap (no randomness per id); not secret.
public struct HTTPRequestIDGenerator: Sendable {
    private let prefix: String
    private var counter: UInt64 = 0

    public init(random: some RandomSource = SystemRandomSource()) {
        prefix = Hex.fixed16(random.randomUInt64())
    }

    public mutating func next() -> String {
        counter &+= 1
        return prefix + "-" + String(counter, radix: 16)
    }
}
