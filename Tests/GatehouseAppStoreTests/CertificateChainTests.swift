import GatehouseAppStore
import GatehouseBase
import GatehouseWire
import Testing

/// The chain check on its own, with Apple's test certificates and an explicit date (as Apple's
/// chain tests do), and with Apple's real production chain.
@Suite struct CertificateChainRules {
    func chainA() throws -> [[UInt8]] {
        [
            try Vectors.certificate("testLeaf.pem"), try Vectors.certificate("testIntermediate.pem"),
            try Vectors.testCA(),
        ]
    }

    @Test func chainAIsValidAtTheEffectiveDate() throws {
        try testCAVerifier().verifyCertificateChain(chainA(), at: Instant.appleEffectiveDate)
    }

    @Test func chainBFromTheNotificationIsValidAtItsSignedDate() throws {
        let directory = "\(Vectors.library)/certs/x5c-of-testNotification"
        let chainB = [
            try Vectors.bytes("\(directory)/leaf.der"), try Vectors.bytes("\(directory)/intermediate.der"),
            try Vectors.bytes("\(directory)/root-in-x5c.der"),
        ]
        try testCAVerifier().verifyCertificateChain(chainB, at: 1_681_314_324_000)
    }

    @Test(arguments: [Instant.afterTestCertificates, Instant.year2034, 1_600_000_000_000])
    func chainAOutsideItsValidity(at date: Int64) throws {
        let chain = try chainA()
        expectInvalidSignature(reason: "certificate") {
            try testCAVerifier().verifyCertificateChain(chain, at: date)
        }
    }

    @Test func chainAAgainstApplesRealRoot() throws {
        let chain = try chainA()
        expectInvalidSignature {
            try AppStoreVerifier().verifyCertificateChain(chain, at: Instant.appleEffectiveDate)
        }
    }

    @Test func intermediateWithoutApplesMarker() throws {
        let chain = [
            try Vectors.certificate("testInvalidIntermediateLeaf.pem"),
            try Vectors.certificate("testInvalidOIDIntermediate.pem"), try Vectors.testCA(),
        ]
        expectInvalidSignature(reason: AppStoreVerifier.intermediateMarkerOID) {
            try testCAVerifier().verifyCertificateChain(chain, at: Instant.appleEffectiveDate)
        }
    }

    @Test func leafWithoutApplesMarker() throws {
        let chain = [
            try Vectors.certificate("testInvalidOIDLeaf.pem"), try Vectors.certificate("testIntermediate.pem"),
            try Vectors.testCA(),
        ]
        expectInvalidSignature(reason: AppStoreVerifier.leafMarkerOID) {
            try testCAVerifier().verifyCertificateChain(chain, at: Instant.appleEffectiveDate)
        }
    }

    @Test func invalidIntermediateWithTheSameKeyStillLacksTheMarker() throws {
        // testInvalidOIDIntermediate has testIntermediate's name and key, so it does issue testLeaf.
        let chain = [
            try Vectors.certificate("testLeaf.pem"), try Vectors.certificate("testInvalidOIDIntermediate.pem"),
            try Vectors.testCA(),
        ]
        expectInvalidSignature(reason: AppStoreVerifier.intermediateMarkerOID) {
            try testCAVerifier().verifyCertificateChain(chain, at: Instant.appleEffectiveDate)
        }
    }

    @Test func leafNotIssuedByTheIntermediate() throws {
        // Chain B's leaf names another issuer than chain A's intermediate.
        let chain = [
            try Vectors.bytes("\(Vectors.library)/certs/x5c-of-testNotification/leaf.der"),
            try Vectors.certificate("testIntermediate.pem"), try Vectors.testCA(),
        ]
        expectInvalidSignature(reason: "certificate chain") {
            try testCAVerifier().verifyCertificateChain(chain, at: Instant.appleEffectiveDate)
        }
    }

    @Test func exactlyThreeCertificates() throws {
        let chain = try chainA()
        let verifier = try testCAVerifier()
        for wrong in [[], [chain[0]], Array(chain[1...]), chain + [chain[2]]] {
            expectInvalidSignature(reason: "not 3") {
                try verifier.verifyCertificateChain(wrong, at: Instant.appleEffectiveDate)
            }
        }
    }

