import GatehouseAppStore
import GatehouseWire
import Testing

/// The form of a compact JWS, checked before any cryptography; every breach is invalidSignature.
@Suite struct JWSFormIsStrict {
    let chain: AppStoreTestChain
    let verifier: AppStoreVerifier
    let payload: [UInt8] = JSONWriter.serialize(["signedDate": .int(Instant.year2025)])

    init() throws {
        chain = try AppStoreTestChain()
        verifier = try GatehouseAppStoreTests.verifier(trusting: chain)
    }

    func expectRejected(header: JSONObject, reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let jws = chain.sign(header: header, payload: payload)
        expectInvalidSignature(reason: reason, sourceLocation: sourceLocation) {
            try verifier.verify(jws: jws)
        }
    }

    var x5c: JSONValue { AppStoreTestChain.header(certificates: chain.certificates)["x5c"] ?? .null }

    @Test func algorithmMustBeES256() {
        for alg: JSONValue in ["ES384", "es256", "none", "HS256", .null, 256] {
            expectRejected(header: ["alg": alg, "x5c": x5c], reason: "alg")
        }
        expectRejected(header: ["x5c": x5c], reason: "alg")
    }

    @Test func x5cMustBeAnArrayOfThreeBase64Strings() {
        let certificates = x5c.arrayValue ?? []
        expectRejected(header: ["alg": "ES256"], reason: "x5c")
        expectRejected(header: ["alg": "ES256", "x5c": .string("abc")], reason: "x5c")
        expectRejected(header: ["alg": "ES256", "x5c": .array(Array(certificates.prefix(2)))], reason: "not 3")
        expectRejected(header: ["alg": "ES256", "x5c": .array(certificates + [certificates[0]])], reason: "not 3")
        expectRejected(
            header: ["alg": "ES256", "x5c": .array([1, certificates[1], certificates[2]])], reason: "x5c[0]")
        expectRejected(
            header: ["alg": "ES256", "x5c": .array([certificates[0], "%%%", certificates[2]])], reason: "x5c[1]")
        expectRejected(
            header: ["alg": "ES256", "x5c": .array([certificates[0], certificates[1], ""])], reason: "x5c[2]")
    }

    @Test func x5cIsStandardBase64NotBase64URL() {
        let urlSafe = chain.certificates.map { der -> JSONValue in
            let standard = AppStoreTestChain.header(certificates: [der])["x5c"]?.arrayValue?.first?.stringValue ?? ""
            return .string(String(standard.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 }))
        }
        let changed = urlSafe != (x5c.arrayValue ?? [])
        if changed {
            expectRejected(header: ["alg": "ES256", "x5c": .array(urlSafe)], reason: "x5c")
        }
    }

    @Test func criticalHeaderExtensionsAreRefused() {
        expectRejected(header: ["alg": "ES256", "x5c": x5c, "crit": ["b64"]], reason: "crit")
    }

    @Test func extraHeaderFieldsAreTolerated() throws {
        let jws = chain.sign(header: ["alg": "ES256", "x5c": x5c, "kid": "Apple", "typ": "JWT"], payload: payload)
        _ = try verifier.verify(jws: jws)
    }

    @Test func payloadMustBeAJSONObject() {
        for body in ["[]", "1", "\"x\"", "null", "{", "{\"a\":1} x", "", "\u{FEFF}{}"] {
            let jws = chain.sign(payload: Array(body.utf8))
            expectInvalidSignature(reason: "payload") { try verifier.verify(jws: jws) }
        }
    }

    @Test func partsMustBeThree() throws {
        let jws = chain.sign(payload: payload)
        for text in [jws + ".", "." + jws, jws + "." + jws, jws.replacingOccurrences(".", with: "")] {
            expectInvalidSignature(reason: "parts") { try verifier.verify(jws: text) }
        }
    }

    @Test func signatureMustBe64CanonicalBytes() throws {
        let jws = chain.sign(payload: payload)
        let parts = jws.split(separator: ".").map(String.init)
        let cases = [
            "",  // empty
            String(parts[2].dropLast(2)),  // 63 bytes
            parts[2] + "AAA",  // 66 bytes
            String(parts[2].dropLast()) + "B",  // unused trailing bits set (the last character holds 2 spare bits)
            parts[2].replacingOccurrences("-", with: "+"),
            "AAAA" + String(parts[2].dropFirst(4)),
        ]
        for signature in cases where signature != parts[2] {
            let text = "\(parts[0]).\(parts[1]).\(signature)"
            expectInvalidSignature { try verifier.verify(jws: text) }
        }
    }

    @Test func allZeroSignatureFails() throws {
        let parts = chain.sign(payload: payload).split(separator: ".").map(String.init)
        let zero = String(repeating: "A", count: 86)
        expectInvalidSignature(reason: "signature") {
            try verifier.verify(jws: "\(parts[0]).\(parts[1]).\(zero)")
        }
    }

    @Test func whitespaceAndNonASCIIAreNotBase64() throws {
        let jws = chain.sign(payload: payload)
        for text in [" " + jws, jws + "\n", jws.replacingOccurrences(".", with: " ."), "é" + jws] {
            expectInvalidSignature { try verifier.verify(jws: text) }
        }
    }

    @Test func oversizedJWSIsRefusedBeforeParsing() throws {
        var big: JSONObject = ["signedDate": .int(Instant.year2025)]
        big["padding"] = .string(String(repeating: "x", count: AppStoreVerifier.jwsBytesMax))
        let jws = chain.sign(payload: big)
        expectInvalidSignature(reason: "longer than") { try verifier.verify(jws: jws) }
        // Just under the limit still verifies.
        let headerCharacters = jws.split(separator: ".")[0].count
        let payloadCharactersMax = AppStoreVerifier.jwsBytesMax - headerCharacters - 2 - 86
        var fits = big
        fits["padding"] = .string(String(repeating: "x", count: payloadCharactersMax * 3 / 4 - 64))
        let smaller = chain.sign(payload: fits)
        #expect(smaller.utf8.count <= AppStoreVerifier.jwsBytesMax)
        #expect(smaller.utf8.count > AppStoreVerifier.jwsBytesMax - 200)
        _ = try verifier.verify(jws: smaller)
    }

    @Test func deeplyNestedPayloadIsRefused() throws {
        let deep = "{\"a\":" + String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000) + "}"
        let jws = chain.sign(payload: Array(deep.utf8))
        expectInvalidSignature(reason: "payload") { try verifier.verify(jws: jws) }
    }
}
