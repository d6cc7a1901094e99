import Testing

import GatehouseBase

/// The base64 decoder is canonical: one text per byte string.
@Suite struct Base64IsCanonical {
    @Test func roundTrips() {
        for count in 0..<70 {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            for alphabet in [Base64.Alphabet.standard, .url] {
                #expect(
                    Base64.decode(Base64.encode(bytes, alphabet: alphabet, padded: true), alphabet: alphabet) == bytes)
                #expect(
                    Base64.decode(Base64.encode(bytes, alphabet: alphabet, padded: false), alphabet: alphabet) == bytes)
            }
        }
    }

    @Test func knownVectors() {
        #expect(Base64.encode(Array("foobar".utf8), alphabet: .standard, padded: true) == "Zm9vYmFy")
        #expect(Base64.encode(Array("fo".utf8), alphabet: .standard, padded: true) == "Zm8=")
        #expect(Base64.encode([0xFB, 0xFF], alphabet: .url, padded: false) == "-_8")
        #expect(Base64.encode([0xFB, 0xFF], alphabet: .standard, padded: false) == "+/8")
        #expect(Base64.decode("Zm8", alphabet: .url) == Array("fo".utf8))
    }

    @Test func refusesEverythingElse() {
        for text in ["Z", "Zm9=v", "Zm8==", "Zm9v=", "Zm9", "Zm 9v", "Zm\n9v", "Zm9v\0", "Zg===", "=", "Zm+v", "Zm9/"] {
            let standard = Base64.decode(text, alphabet: .standard)
            let url = Base64.decode(text, alphabet: .url)
            #expect(url == nil, "\(text) decoded as base64url")
            if !text.contains("+") && !text.contains("/") { #expect(standard == nil, "\(text) decoded as base64") }
        }
        #expect(Base64.decode("Zm9w", alphabet: .url) != nil)
        // Non-zero spare bits: "Zh" would decode like "Zg", and "Zm9" like "Zm8".
        #expect(Base64.decode("Zg", alphabet: .url) == [0x66])
        #expect(Base64.decode("Zh", alphabet: .url) == nil)
        #expect(Base64.decode("Zm9=", alphabet: .url) == nil)
    }
}
