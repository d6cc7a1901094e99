extension RandomSource {
    /// `count` random bytes.
    public func randomBytes(count: Int) -> [UInt8] {
        precondition(count >= 0, "randomBytes(count:) needs a non-negative count")
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { fill($0) }
        return bytes
    }

    /// A uniformly random 64-bit word.
    public func randomUInt64() -> UInt64 {
        var word: UInt64 = 0
        withUnsafeMutableBytes(of: &word) { fill($0) }
        return UInt64(littleEndian: word)
    }

    /// `length` characters drawn uniformly and independently from `alphabet`.
    ///
    /// Uses rejection sampling, not `byte % count`: 256 is not a multiple of 62, so modulo
    /// would make some characters more likely than others and weaken the token.
    public func randomToken(alphabet: TokenAlphabet, length: Int) -> String {
        precondition(length >= 0, "randomToken(alphabet:length:) needs a non-negative length")
        var token: [UInt8] = []
        token.reserveCapacity(length)
        while token.count < length {
            // Draw a little more than needed so one fill usually suffices despite rejections.
            for byte in randomBytes(count: length - token.count + 8) where token.count < length {
                if let character = alphabet.character(forRandomByte: byte) { token.append(character) }
            }
        }
        return String(decoding: token, as: UTF8.self)
    }

    /// A random (version 4) UUID in lowercase RFC 4122 form:
    /// `xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`, with 122 random bits.
    public func randomUUIDString() -> String {
        var bytes = randomBytes(count: 16)
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // variant 10xx (RFC 4122)
        var text = ""
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text += "-" }
            text += Hex.encode(CollectionOfOne(byte))
        }
        return text
    }
}
