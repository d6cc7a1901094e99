/// An anonymous id an SDK minted on the device before it reached a server (DESIGN.md, "Install
/// ids"): today exactly RevenueCat's `$RCAnonymousID:` followed by 32 lowercase hex digits, 128
/// random bits. Only a fixed pattern with that much randomness is taken, since an install id
/// names its profile to anyone who presents it, as a profile id does. Held as its bits; its text
/// is written back byte for byte (uppercase digits are another text, so not an install id).
public struct InstallID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let high: UInt64
    public let low: UInt64

    /// What every install id begins with, and what no customer user id may begin with.
    public static let prefix = "$RCAnonymousID:"
    private static let prefixBytes = Array(prefix.utf8)
    private static let hexDigitCount = 32

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Parses `$RCAnonymousID:` + 32 lowercase hex digits; `nil` for anything else. Reads the
    /// string's UTF-8 in place (``init(utf8:)``): no array, no allocation.
    public init?(parsing text: String) {
        var text = text
        guard let id = text.withUTF8({ InstallID(utf8: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = id
    }

    /// ``init(parsing:)`` straight from UTF-8 bytes.
    public init?(utf8 text: UnsafeRawBufferPointer) {
        let prefixCount = Self.prefixBytes.count
        guard text.count == prefixCount + Self.hexDigitCount else { return nil }
        for index in 0..<prefixCount where text[index] != Self.prefixBytes[index] { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for index in 0..<Self.hexDigitCount {
            guard let digit = Self.lowercaseHexValue(text[prefixCount + index]) else { return nil }
            if index < 16 { high = high << 4 | digit } else { low = low << 4 | digit }
        }
        self.init(high: high, low: low)
    }

    private static func lowercaseHexValue(_ byte: UInt8) -> UInt64? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt64(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt64(byte - UInt8(ascii: "a")) + 10
        default: nil
        }
    }

    public var description: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = Self.prefixBytes
        out.reserveCapacity(Self.prefixBytes.count + Self.hexDigitCount)
        for index in 0..<Self.hexDigitCount {
            let word = index < 16 ? high : low
            out.append(digits[Int((word >> UInt64(60 - 4 * (index % 16))) & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `text` begins as an install id does: such a text is never a customer user id, so
    /// that an id on a path or in a field can always be told apart.
    public static func hasPrefix(_ text: String) -> Bool {
        text.utf8.starts(with: prefixBytes)
    }

    public static func < (lhs: InstallID, rhs: InstallID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}
