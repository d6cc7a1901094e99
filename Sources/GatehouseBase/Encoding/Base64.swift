/// RFC 4648 base64 in its two alphabets: base64url (the three parts of a JWS) and the standard
/// one (the `x5c` certificates, webhook secrets and signatures).
///
/// Decoding is strict about everything that could let two texts mean the same bytes: only the
/// alphabet's characters, no whitespace, padding (optional) only at the end and only as much as
/// the length needs, and unused trailing bits zero. A changed character always changes the bytes.
public enum Base64 {
    public enum Alphabet: Sendable {
        case standard
        case url

        fileprivate var characters: [UInt8] {
            switch self {
            case .standard: Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
            case .url: Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
            }
        }
    }

    private static let invalid: UInt8 = 0xFF
    private static let standardValues = values(of: .standard)
    private static let urlValues = values(of: .url)

    /// The decoded bytes, or `nil` for anything that is not canonical base64 in `alphabet`.
    public static func decode(_ text: some Collection<UInt8>, alphabet: Alphabet) -> [UInt8]? {
        var characters = Array(text)
        var padding = 0
        while characters.last == UInt8(ascii: "=") {
            characters.removeLast()
            padding += 1
        }
        guard padding == 0 || (padding <= 2 && (characters.count + padding) % 4 == 0) else { return nil }
        guard characters.count % 4 != 1 else { return nil }
        let table = alphabet == .standard ? standardValues : urlValues
        var output: [UInt8] = []
        output.reserveCapacity(characters.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in characters {
            let value = table[Int(character)]
            guard value != invalid else { return nil }
            accumulator = (accumulator << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // The 2 or 4 bits left over must be zero, or another text would decode to the same bytes.
        guard accumulator == 0 else { return nil }
        return output
    }

    /// The decoded bytes of a string, or `nil`.
    public static func decode(_ text: String, alphabet: Alphabet) -> [UInt8]? {
        decode(Array(text.utf8), alphabet: alphabet)
    }

    /// `bytes` in `alphabet`; padded with `=` to a multiple of four characters when `padded`.
    public static func encode(_ bytes: [UInt8], alphabet: Alphabet, padded: Bool) -> String {
        let characters = alphabet.characters
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group: UInt32 = 0
            for offset in 0..<3 {
                group <<= 8
                if offset < count { group |= UInt32(bytes[index + offset]) }
            }
            for position in 0...count {
                output.append(characters[Int((group >> UInt32(18 - 6 * position)) & 0x3F)])
            }
            if padded {
                for _ in count..<3 { output.append(UInt8(ascii: "=")) }
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func values(of alphabet: Alphabet) -> [UInt8] {
        var table = [UInt8](repeating: invalid, count: 256)
        for (value, character) in alphabet.characters.enumerated() {
            table[Int(character)] = UInt8(value)
        }
        return table
    }
}
