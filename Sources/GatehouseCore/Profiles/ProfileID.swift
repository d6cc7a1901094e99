public import GatehouseBase

/// A profile's id: `gh_`, 22 base64url characters carrying 128 random bits, then 4 more naming
/// the project it was made in (a 24-bit tag derived from the project id). The tag lets a
/// project tell "not mine" (`forbidden`) from "no such profile" (`not_found`) without a
/// server-wide index; it is not a secret and proves nothing.
public struct ProfileID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let high: UInt64
    public let low: UInt64
    /// 24 bits.
    public let tag: UInt32

    public init(high: UInt64, low: UInt64, tag: UInt32) {
        self.high = high
        self.low = low
        self.tag = tag & 0xFF_FFFF
    }

    /// A fresh id for a profile of the project with `tag`.
    public static func make(tag: UInt32, random: some RandomSource) -> ProfileID {
        ProfileID(high: random.randomUInt64(), low: random.randomUInt64(), tag: tag)
    }

    /// The tag of profiles made in `project`.
    public static func tag(for project: ProjectID) -> UInt32 {
        let digest = SHA256.hash(project.rawValue)
        return UInt32(digest[0]) << 16 | UInt32(digest[1]) << 8 | UInt32(digest[2])
    }

    /// Parses `gh_` + 26 base64url characters; `nil` for anything else. Reads the string's
    /// UTF-8 in place (``init(utf8:)``): no array, no allocation.
    public init?(parsing text: String) {
        var text = text
        guard let id = text.withUTF8({ ProfileID(utf8: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = id
    }

    /// The 19 bytes behind the id: 16 random, 3 of tag.
    public var bytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(19)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: high >> UInt64(shift))) }
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: low >> UInt64(shift))) }
        bytes.append(UInt8(truncatingIfNeeded: tag >> 16))
        bytes.append(UInt8(truncatingIfNeeded: tag >> 8))
        bytes.append(UInt8(truncatingIfNeeded: tag))
        return bytes
    }

    public var description: String { "gh_" + Base64URL.encode(bytes) }

    /// From the 19 bytes of ``bytes`` (its binary form in records and snapshots).
    public init?(bytes: [UInt8]) {
        guard bytes.count == 19 else { return nil }
        let high = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let low = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        self.init(high: high, low: low, tag: UInt32(bytes[16]) << 16 | UInt32(bytes[17]) << 8 | UInt32(bytes[18]))
    }

    public static func < (lhs: ProfileID, rhs: ProfileID) -> Bool {
        (lhs.high, lhs.low, lhs.tag) < (rhs.high, rhs.low, rhs.tag)
    }
}

/// An app account token: a UUID the app passes to the store with a purchase, so the
/// purchase can be tied to the profile. Written lowercase; parsed in either case.
public struct AppAccountToken: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let high: UInt64
    public let low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A fresh version-4 UUID.
    public static func make(random: some RandomSource) -> AppAccountToken {
        let high = random.randomUInt64() & ~0xF000 | 0x4000
        let low = random.randomUInt64() & ~(0xC000_0000_0000_0000 as UInt64) | 0x8000_0000_0000_0000
        return AppAccountToken(high: high, low: low)
    }

    /// Parses `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (any case); `nil` otherwise.
    public init?(parsing text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 36, [8, 13, 18, 23].allSatisfy({ bytes[$0] == UInt8(ascii: "-") }) else { return nil }
        let digits = bytes.enumerated().filter { ![8, 13, 18, 23].contains($0.offset) }.map(\.element)
        guard let value = Hex.decode(String(decoding: digits, as: UTF8.self)), value.count == 16 else { return nil }
        self.init(high: value[0..<8].reduce(0) { $0 << 8 | UInt64($1) }, low: value[8..<16].reduce(0) { $0 << 8 | UInt64($1) })
    }

    public var description: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for index in 0..<32 {
            if [8, 12, 16, 20].contains(index) { out.append(UInt8(ascii: "-")) }
            let word = index < 16 ? high : low
            let shift = UInt64(60 - 4 * (index % 16))
            out.append(digits[Int((word >> shift) & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func < (lhs: AppAccountToken, rhs: AppAccountToken) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}

/// RFC 4648 base64url without padding.
enum Base64URL {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var index = 0
        while index + 3 <= bytes.count {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int((value >> UInt32(shift)) & 63)]) }
            index += 3
        }
        let rest = bytes.count - index
        if rest == 1 {
            let value = UInt32(bytes[index]) << 16
            for shift in [18, 12] { out.append(alphabet[Int((value >> UInt32(shift)) & 63)]) }
        } else if rest == 2 {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            for shift in [18, 12, 6] { out.append(alphabet[Int((value >> UInt32(shift)) & 63)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension ByteWriter {
    /// A profile id as its 19 bytes (records, snapshots, event details).
    public mutating func writeProfileID(_ id: ProfileID) {
        writeRaw(id.bytes)
    }
}

extension ByteReader {
    public mutating func readProfileID() throws(ByteReaderError) -> ProfileID {
        let start = offset
        guard let id = ProfileID(bytes: try readRaw(19)) else { throw ByteReaderError.invalid("profile id", at: start) }
        return id
    }
}

extension ProfileID {
    /// Parses `gh_` + 26 base64url characters straight from UTF-8 bytes, without allocating
    /// (the `sync` hot path); the same ids as ``init(parsing:)``.
    public init?(utf8 text: UnsafeRawBufferPointer) {
        guard text.count == 29, text[0] == UInt8(ascii: "g"), text[1] == UInt8(ascii: "h"), text[2] == UInt8(ascii: "_") else {
            return nil
        }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var tag: UInt32 = 0
        var accumulator: UInt32 = 0
        var bits = 0
        var produced = 0
        for index in 3..<29 {
            let byte = text[index]
            let value: UInt32
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(byte - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(byte - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "_"): value = 63
            default: return nil
            }
            accumulator = accumulator << 6 | value
            bits += 6
            if bits >= 8, produced < 19 {
                bits -= 8
                let decoded = UInt64((accumulator >> UInt32(bits)) & 0xFF)
                switch produced {
                case 0..<8: high = high << 8 | decoded
                case 8..<16: low = low << 8 | decoded
                default: tag = tag << 8 | UInt32(decoded)
                }
                produced += 1
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        guard produced == 19 else { return nil }
        self.init(high: high, low: low, tag: tag)
    }
}
