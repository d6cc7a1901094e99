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
        guard let bytes = HexDigits.decode(hex) else { return nil }
        self.init(bytes: bytes)
    }

    public static func random(using random: some RandomSource) -> DatabaseID {
        DatabaseID(unchecked: random.randomBytes(count: byteCount))
    }

    init(unchecked bytes: [UInt8]) {
        precondition(bytes.count == Self.byteCount, "a database id is 16 bytes")
        self.bytes = bytes
    }

    public var description: String { HexDigits.encode(bytes) }
}

/// Lowercase hex for ids and names (GatehouseBase keeps its own helper internal).
enum HexDigits {
    private static let digits = Array("0123456789abcdef".utf8)

    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = 0
        while index < characters.count {
            guard let high = value(characters[index]), let low = value(characters[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func value(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `value` as exactly 16 lowercase hex digits (segment names).
    static func fixed16(_ value: UInt64) -> String {
        var text = [UInt8](repeating: UInt8(ascii: "0"), count: 16)
        var remaining = value
        for index in stride(from: 15, through: 0, by: -1) {
            text[index] = digits[Int(remaining & 0xF)]
            remaining >>= 4
        }
        return String(decoding: text, as: UTF8.self)
    }
}
