import GatehouseAppStore
import GatehouseBase
import GatehouseWire
import Testing

/// Bounded fuzzing: random and damaged input is always invalidSignature, never a crash.
@Suite struct FuzzedInputIsRefused {
    let random = SeededRandomSource(seed: 0x6A77_7321)

    func expectRefused(_ verifier: AppStoreVerifier, _ text: String, sourceLocation: SourceLocation = #_sourceLocation)
    {
        let error = verificationError { try verifier.verify(jws: text) }
        #expect(error?.code == .invalidSignature, "accepted or odd: \(text.prefix(80))", sourceLocation: sourceLocation)
    }

    func randomText(alphabet: [UInt8], length: Int) -> String {
        let bytes = random.randomBytes(count: length).map { alphabet[Int($0) % alphabet.count] }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func randomStrings() throws {
        let verifier = try testCAVerifier()
        let printable = Array(UInt8(32)...UInt8(126))
        for _ in 0..<2000 {
            let length = Int(random.randomUInt64() % 200)
            expectRefused(verifier, randomText(alphabet: printable, length: length))
        }
        for _ in 0..<500 {
            let bytes = random.randomBytes(count: Int(random.randomUInt64() % 120))
            expectRefused(verifier, String(decoding: bytes, as: UTF8.self))
        }
    }

    @Test func randomBase64URLTriples() throws {
        let verifier = try testCAVerifier()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for _ in 0..<2000 {
            let parts = (0..<3).map { _ in randomText(alphabet: alphabet, length: Int(random.randomUInt64() % 120)) }
            expectRefused(verifier, parts.joined(separator: "."))
        }
    }

    @Test func randomJSONHeadersAndPayloads() throws {
        let chain = try AppStoreTestChain()
        let verifier = try GatehouseAppStoreTests.verifier(trusting: chain)
        let x5c = AppStoreTestChain.header(certificates: chain.certificates)["x5c"] ?? .null
        let values: [JSONValue] = [
            .null, true, 0, -1, .int(Int64.max), .double(1e300), "", "ES256", [], [:], x5c, ["a", "b", "c"],
            .array(Array((x5c.arrayValue ?? []).prefix(2))),
        ]
        for _ in 0..<500 {
            let alg = values[Int(random.randomUInt64() % UInt64(values.count))]
            let chosen = values[Int(random.randomUInt64() % UInt64(values.count))]
            let date = values[Int(random.randomUInt64() % UInt64(values.count))]
            let header: JSONObject = ["alg": alg, "x5c": chosen]
            let jws = chain.sign(header: header, payload: JSONWriter.serialize(["signedDate": date]))
            let error = verificationError { try verifier.verify(jws: jws) }
            // Only the right header verifies, and only with no date (the clock is in the validity) or a valid one.
            let valid = alg == "ES256" && chosen == x5c && date == .null
            #expect(valid ? error == nil : error?.code == .invalidSignature, "alg \(alg), x5c \(chosen), date \(date)")
        }
    }

    @Test func everyTruncationOfAValidJWS() throws {
        let verifier = try testCAVerifier()
        let jws = Array(try Vectors.mock("testNotification.jws").utf8)
        for length in 0..<jws.count {
            expectRefused(verifier, String(decoding: jws[..<length], as: UTF8.self))
        }
    }

    @Test func everySingleByteDeletion() throws {
        let verifier = try testCAVerifier()
        let jws = Array(try Vectors.mock("testNotification.jws").utf8)
        for index in stride(from: 0, to: jws.count, by: 3) {
            var damaged = jws
            damaged.remove(at: index)
            expectRefused(verifier, String(decoding: damaged, as: UTF8.self))
        }
    }

    @Test func randomNotificationBodies() throws {
        let verifier = try testCAVerifier()
        let jws = try Vectors.mock("testNotification.jws")
        let fragments = ["{", "}", "\"signedPayload\"", ":", "\"", jws, "[", "]", ",", " ", "null", "1"]
        for _ in 0..<1000 {
            let count = Int(random.randomUInt64() % 8)
            let body = (0..<count).map { _ in fragments[Int(random.randomUInt64() % UInt64(fragments.count))] }.joined()
            guard body.trimmingWhitespace() != jws, body != "{\"signedPayload\":\"\(jws)\"}" else { continue }
            let error = verificationError {
                try verifier.decodeNotification(signedPayloadBody: body)
            }
            if let error { #expect(error.code == .invalidSignature) }
        }
    }
}