    @Test func certificatesThatDoNotParse() throws {
        let chain = try chainA()
        let verifier = try testCAVerifier()
        let garbage: [UInt8] = [0x30, 0x03, 0x02, 0x01, 0x01]
        for wrong in [
            [garbage, chain[1], chain[2]], [chain[0], garbage, chain[2]], [chain[0] + [0], chain[1], chain[2]],
        ] {
            expectInvalidSignature(reason: "not a DER certificate") {
                try verifier.verifyCertificateChain(wrong, at: Instant.appleEffectiveDate)
            }
        }
    }

    @Test func theTrustAnchorCannotStandInAsIntermediate() throws {
        // The root offered as x5c[1]: the path would be leaf ← root, which is not leaf ← x5c[1] ← root.
        let chain = try chainA()
        expectInvalidSignature {
            try testCAVerifier().verifyCertificateChain([chain[0], chain[2], chain[2]], at: Instant.appleEffectiveDate)
        }
    }

    @Test func applesProductionChainIsValidUnderTheBuiltInRoot() throws {
        let chain = [
            try Vectors.realAppleChain("Prod-ECC-Mac-App-Store-Receipt-Signing-2025-09-19"),
            try Vectors.realAppleChain("AppleWWDRCA-G6"), try Vectors.realAppleChain("AppleRootCA-G3"),
        ]
        try AppStoreVerifier().verifyCertificateChain(chain, at: Instant.appleEffectiveDate)
        expectInvalidSignature {
            try testCAVerifier().verifyCertificateChain(chain, at: Instant.appleEffectiveDate)
        }
        expectInvalidSignature {
            try AppStoreVerifier().verifyCertificateChain(chain, at: Instant.year2030)
        }
    }

    @Test func builtInRootIsApplesPublishedG3() throws {
        #expect(
            SHA256.hex(AppStoreVerifier.appleRootCAG3)
                == "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179")
        #expect(AppStoreVerifier.appleRootCAG3 == (try Vectors.realAppleChain("AppleRootCA-G3")))
    }
}

/// A JWS whose header carries Apple's invalid test chains fails at the chain, before its
/// signature is looked at (the test signs with a key of its own; Apple's keys are not public).
@Suite struct HeaderChainsFailBeforeTheSignature {
    @Test func invalidChainsInTheHeader() throws {
        let signer = try AppStoreTestChain()
        let payload: JSONObject = ["signedDate": .int(Instant.appleEffectiveDate)]
        let cases: [([[UInt8]], String)] = [
            (
                [
                    try Vectors.certificate("testInvalidOIDLeaf.pem"), try Vectors.certificate("testIntermediate.pem"),
                    try Vectors.testCA(),
                ],
                AppStoreVerifier.leafMarkerOID
            ),
            (
                [
                    try Vectors.certificate("testInvalidIntermediateLeaf.pem"),
                    try Vectors.certificate("testInvalidOIDIntermediate.pem"), try Vectors.testCA(),
                ],
                AppStoreVerifier.intermediateMarkerOID
            ),
            (
                [
                    try Vectors.bytes("\(Vectors.library)/certs/x5c-of-testNotification/leaf.der"),
                    try Vectors.certificate("testIntermediate.pem"), try Vectors.testCA(),
                ],
                "certificate chain"
            ),
        ]
        let verifier = try testCAVerifier()
        for (certificates, reason) in cases {
            let jws = signer.sign(payload: payload, certificates: certificates)
            expectInvalidSignature(reason: reason) { try verifier.verify(jws: jws) }
        }
    }

    @Test func validAppleChainWithAForeignSignature() throws {
        // Chain A is valid, but this key is not testLeaf's: the signature check catches it.
        let signer = try AppStoreTestChain()
        let certificates = [
            try Vectors.certificate("testLeaf.pem"), try Vectors.certificate("testIntermediate.pem"),
            try Vectors.testCA(),
        ]
        let jws = signer.sign(payload: ["signedDate": .int(Instant.appleEffectiveDate)], certificates: certificates)
        expectInvalidSignature(reason: "signature does not verify") {
            try testCAVerifier().verify(jws: jws)
        }
    }
}
