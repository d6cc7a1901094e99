import GatehouseBase
import Testing

@Suite("SHA-256")
struct SHA256Tests {
    // FIPS 180-2 appendix B and the empty-string digest.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
    ])
    func matchesTheStandardVectors(input: String, digest: String) {
        #expect(SHA256.hex(input) == digest)
        #expect(SHA256.hex(Array(input.utf8)) == digest)
    }

    @Test func hashesAMillionAs() {
        let input = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(SHA256.hex(input) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func digestsAreThirtyTwoBytes() {
        #expect(SHA256.hash("abc").count == SHA256.byteCount)
        #expect(SHA256.byteCount == 32)
    }

    @Test func nonContiguousCollectionsHashLikeArrays() {
        let bytes = Array("abc".utf8)
        #expect(SHA256.hash(bytes.reversed().reversed()) == SHA256.hash(bytes))
        #expect(SHA256.hash("xabcx".utf8.dropFirst().dropLast()) == SHA256.hash("abc"))
    }
}

@Suite("Constant-time comparison")
struct ConstantTimeEqualsTests {
    @Test func equalBytesCompareEqual() {
        #expect(constantTimeEquals(SHA256.hash("a"), SHA256.hash("a")))
        #expect(constantTimeEquals([UInt8](), [UInt8]()))
    }

    @Test func aDifferenceAnywhereCompareUnequal() {
        let base = SHA256.hash("a")
        for index in base.indices {
            var changed = base
            changed[index] ^= 0x01
            #expect(!constantTimeEquals(base, changed))
        }
    }

    @Test func differentLengthsCompareUnequal() {
        #expect(!constantTimeEquals([1, 2, 3] as [UInt8], [1, 2] as [UInt8]))
        #expect(!constantTimeEquals([] as [UInt8], [0] as [UInt8]))
    }

    @Test func worksOnNonContiguousCollections() {
        let bytes: [UInt8] = [1, 2, 3]
        #expect(constantTimeEquals(bytes.reversed(), [3, 2, 1] as [UInt8]))
        #expect(!constantTimeEquals(bytes.reversed(), bytes))
    }
}

@Suite("Secret digests")
struct SecretDigestTests {
    @Test func matchesOnlyTheSecretItWasMadeFrom() {
        let digest = SecretDigest(secret: "hunter2")
        #expect(digest.matches("hunter2"))
        #expect(!digest.matches("hunter3"))
        #expect(!digest.matches(""))
    }

    @Test func isTheSHA256OfTheSecret() {
        #expect(SecretDigest(secret: "abc").hex == SHA256.hex("abc"))
        #expect(SecretDigest(secret: "abc").bytes == SHA256.hash("abc"))
    }

    @Test func descriptionsNeverShowTheSecretOrTheFullDigest() {
        let secret = "sk_live_0123456789"
        let digest = SecretDigest(secret: secret)
        for text in [digest.description, digest.debugDescription, "\(digest)", String(reflecting: digest)] {
            #expect(!text.contains(secret))
            #expect(!text.contains(digest.hex))
        }
        #expect(digest.description == "sha256:" + digest.hex.prefix(8) + "…")
    }

    @Test func roundTripsThroughHex() {
        let digest = SecretDigest(secret: "abc")
        #expect(SecretDigest(hex: digest.hex) == digest)
        #expect(SecretDigest(hex: digest.hex.uppercased()) == digest)
        #expect(SecretDigest(hex: digest.hex)?.matches("abc") == true)
    }

    @Test(arguments: ["", "abc", String(repeating: "0", count: 62), String(repeating: "0", count: 66),
                      String(repeating: "g", count: 64), String(repeating: "0", count: 63) + " "])
    func rejectsHexThatIsNotADigest(hex: String) {
        #expect(SecretDigest(hex: hex) == nil)
    }

    @Test func equalDigestsHashAlike() {
        let set: Set = [SecretDigest(secret: "a"), SecretDigest(secret: "a"), SecretDigest(secret: "b")]
        #expect(set.count == 2)
    }
}

@Suite("HMAC-SHA256")
struct HMACSHA256Tests {
    private static func bytes(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }

    // RFC 4231 test cases 1, 2, 4 and 6 (a key longer than the block).
    @Test(arguments: [
        ("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        ("4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        ("0102030405060708090a0b0c0d0e0f10111213141516171819",
         String(repeating: "cd", count: 50),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        (String(repeating: "aa", count: 131),
         "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b6579204669727374",
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
    ])
    func matchesRFC4231(key: String, message: String, code: String) {
        #expect(Hex.encode(HMACSHA256.code(key: Self.bytes(key), message: Self.bytes(message))) == code)
    }

    @Test func anEmptyKeyAndMessageHaveTheKnownCode() {
        #expect(Hex.encode(HMACSHA256.code(key: [], message: []))
            == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }
}
