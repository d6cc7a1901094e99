import Foundation
import GatehouseCore
import GatehouseStripe
import GatehouseTesting
import Testing

/// `Stripe-Signature` as DESIGN.md "Web purchases" states it and Stripe's libraries check it.
@Suite struct StripeSignatureTests {
    /// What a check of a vector should come to: it passes, or is refused by the rule named.
    enum Outcome: Equatable {
        case passes
        case refused(String)
    }

    /// How each vector is checked, and the outcome its `expect` entries give the Python verifier
    /// (the node-only whitespace check on secrets is the config's business, not the verifier's).
    struct Check {
        var secret: String?
        var nowSeconds: Int64
        var toleranceSeconds: Int64 = StripeSignature.defaultToleranceSeconds
        var outcome: Outcome
    }

    static let checks: [String: [Check]] = [
        "node-ts12345-valid-no-tolerance": [
            Check(nowSeconds: 12345, outcome: .passes),
            Check(nowSeconds: 12345 + 301, outcome: .refused("timestamp is more than 300 s old")),
        ],
        "python-ts12345-valid-no-tolerance": [
            Check(nowSeconds: 12345, outcome: .passes),
            Check(nowSeconds: 12345 + 301, outcome: .refused("timestamp is more than 300 s old")),
        ],
        "python-ts12345-extra-bad-v1": [Check(nowSeconds: 12345, outcome: .passes)],
        "python-ts12345-bad-signature": [Check(nowSeconds: 12345, outcome: .refused("no signature matches the payload"))],
        "python-ts12345-v0-only": [Check(nowSeconds: 12345, outcome: .refused("no signature with scheme v1"))],
        "python-malformed-header": [Check(nowSeconds: 12345, outcome: .refused("bad timestamp"))],
        "python-v2-payload": [Check(nowSeconds: 12345, outcome: .passes)],
        "node-receivedAt20000000ms-ts19985": [
            Check(nowSeconds: 20000, toleranceSeconds: 10, outcome: .refused("timestamp is more than 10 s old"))
        ],
        "node-receivedAt20000000ms-ts19991": [Check(nowSeconds: 20000, toleranceSeconds: 10, outcome: .passes)],
        "node-ts12345-secret-with-trailing-space": [
            Check(secret: "whsec_test_secret ", nowSeconds: 12345, outcome: .refused("no signature matches the payload"))
        ],
    ]

    static func outcome(
        header: String?, body: [UInt8], secrets: [String], nowSeconds: Int64,
        toleranceSeconds: Int64 = StripeSignature.defaultToleranceSeconds
    ) -> Outcome {
        do {
            try StripeSignature.verify(
                header: header, body: body, secrets: secrets, nowSeconds: nowSeconds, toleranceSeconds: toleranceSeconds)
            return .passes
        } catch {
            #expect(error.code == .invalidSignature)
            #expect(error.message.hasPrefix("Stripe-Signature: "))
            return .refused(String(error.message.dropFirst("Stripe-Signature: ".count)))
        }
    }

    static func refusal(_ outcome: Outcome) -> String? {
        if case .refused(let rule) = outcome { return rule }
        return nil
    }

    @Test func everyVectorInTheFileHasItsChecks() {
        #expect(!StripeVectors.signatureCases.isEmpty)
        #expect(Set(StripeVectors.signatureCases.map(\.id)) == Set(Self.checks.keys))
    }

    @Test(arguments: StripeVectors.signatureCases)
    func aVectorComesToWhatStripesVerifierSays(_ vector: StripeVectors.SignatureCase) throws {
        let body = try StripeVectors.bytes(vector.payloadFile)
        let checks = try #require(Self.checks[vector.id])
        for check in checks {
            let outcome = Self.outcome(
                header: vector.header, body: body, secrets: [check.secret ?? vector.secret], nowSeconds: check.nowSeconds,
                toleranceSeconds: check.toleranceSeconds)
            if case .refused(let rule) = check.outcome {
                #expect(Self.refusal(outcome)?.hasPrefix(rule) == true, "\(vector.id): \(outcome)")
            } else {
                #expect(outcome == .passes, "\(vector.id)")
            }
        }
    }

    @Test func theDerivedHeaderIsTheVectorsHeader() throws {
        let vector = StripeVectors.signatureCase("python-ts12345-valid-no-tolerance")
        let body = try StripeVectors.bytes(vector.payloadFile)
        #expect(StripeFixtures.signatureHeader(body: body, secret: vector.secret, timestamp: 12345) == vector.header)
    }

    // MARK: Rules

    static let body = Array(#"{"id":"evt_1","object":"event","type":"invoice.paid"}"#.utf8)
    static let secret = StripeFixtures.webhookSecret
    static let now: Int64 = 1_782_864_000

    static func header(_ body: [UInt8] = body, secret: String = secret, timestamp: Int64 = now) -> String {
        StripeFixtures.signatureHeader(body: body, secret: secret, timestamp: timestamp)
    }

    @Test func aSignedBodyPasses() {
        #expect(Self.outcome(header: Self.header(), body: Self.body, secrets: [Self.secret], nowSeconds: Self.now) == .passes)
    }

    @Test func aTamperedBodyMatchesNoSignature() {
        var tampered = Self.body
        tampered[tampered.count - 3] ^= 0x01
        let outcome = Self.outcome(header: Self.header(), body: tampered, secrets: [Self.secret], nowSeconds: Self.now)
        #expect(outcome == .refused("no signature matches the payload"))
    }

    @Test func aTimestampMoreThanTheToleranceOldIsRefused() {
        let old = Self.header(timestamp: Self.now - 301)
        #expect(
            Self.outcome(header: old, body: Self.body, secrets: [Self.secret], nowSeconds: Self.now)
                == .refused("timestamp is more than 300 s old"))
        let edge = Self.header(timestamp: Self.now - 300)
        #expect(Self.outcome(header: edge, body: Self.body, secrets: [Self.secret], nowSeconds: Self.now) == .passes)
    }

