import GatehouseAppStore
import GatehouseWire
import Testing

/// The generated test chain signs what the verifier accepts, and each thing Apple's rules
/// require is required: remove it and the same JWS is refused.
@Suite struct GeneratedChainRoundTrip {
    let payload: JSONObject = [
        "transactionId": "1000", "bundleId": "com.example", "environment": "Sandbox",
        "signedDate": .int(Instant.year2025),
    ]

    @Test func signAndVerify() throws {
        let chain = try AppStoreTestChain()
        let verified = try verifier(trusting: chain).verify(jws: chain.sign(payload: payload))
        #expect(verified.payload == payload)
        #expect(verified.payloadBytes == JSONWriter.serialize(.object(payload)))
        #expect(verified.effectiveDate == Instant.year2025)
        #expect(verified.header == AppStoreTestChain.header(certificates: chain.certificates))
    }

    @Test func rawPayloadBytesAreSignedAsGiven() throws {
        let chain = try AppStoreTestChain()
        let bytes = Array(#"{ "signedDate" : 1735689600000, "x": "ü" }"#.utf8)
        let verified = try verifier(trusting: chain).verify(jws: chain.sign(payload: bytes))
        #expect(verified.payloadBytes == bytes)
        #expect(verified.payload["x"] == "ü")
    }

    @Test func x5cRootIsIgnored() throws {
        let chain = try AppStoreTestChain()
        let stranger = try AppStoreTestChain()
        let verifier = try verifier(trusting: chain)
        _ = try verifier.verify(
            jws: chain.sign(payload: payload, certificates: [chain.leafDER, chain.intermediateDER, stranger.rootDER]))
        _ = try verifier.verify(
            jws: chain.sign(payload: payload, certificates: [chain.leafDER, chain.intermediateDER, [1, 2, 3]]))
    }

    @Test func verifierTrustingOnlyAnotherRoot() throws {
        let chain = try AppStoreTestChain()
        let stranger = try AppStoreTestChain()
        expectInvalidSignature(reason: "certificate chain") {
            try verifier(trusting: stranger).verify(jws: chain.sign(payload: payload))
        }
        // Sending the trusted root in x5c[2] changes nothing: only configured roots anchor.
        let jws = chain.sign(payload: payload, certificates: [chain.leafDER, chain.intermediateDER, stranger.rootDER])
        expectInvalidSignature { try verifier(trusting: stranger).verify(jws: jws) }
    }

    @Test func verifierWithSeveralRootsAcceptsEach() throws {
        let first = try AppStoreTestChain()
        let second = try AppStoreTestChain()
        let verifier = try verifier(trusting: first, second)
        _ = try verifier.verify(jws: first.sign(payload: payload))
        _ = try verifier.verify(jws: second.sign(payload: payload))
    }

    @Test func leafNotSignedByTheIntermediate() throws {
        let chain = try AppStoreTestChain()
        let other = try AppStoreTestChain()
        let jws = chain.sign(payload: payload, certificates: [chain.leafDER, other.intermediateDER, other.rootDER])
        expectInvalidSignature(reason: "certificate chain") {
            try verifier(trusting: chain, other).verify(jws: jws)
        }
    }

    @Test func signatureByAnotherKeyThanTheLeaf() throws {
        let chain = try AppStoreTestChain()
        let other = try AppStoreTestChain()
        let jws = other.sign(payload: payload, certificates: chain.certificates)
        expectInvalidSignature(reason: "signature does not verify") {
            try verifier(trusting: chain).verify(jws: jws)
        }
    }
}

@Suite struct GeneratedChainWithoutApplesMarkings {
    let payload: JSONObject = ["signedDate": .int(Instant.year2025)]

    @Test func leafWithoutMarker() throws {
        let chain = try AppStoreTestChain(options: .init(leafMarker: false))
        expectInvalidSignature(reason: AppStoreVerifier.leafMarkerOID) {
            try verifier(trusting: chain).verify(jws: chain.sign(payload: payload))
        }
    }

    @Test func intermediateWithoutMarker() throws {
        let chain = try AppStoreTestChain(options: .init(intermediateMarker: false))
        expectInvalidSignature(reason: AppStoreVerifier.intermediateMarkerOID) {
            try verifier(trusting: chain).verify(jws: chain.sign(payload: payload))
        }
    }

    @Test func intermediateThatIsNotACA() throws {
        let chain = try AppStoreTestChain(options: .init(intermediateIsCA: false))
        expectInvalidSignature(reason: "certificate chain") {
            try verifier(trusting: chain).verify(jws: chain.sign(payload: payload))
        }
    }
}

/// The chain must be valid at the payload's signedDate (milliseconds), not at any other time.
@Suite struct GeneratedChainValidityWindow {
    let chain: AppStoreTestChain

    init() throws {
        chain = try AppStoreTestChain(options: .init(validFrom: Instant.year2020, validUntil: Instant.year2030))
    }

    func verify(signedDate: JSONValue) throws -> VerifiedJWS {
        try verifier(trusting: chain).verify(jws: chain.sign(payload: ["signedDate": signedDate]))
    }

    @Test func insideTheWindow() throws {
        _ = try verify(signedDate: .int(Instant.year2025))
        _ = try verify(signedDate: .int(Instant.year2020 + 1000))
        _ = try verify(signedDate: .int(Instant.year2030 - 1000))
    }

    @Test func outsideTheWindow() {
        for date in [Instant.year2031, Instant.year2020 - 1000, Instant.year2030 + 1000, 0, -1, -86_400_000] {
            expectInvalidSignature(reason: "certificate") {
                try verify(signedDate: .int(date))
            }
        }
    }

    @Test func fractionalMillisecondsAreTruncated() throws {
        let verified = try verify(signedDate: .double(1_735_689_600_123.75))
        #expect(verified.effectiveDate == 1_735_689_600_123)
    }

    @Test func extremeAndMistypedDates() {
        let values: [JSONValue] = [
            .int(Int64.max), .int(Int64.min), .number(JSONNumber(uncheckedText: "1e300")), "1735689600000", true, [],
            .number(JSONNumber(uncheckedText: "99999999999999999999999")),
        ]
        for value in values {
            expectInvalidSignature { try verify(signedDate: value) }
        }
    }

    @Test func withoutSignedDateTheInjectedClockDecides() throws {
        let jws = chain.sign(payload: ["bundleId": "com.example"])
        let inside = try AppStoreVerifier(
            rootCertificates: [chain.rootDER], currentTimeMilliseconds: { Instant.year2025 })
        #expect(try inside.verify(jws: jws).effectiveDate == Instant.year2025)
        let outside = try AppStoreVerifier(
            rootCertificates: [chain.rootDER], currentTimeMilliseconds: { Instant.year2031 })
        expectInvalidSignature { try outside.verify(jws: jws) }
    }

    @Test func appTransactionUsesReceiptCreationDate() throws {
        let jws = chain.sign(payload: ["receiptCreationDate": .int(Instant.year2031)])
        expectInvalidSignature { try verifier(trusting: chain).verify(jws: jws) }
    }
}
