public import GatehouseBase

/// 16 random bytes fixed when a database's log is created and stored in every segment header
/// (and in the manifest), so a segment or manifest from another database is refused.
public struct DatabaseID: Sendable, Hashable, CustomStringConvertible {
    public static let byteCount = 16

    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    /// 32 hex digits, as printed by ``description``.
    public init?(hex: String) {
        guard let bytes = Hex.decode(hex) else { return nil }
        self.init(bytes: bytes)
    }

    public static func random(using random: some RandomSource) -> DatabaseID {
        DatabaseID(unchecked: random.randomBytes(count: byteCount))
    }

    init(unchecked bytes: [UInt8]) {
        precondition(bytes.count == Self.byteCount, "a database id is 16 bytes")
        self.bytes = bytes
    }

    public var description: String { Hex.encode(bytes) }
}
