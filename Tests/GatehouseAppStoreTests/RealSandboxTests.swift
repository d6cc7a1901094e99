import GatehouseAppStore
import GatehouseWire
import Testing

/// Notifications and transactions Apple really signed in its sandbox verify under the
/// built-in Apple Root CA - G3 at their signedDate (the clock is set far away to prove it).
@Suite struct RealSandboxDataVerifiesUnderAppleRoot {
    let verifier = AppStoreVerifier(currentTimeMilliseconds: { Instant.year2034 })
    let directory = "apple-real-sandbox"

    @Test func testNotificationBody() throws {
        let body = try Vectors.bytes("\(directory)/imdhemy-appstore-iap/test-notification-signed-payload.json")
        let decoded = try verifier.decodeNotification(signedPayloadBody: body)
        let notification = decoded.notification
        #expect(notification.notificationType == .test)
        #expect(notification.notificationUUID == "5e09dcfc-205e-4ea1-9883-96676f394992")
        #expect(notification.version == "2.0")
        #expect(notification.signedDate == 1_662_122_492_884)
        #expect(notification.data?.bundleId == "com.Abilities")
        #expect(notification.data?.environment == .sandbox)
        try AppStoreAppIdentity(bundleID: "com.Abilities", environment: "sandbox").check(decoded)
        expectWrongApp {
            try AppStoreAppIdentity(bundleID: "com.abilities", environment: "sandbox").check(decoded)
        }
        let payload = try Vectors.json("\(directory)/imdhemy-appstore-iap/decoded/test-notification.payload.json")
        #expect(try verifier.verify(jws: decoded.signedPayload).payload == payload)
    }

    @Test func signedTransaction() throws {
        let jws = try Vectors.text("\(directory)/mingos-app_store_server_api/sandbox-signed-transaction.jws")
        let transaction = try verifier.verifyTransaction(jws: jws)
        #expect(transaction.transactionId == "2000000847061981")
        #expect(transaction.originalTransactionId == "2000000847061981")
        #expect(transaction.bundleId == "com.goodheartapp")
        #expect(transaction.productId == "gh_super_good_ticket_1")
        #expect(transaction.purchaseDate == 1_738_645_560_000)
        #expect(transaction.type == .consumable)
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(transaction.signedDate == 1_739_161_772_561)
        #expect(transaction.environment == .sandbox)
        #expect(transaction.transactionReason == .purchase)
        #expect(transaction.storefront == "JPN")
        #expect(transaction.price == 230_000)
        #expect(transaction.currency == "JPY")
        #expect(transaction.expiresDate == nil)
        try AppStoreAppIdentity(bundleID: "com.goodheartapp", environment: "sandbox").check(transaction)
    }

    @Test func realDataIsNotTrustedUnderTheTestRoot() throws {
        let jws = try Vectors.text("\(directory)/mingos-app_store_server_api/sandbox-signed-transaction.jws")
        expectInvalidSignature(reason: "certificate chain") {
            try testCAVerifier().verify(jws: jws)
        }
    }

    @Test func tamperedRealData() throws {
        let jws = try Vectors.text("\(directory)/mingos-app_store_server_api/sandbox-signed-transaction.jws")
        for part in 0..<3 {
            expectInvalidSignature { try verifier.verify(jws: tampered(jws, part: part, at: 30)) }
        }
    }
}
