import GatehouseAppStore
import GatehouseWire
import Testing

/// Apple's own signed test data (chain A and chain B under Apple's test root) verifies and
/// decodes to what Apple's libraries expect.
@Suite struct AppleSignedVectorsVerify {
    @Test func testNotificationVerifiesAndDecodes() throws {
        let notification = try testCAVerifier().verifyNotification(jws: Vectors.mock("testNotification.jws"))
        #expect(notification.notificationType == .test)
        #expect(notification.subtype == nil)
        #expect(notification.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(notification.signedDate == 1_681_314_324_000)
        #expect(notification.version == nil)
        #expect(notification.data?.appAppleId == 1234)
        #expect(notification.data?.bundleId == "com.example")
        #expect(notification.data?.environment == .sandbox)
        #expect(notification.signedTransactionInfo == nil)
    }

    @Test func transactionInfoVerifiesAndDecodes() throws {
        let transaction = try testCAVerifier().verifyTransaction(jws: Vectors.mock("transactionInfo.jws"))
        var expected = AppStoreTransaction()
        expected.environment = .sandbox
        expected.bundleId = "com.example"
        expected.signedDate = 1_672_956_154_000
        #expect(transaction == expected)
    }

    @Test func renewalInfoVerifiesAndDecodes() throws {
        let renewalInfo = try testCAVerifier().verifyRenewalInfo(jws: Vectors.mock("renewalInfo.jws"))
        var expected = AppStoreRenewalInfo()
        expected.environment = .sandbox
        expected.signedDate = 1_672_956_154_000
        #expect(renewalInfo == expected)
    }

    @Test(arguments: ["testNotification", "transactionInfo", "renewalInfo", "wrongBundleId"])
    func payloadIsExactlyTheSignedBytes(name: String) throws {
        let verified = try testCAVerifier().verify(jws: Vectors.mock("\(name).jws"))
        #expect(verified.payload == (try Vectors.decodedPayload(name)))
        #expect(verified.header["alg"] == "ES256")
    }

    @Test func theClockIsTheSignedDate() throws {
        let verified = try testCAVerifier().verify(jws: Vectors.mock("testNotification.jws"))
        #expect(verified.effectiveDate == 1_681_314_324_000)
    }

    @Test func withoutSignedDateTheClockIsNow() throws {
        let verified = try testCAVerifier().verify(jws: Vectors.mock("wrongBundleId.jws"))
        #expect(verified.effectiveDate == Instant.appleEffectiveDate)
        // The same JWS once the test certificates have expired.
        let later = try AppStoreVerifier(
            rootCertificates: [Vectors.testCA()], currentTimeMilliseconds: { Instant.afterTestCertificates })
        expectInvalidSignature { try later.verify(jws: Vectors.mock("wrongBundleId.jws")) }
    }

    @Test func chainBIsAcceptedThoughItsX5CRootIsNotTheTrustAnchor() throws {
        // x5c[2] of testNotification.jws is not byte-equal to testCA.der; it is ignored.
        let sent = try Vectors.bytes("\(Vectors.library)/certs/x5c-of-testNotification/root-in-x5c.der")
        #expect(sent != (try Vectors.testCA()))
        _ = try testCAVerifier().verify(jws: Vectors.mock("testNotification.jws"))
    }
}

@Suite struct AppleSignedVectorsAreRejected {
    @Test func missingX5CHeader() throws {
        let jws = try Vectors.mock("missingX5CHeaderClaim.jws")
        expectInvalidSignature(reason: "x5c") { try testCAVerifier().verify(jws: jws) }
    }

    @Test(arguments: ["testNotification", "transactionInfo", "renewalInfo", "wrongBundleId"])
    func againstApplesRealRoot(name: String) throws {
        let jws = try Vectors.mock("\(name).jws")
        let appleRooted = AppStoreVerifier(currentTimeMilliseconds: { Instant.appleEffectiveDate })
        expectInvalidSignature { try appleRooted.verify(jws: jws) }
    }

    @Test func notAJWS() throws {
        let verifier = try testCAVerifier()
        for text in ["a.b.c", "a.b.c.d", "", ".", "..", "...", try Vectors.mock("legacyTransaction.txt")] {
            expectInvalidSignature { try verifier.verify(jws: text) }
        }
    }

    @Test(arguments: [0, 1, 2])
    func tamperedPart(part: Int) throws {
        let jws = try Vectors.mock("testNotification.jws")
        let verifier = try testCAVerifier()
        for offset in [0, 7, 40, 1000] {
            expectInvalidSignature {
                try verifier.verify(jws: tampered(jws, part: part, at: offset))
            }
        }
    }

    @Test func signatureOfAnotherVector() throws {
        let notification = try Vectors.mock("testNotification.jws").split(separator: ".")
        let transaction = try Vectors.mock("transactionInfo.jws").split(separator: ".")
        let spliced = "\(notification[0]).\(notification[1]).\(transaction[2])"
        expectInvalidSignature(reason: "signature") {
            try testCAVerifier().verify(jws: spliced)
        }
    }

    @Test func xcodeSignedDataIsNotTrusted() throws {
        // StoreKit Testing in Xcode signs with a single self-signed certificate.
        let verifier = try testCAVerifier()
        for name in ["xcode-signed-transaction", "xcode-signed-renewal-info", "xcode-signed-app-transaction"] {
            let jws = try Vectors.text("\(Vectors.library)/xcode/\(name).jws")
            expectInvalidSignature(reason: "x5c") { try verifier.verify(jws: jws) }
        }
    }
}
