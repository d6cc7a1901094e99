import GatehouseAppStore
import GatehouseWire
import Testing

/// `decodeNotification(signedPayloadBody:)`: the body Apple posts, the outer JWS and the nested
/// signed transaction and renewal info, each verified at its own signedDate.
@Suite struct NotificationBodies {
    let chain: AppStoreTestChain
    let verifier: AppStoreVerifier
    let app = AppStoreAppIdentity(bundleID: "com.example", environment: "sandbox", appAppleID: 41234)

    init() throws {
        chain = try AppStoreTestChain(options: .init(validFrom: Instant.year2020, validUntil: Instant.year2030))
        verifier = try GatehouseAppStoreTests.verifier(trusting: chain)
    }

    func transactionPayload(signedDate: Int64 = Instant.year2025, bundleId: String = "com.example") -> JSONObject {
        [
            "transactionId": "2000", "originalTransactionId": "1000", "bundleId": .string(bundleId),
            "productId": "pro.monthly", "purchaseDate": .int(Instant.year2025),
            "expiresDate": .int(Instant.year2025 + 2_592_000_000),
            "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED", "environment": "Sandbox",
            "signedDate": .int(signedDate), "transactionReason": "RENEWAL",
        ]
    }

    func renewalPayload(signedDate: Int64 = Instant.year2025) -> JSONObject {
        [
            "originalTransactionId": "1000", "autoRenewProductId": "pro.monthly", "productId": "pro.monthly",
            "autoRenewStatus": 1, "environment": "Sandbox", "signedDate": .int(signedDate),
        ]
    }

    func notification(transaction: String?, renewal: String?, bundleId: String = "com.example") -> String {
        var data: JSONObject = [
            "appAppleId": 41234, "bundleId": .string(bundleId), "environment": "Sandbox", "status": 1,
        ]
        if let transaction { data["signedTransactionInfo"] = .string(transaction) }
        if let renewal { data["signedRenewalInfo"] = .string(renewal) }
        return chain.sign(payload: [
            "notificationType": "DID_RENEW", "notificationUUID": "6f7e4d1e-0000-4000-8000-000000000001",
            "version": "2.0",
            "signedDate": .int(Instant.year2025), "data": .object(data),
        ])
    }

    func body(_ jws: String) -> [UInt8] {
        JSONWriter.serialize(["signedPayload": .string(jws)])
    }

    @Test func decodesEverythingItCarries() throws {
        let jws = notification(
            transaction: chain.sign(payload: transactionPayload()), renewal: chain.sign(payload: renewalPayload()))
        let decoded = try verifier.decodeNotification(signedPayloadBody: body(jws), for: app)
        #expect(decoded.notification.notificationType == .didRenew)
        #expect(decoded.signedPayload == jws)
        #expect(decoded.transaction?.transactionId == "2000")
        #expect(decoded.transaction?.transactionReason == .renewal)
        #expect(decoded.renewalInfo?.autoRenewStatus == 1)
        #expect(decoded.transaction == (try AppStoreTransaction(verifiedPayload: transactionPayload())))
    }

    @Test func acceptsTheBareJWSAndAStringBody() throws {
        let jws = notification(transaction: chain.sign(payload: transactionPayload()), renewal: nil)
        let fromBody = try verifier.decodeNotification(signedPayloadBody: body(jws))
        let bare = try verifier.decodeNotification(signedPayloadBody: Array(jws.utf8))
        let padded = try verifier.decodeNotification(signedPayloadBody: "\n " + jws + "\r\n")
        let pretty = try verifier.decodeNotification(signedPayloadBody: "{\n  \"signedPayload\" : \"\(jws)\"\n}\n")
        #expect(fromBody == bare && bare == padded && padded == pretty)
        #expect(fromBody.renewalInfo == nil)
    }

    @Test func notificationWithoutNestedDataDecodes() throws {
        let decoded = try testCAVerifier().decodeNotification(signedPayloadBody: Vectors.mock("testNotification.jws"))
        #expect(decoded.notification.notificationType == .test)
        #expect(decoded.transaction == nil && decoded.renewalInfo == nil)
    }

    @Test func nestedDataIsVerifiedAtItsOwnSignedDate() throws {
        // The outer JWS is signed in 2025, within the chain's validity; the transaction claims 2031.
        let late = chain.sign(payload: transactionPayload(signedDate: Instant.year2031))
        expectInvalidSignature(reason: "certificate") {
            try verifier.decodeNotification(signedPayloadBody: body(notification(transaction: late, renewal: nil)))
        }
        let lateRenewal = chain.sign(payload: renewalPayload(signedDate: Instant.year2031))
        expectInvalidSignature(reason: "certificate") {
            try verifier.decodeNotification(
                signedPayloadBody: body(notification(transaction: nil, renewal: lateRenewal)))
        }
    }

    @Test func nestedDataFromAnUntrustedChainIsRefused() throws {
        let stranger = try AppStoreTestChain()
        let forged = stranger.sign(payload: transactionPayload())
        expectInvalidSignature {
            try verifier.decodeNotification(signedPayloadBody: body(notification(transaction: forged, renewal: nil)))
        }
        expectInvalidSignature {
            try verifier.decodeNotification(signedPayloadBody: body(notification(transaction: nil, renewal: "a.b.c")))
        }
    }

    @Test func invalidSignatureWinsOverWrongApp() throws {
        // Outer notification for the wrong bundle and a forged nested transaction: the forgery is reported.
        let forged = try AppStoreTestChain().sign(payload: transactionPayload())
        let jws = notification(transaction: forged, renewal: nil, bundleId: "com.other")
        expectInvalidSignature {
            try verifier.decodeNotification(signedPayloadBody: body(jws), for: app)
        }
        // A forged outer notification for the wrong bundle is a forgery too.
        let stranger = try AppStoreTestChain()
        let forgedOuter = stranger.sign(payload: [
            "notificationType": "TEST", "notificationUUID": "u", "data": ["bundleId": "com.other"],
        ])
        expectInvalidSignature {
            try verifier.decodeNotification(signedPayloadBody: body(forgedOuter), for: app)
        }
    }

    @Test func wrongAppAnywhereInTheNotification() throws {
        let ok = chain.sign(payload: transactionPayload())
        expectWrongApp(reason: "com.other") {
            try verifier.decodeNotification(
                signedPayloadBody: body(notification(transaction: ok, renewal: nil, bundleId: "com.other")), for: app)
        }
        let otherBundle = chain.sign(payload: transactionPayload(bundleId: "com.other"))
        expectWrongApp(reason: "com.other") {
            try verifier.decodeNotification(
                signedPayloadBody: body(notification(transaction: otherBundle, renewal: nil)), for: app)
        }
        let production = AppStoreAppIdentity(bundleID: "com.example", environment: "production", appAppleID: 41234)
        expectWrongApp(reason: "environment") {
            try verifier.decodeNotification(
                signedPayloadBody: body(notification(transaction: ok, renewal: nil)), for: production)
        }
    }

    @Test func malformedBodies() throws {
        let jws = notification(transaction: nil, renewal: nil)
        let bodies: [[UInt8]] = [
            [], Array("{}".utf8), Array("{\"signedPayload\":1}".utf8), Array("{\"signedPayload\":\"\(jws)\"".utf8),
            Array("[\"\(jws)\"]".utf8), Array("{\"payload\":\"\(jws)\"}".utf8),
            Array(repeating: UInt8(ascii: " "), count: AppStoreVerifier.signedPayloadBodyBytesMax + 1),
        ]
        for body in bodies {
            expectInvalidSignature { try verifier.decodeNotification(signedPayloadBody: body) }
        }
    }
}
