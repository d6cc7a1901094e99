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
