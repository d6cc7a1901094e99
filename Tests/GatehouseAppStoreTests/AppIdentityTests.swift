import GatehouseAppStore
import GatehouseWire
import Testing

/// Apple's claim checks (bundle id, App Apple ID in production, environment) on verified data.
@Suite struct AppIdentityChecksOnAppleVectors {
    let sandbox = AppStoreAppIdentity(bundleID: "com.example", environment: "sandbox", appAppleID: 1234)
    let production = AppStoreAppIdentity(bundleID: "com.example", environment: "production", appAppleID: 1234)

    @Test func sandboxAppAcceptsTheSandboxVectors() throws {
        let verifier = try testCAVerifier()
        try sandbox.check(verifier.verifyNotification(jws: Vectors.mock("testNotification.jws")))
        try sandbox.check(verifier.verifyTransaction(jws: Vectors.mock("transactionInfo.jws")))
        try sandbox.check(verifier.verifyRenewalInfo(jws: Vectors.mock("renewalInfo.jws")))
    }

    @Test func environmentIsComparedIgnoringCase() throws {
        let notification = try testCAVerifier().verifyNotification(jws: Vectors.mock("testNotification.jws"))
        try AppStoreAppIdentity(bundleID: "com.example", environment: "SANDBOX").check(notification)
        try AppStoreAppIdentity(bundleID: "com.example", environment: "Sandbox").check(notification)
    }

    @Test func productionAppRejectsSandboxData() throws {
        let verifier = try testCAVerifier()
        let notification = try verifier.verifyNotification(jws: Vectors.mock("testNotification.jws"))
        let transaction = try verifier.verifyTransaction(jws: Vectors.mock("transactionInfo.jws"))
        let renewalInfo = try verifier.verifyRenewalInfo(jws: Vectors.mock("renewalInfo.jws"))
        expectWrongApp(reason: "environment") { try production.check(notification) }
        expectWrongApp(reason: "environment") { try production.check(transaction) }
        expectWrongApp(reason: "environment") { try production.check(renewalInfo) }
    }

    @Test func productionChecksTheAppAppleIDBeforeTheEnvironment() throws {
        let notification = try testCAVerifier().verifyNotification(jws: Vectors.mock("testNotification.jws"))
        let otherID = AppStoreAppIdentity(bundleID: "com.example", environment: "production", appAppleID: 1235)
        expectWrongApp(reason: "App Apple ID") { try otherID.check(notification) }
        // In sandbox the App Apple ID is not compared.
        try AppStoreAppIdentity(bundleID: "com.example", environment: "sandbox", appAppleID: 1235).check(notification)
    }

    @Test func wrongBundleNotificationVerifiesButIsForAnotherApp() throws {
        let notification = try testCAVerifier().verifyNotification(jws: Vectors.mock("wrongBundleId.jws"))
        #expect(notification.data?.bundleId == "com.example.wrong")
        expectWrongApp(reason: "com.example.wrong") { try sandbox.check(notification) }
    }

    @Test func transactionForAnotherBundle() throws {
        let transaction = try testCAVerifier().verifyTransaction(jws: Vectors.mock("transactionInfo.jws"))
        let other = AppStoreAppIdentity(bundleID: "com.example.x", environment: "sandbox")
        expectWrongApp(reason: "bundle") { try other.check(transaction) }
    }

    @Test func renewalInfoNamesNoBundle() throws {
        let renewalInfo = try testCAVerifier().verifyRenewalInfo(jws: Vectors.mock("renewalInfo.jws"))
        try AppStoreAppIdentity(bundleID: "com.example.x", environment: "sandbox").check(renewalInfo)
    }
}

/// Where a notification's app comes from: `data`, `summary`, `externalPurchaseToken`, `appData`.
@Suite struct AppIdentityOfEveryNotificationShape {
    func notification(_ name: String) throws -> AppStoreNotification {
        try AppStoreNotification(verifiedPayload: Vectors.model(name))
    }

    @Test func summaryCarriesTheApp() throws {
        let summary = try notification("signedSummaryNotification.json")
        try AppStoreAppIdentity(bundleID: "com.example", environment: "localtesting").check(summary)
        expectWrongApp {
            try AppStoreAppIdentity(bundleID: "com.example", environment: "sandbox").check(summary)
        }
    }

    @Test func externalPurchaseTokenEnvironmentComesFromItsId() throws {
        let production = try notification("signedExternalPurchaseTokenNotification.json")
        let sandbox = try notification("signedExternalPurchaseTokenSandboxNotification.json")
        try AppStoreAppIdentity(bundleID: "com.example", environment: "production", appAppleID: 55555).check(production)
        try AppStoreAppIdentity(bundleID: "com.example", environment: "sandbox").check(sandbox)
        expectWrongApp {
            try AppStoreAppIdentity(bundleID: "com.example", environment: "sandbox").check(production)
        }
        expectWrongApp(reason: "App Apple ID") {
            try AppStoreAppIdentity(bundleID: "com.example", environment: "production", appAppleID: 1).check(production)
        }
    }

    @Test func appDataCarriesTheApp() throws {
        let payload: JSONObject = [
            "notificationType": "RESCIND_CONSENT", "notificationUUID": "u",
            "appData": ["appAppleId": 7, "bundleId": "com.example", "environment": "Production"],
        ]
        let rescind = try AppStoreNotification(verifiedPayload: payload)
        try AppStoreAppIdentity(bundleID: "com.example", environment: "production", appAppleID: 7).check(rescind)
    }

    @Test func notificationWithoutAnyAppIsForNoApp() throws {
        let bare = try AppStoreNotification(verifiedPayload: ["notificationType": "TEST", "notificationUUID": "u"])
        expectWrongApp {
            try AppStoreAppIdentity(bundleID: "com.example", environment: "sandbox").check(bare)
        }
    }

    @Test func productionWithoutConfiguredAppAppleIDChecksOnlyBundleAndEnvironment() throws {
        let production = try notification("signedExternalPurchaseTokenNotification.json")
        try AppStoreAppIdentity(bundleID: "com.example", environment: "production").check(production)
    }
}
