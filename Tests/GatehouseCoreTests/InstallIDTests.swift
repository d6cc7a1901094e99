import GatehouseCore
import Testing

// DESIGN.md, "Install ids": exactly `$RCAnonymousID:` and 32 lowercase hex digits is an install
// id, read back byte for byte; anything else is not.

@Suite("An install id is $RCAnonymousID: and 32 lowercase hex digits, and nothing else")
struct InstallIDParsing {
    static let text = "$RCAnonymousID:0123456789abcdef00ff10ee20dd30cc"

    @Test func theRevenueCatFormIsReadAsItsBits() throws {
        let id = try #require(InstallID(parsing: Self.text))
        #expect(id.high == 0x0123_4567_89ab_cdef)
        #expect(id.low == 0x00ff_10ee_20dd_30cc)
    }

    @Test(arguments: [
        "$RCAnonymousID:00000000000000000000000000000000", "$RCAnonymousID:ffffffffffffffffffffffffffffffff",
        InstallIDParsing.text, "$RCAnonymousID:9f86d081884c7d659a2feaa0c55ad015",
    ])
    func theTextComesBackByteForByte(text: String) throws {
        let id = try #require(InstallID(parsing: text))
        #expect(id.description == text)
        #expect(InstallID(parsing: id.description) == id)
    }

    @Test(arguments: [
        "",
        "$RCAnonymousID:",
        "$RCAnonymousID:0123456789ABCDEF00FF10EE20DD30CC",  // uppercase digits are another text
        "$RCAnonymousID:0123456789abcdef00ff10ee20dd30c",  // 31 digits
        "$RCAnonymousID:0123456789abcdef00ff10ee20dd30cc0",  // 33 digits
        "$RCAnonymousID:0123456789abcdef00ff10ee20dd30cg",  // not hex
        "$rcanonymousid:0123456789abcdef00ff10ee20dd30cc",  // the prefix in another case
        "RCAnonymousID:0123456789abcdef00ff10ee20dd30cc0",
        " $RCAnonymousID:0123456789abcdef00ff10ee20dd30c",
        "$RCAnonymousID:0123456789abcdef00ff10ee20dd30c ",
        "$RCAnonymousID:0123456789abcdef-0ff10ee20dd30cc",
        "$RCAnonymousID:0123456789abcdef00ff10ee20dd30cé",
        "gh_AAAAAAAAAAAAAAAAAAAAAAAAAA",
        "alice",
    ])
    func anythingElseIsNotAnInstallID(text: String) {
        #expect(InstallID(parsing: text) == nil)
    }

    @Test func theCustomerUserIDPrefixCheckSeesOnlyTheBeginning() {
        #expect(InstallID.hasPrefix("$RCAnonymousID:"))
        #expect(InstallID.hasPrefix("$RCAnonymousID:alice"))
        #expect(!InstallID.hasPrefix("alice$RCAnonymousID:"))
        #expect(!InstallID.hasPrefix("$RCAnonymousID"))
        #expect(!InstallID.hasPrefix("$rcanonymousid:x"))
    }

    @Test func installIDsOrderByTheirBits() {
        let small = InstallID(high: 1, low: 9)
        let large = InstallID(high: 2, low: 0)
        #expect(small < large)
        #expect(small.description < large.description)
    }
}