    @Test func aTimestampInTheFutureIsAccepted() {
        let future = Self.header(timestamp: Self.now + 3600)
        #expect(Self.outcome(header: future, body: Self.body, secrets: [Self.secret], nowSeconds: Self.now) == .passes)
    }

    @Test func aTimestampOtherThanTheSignedOneMatchesNothing() {
        let signed = Self.header(timestamp: Self.now - 1000)
        let moved = signed.replacingOccurrences(of: "t=\(Self.now - 1000)", with: "t=\(Self.now)")
        #expect(
            Self.outcome(header: moved, body: Self.body, secrets: [Self.secret], nowSeconds: Self.now)
                == .refused("no signature matches the payload"))
    }

    @Test func duringRotationTheSecondSecretMatches() {
        let header = Self.header(secret: "whsec_new_secret")
        let secrets = ["whsec_old_secret", "whsec_new_secret"]
        #expect(Self.outcome(header: header, body: Self.body, secrets: secrets, nowSeconds: Self.now) == .passes)
        #expect(
            Self.outcome(header: header, body: Self.body, secrets: ["whsec_old_secret"], nowSeconds: Self.now)
                == .refused("no signature matches the payload"))
    }

    @Test func oneMatchingV1AmongSeveralPasses() {
        let good = StripeSignature.signature(timestamp: Self.now, body: Self.body, secret: Self.secret)
        let other = StripeSignature.signature(timestamp: Self.now, body: Self.body, secret: "whsec_other")
        for header in ["t=\(Self.now),v1=\(other),v1=\(good)", "t=\(Self.now),v1=\(good),v1=\(other)",
            "v1=\(other),t=\(Self.now),v1=deadbeef,v1=\(good)"]
        {
            #expect(Self.outcome(header: header, body: Self.body, secrets: [Self.secret], nowSeconds: Self.now) == .passes)
        }
    }

    @Test func otherSchemesAreIgnored() {
        let good = StripeSignature.signature(timestamp: Self.now, body: Self.body, secret: Self.secret)
        let withV0 = "t=\(Self.now),v0=\(good),v1=\(good),x=1"
        #expect(Self.outcome(header: withV0, body: Self.body, secrets: [Self.secret], nowSeconds: Self.now) == .passes)
        let onlyV0 = "t=\(Self.now),v0=\(good)"
        #expect(
            Self.outcome(header: onlyV0, body: Self.body, secrets: [Self.secret], nowSeconds: Self.now)
                == .refused("no signature with scheme v1"))
    }

    @Test func anUpperCaseSignatureDoesNotMatchAsStripesLibrariesCompareHex() {
        let good = StripeSignature.signature(timestamp: Self.now, body: Self.body, secret: Self.secret)
        let header = "t=\(Self.now),v1=\(good.uppercased())"
        #expect(
            Self.outcome(header: header, body: Self.body, secrets: [Self.secret], nowSeconds: Self.now)
                == .refused("no signature matches the payload"))
    }

    @Test func noHeaderIsRefused() {
        #expect(
            Self.outcome(header: nil, body: Self.body, secrets: [Self.secret], nowSeconds: Self.now)
                == .refused("no Stripe-Signature header"))
    }

    @Test(arguments: [
        "", "t=", "t=abc,v1=00", "t=-5,v1=00", "t=+5,v1=00", "t=1.5,v1=00", "t=99999999999999999999,v1=00",
        "t=1,t=1,v1=00", "v1=00", "t 1,v1=00", "t=1 ,v1=00",
    ])
    func aMalformedTimestampIsRefused(_ header: String) {
        #expect(
            Self.refusal(Self.outcome(header: header, body: Self.body, secrets: [Self.secret], nowSeconds: Self.now))?
                .hasPrefix("bad timestamp") == true)
    }

    @Test(arguments: ["t=1782864000", "t=1782864000,", "t=1782864000,v1", "t=1782864000,V1=00"])
    func aHeaderWithoutV1IsRefused(_ header: String) {
        #expect(
            Self.outcome(header: header, body: Self.body, secrets: [Self.secret], nowSeconds: Self.now)
                == .refused("no signature with scheme v1"))
    }

    @Test func anEmptyV1MatchesNothing() {
        #expect(
            Self.outcome(header: "t=\(Self.now),v1=", body: Self.body, secrets: [Self.secret], nowSeconds: Self.now)
                == .refused("no signature matches the payload"))
    }

    @Test func noSecretsIsItsOwnRefusal() {
        #expect(
            Self.outcome(header: Self.header(), body: Self.body, secrets: [], nowSeconds: Self.now)
                == .refused("no webhook secret to check against"))
    }

    @Test func noRefusalNamesTheSecret() {
        let headers: [String?] = [nil, "", "t=1", "t=\(Self.now),v1=00", Self.header(timestamp: Self.now - 1000)]
        for header in headers {
            guard case .refused(let rule) = Self.outcome(header: header, body: Self.body, secrets: [Self.secret], nowSeconds: Self.now)
            else {
                Issue.record("\(String(describing: header)) passed")
                continue
            }
            #expect(!rule.contains("whsec"))
        }
    }
}
