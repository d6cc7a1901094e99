/// The characters a random token is drawn from.
public struct TokenAlphabet: Sendable, Hashable {
    /// ASCII characters of the alphabet, each used once.
    public let characters: [UInt8]
    // Smallest all-ones mask covering every index, so a masked byte is accepted with
    // probability count / (mask + 1) > 1/2 and no index is favoured.
    private let mask: UInt8

    /// `A-Z a-z 0-9`: safe everywhere, about 5.95 bits per character.
    public static let base62 = TokenAlphabet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    /// RFC 4648 §5 `A-Z a-z 0-9 - _`: URL- and filename-safe, 6 bits per character.
    public static let base64URL = TokenAlphabet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

    /// An alphabet of 2 to 256 distinct ASCII characters.
    public init(_ characters: String) {
        let bytes = Array(characters.utf8)
        precondition((2...256).contains(bytes.count), "a token alphabet needs 2 to 256 characters")
        precondition(bytes.allSatisfy { $0 < 0x80 }, "a token alphabet must be ASCII")
        precondition(Set(bytes).count == bytes.count, "a token alphabet must not repeat characters")
        self.characters = bytes
        self.mask = UInt8(truncatingIfNeeded: (1 << (Int.bitWidth - (bytes.count - 1).leadingZeroBitCount)) - 1)
    }

    /// The character a random byte selects, or nil when the byte must be rejected.
    func character(forRandomByte byte: UInt8) -> UInt8? {
        let index = Int(byte & mask)
        return index < characters.count ? characters[index] : nil
    }
}
