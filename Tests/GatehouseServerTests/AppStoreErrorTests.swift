import Foundation
import GatehouseAppStore
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// App Store data that must be refused, and refused without a trace: anything that does not
/// verify against the configured roots is `invalid_signature`, genuine data for another app or
/// environment is `wrong_app`, a project without `stores.app_store` answers `bad_request`
/// (PROTOCOL.md, "Error codes"; DESIGN.md, "Reliability and security").
@Suite struct AppStoreErrors {
    typealias A = AppStoreFixture
    static let day = A.day

    /// A profile owning a subscription (`7000000001`) reported by a signed transaction.
    static func scene(_ a: A) async throws -> PurchaseErrors.Scene {
        let owner = try await a.f.create("owner")
        let answer = try await a.report(owner.id, a.sign(a.transaction("7000000001", token: owner.token)))
        #expect(answer.isSuccess, "\(answer)")
        return PurchaseErrors.Scene(f: a.f, owner: owner)
    }

    static func expect(
        _ answer: JSONObject, _ code: ErrorCode, naming text: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(answer.errorCode == code, "\(answer)", sourceLocation: sourceLocation)
        if let text {
            let message = answer.object("error")?.string("message") ?? ""
            #expect(message.contains(text), "the message names \(text): \(message)", sourceLocation: sourceLocation)
        }
    }

    /// Sends `jws` as a report, a one-item restore and a notification; each must fail with `code`.
    static func expectRefusedEverywhere(_ a: A, _ scene: PurchaseErrors.Scene, transaction jws: String, notification: String,
                                        _ code: ErrorCode, sourceLocation: SourceLocation = #_sourceLocation) async throws
    {
        expect(try await a.report(scene.owner.id, jws), code, sourceLocation: sourceLocation)
        expect(try await a.report(scene.owner.id, jws, via: a.f.sdk), code, sourceLocation: sourceLocation)
        expect(try await a.restore(scene.owner.id, [jws]), code, sourceLocation: sourceLocation)
        expect(try await a.notify(notification), code, sourceLocation: sourceLocation)
    }

    // MARK: invalid_signature

    @Test func garbageIsInvalidSignature() async throws {
        try await A.run { a in
            let scene = try await Self.scene(a)
            let legacy = "ewoicHVyY2hhc2UtaW5mbyIgPSAiZXdvaWRISmhibk5oWTNScGIyNHRhV1FpSUQwZ0lqTXpPVGt6TXprNUlqc0tmUW89IjsKfQo="
            try await PurchaseErrors.changesNothing(scene) {
                for garbage in ["", "a.b.c", "a.b.c.d", "not a jws", legacy, "{}", #"{"signedPayload":5}"#] {
                    try await Self.expectRefusedEverywhere(a, scene, transaction: garbage, notification: garbage, .invalidSignature)
                }
            }
        }
    }

    @Test func aTamperedPayloadOrSignatureIsInvalidSignature() async throws {
        try await A.run { a in
            let scene = try await Self.scene(a)
            let genuine = a.sign(a.transaction("7000000002", token: scene.owner.token))
            let parts = genuine.split(separator: ".").map(String.init)
            // The payload of another, cheaper transaction under the genuine signature.
            let forged = a.sign(a.transaction("7000000002", token: scene.owner.token, price: 1)).split(separator: ".")[1]
            let swapped = [parts[0], String(forged), parts[2]].joined(separator: ".")
            var signature = Array(parts[2])
            signature[10] = signature[10] == "A" ? "B" : "A"
            let badSignature = [parts[0], parts[1], String(signature)].joined(separator: ".")
            let notification = a.notification("n1", "SUBSCRIBED", "INITIAL_BUY", transaction: a.transaction("7000000002"))
            let notificationParts = notification.split(separator: ".").map(String.init)
            let tamperedNotification = [notificationParts[0], parts[1], notificationParts[2]].joined(separator: ".")
            try await PurchaseErrors.changesNothing(scene) {
                for jws in [swapped, badSignature] {
                    try await Self.expectRefusedEverywhere(a, scene, transaction: jws, notification: tamperedNotification,
                                                           .invalidSignature)
                }
            }
        }
    }

    @Test func dataSignedByAChainTheServerDoesNotTrustIsInvalidSignature() async throws {
        try await A.run { a in
            let scene = try await Self.scene(a)
            let stranger = A(f: a.f, chain: try AppStoreTestChain())
            let transaction = stranger.sign(a.transaction("7000000003", token: scene.owner.token))
            let notification = stranger.notification("n1", "SUBSCRIBED", "INITIAL_BUY", transaction: a.transaction("7000000003"))
            // A trusted notification carrying a transaction signed by the stranger.
            var data: JSONObject = ["bundleId": .string(A.bundleID), "environment": "Sandbox", "appAppleId": .int(A.appAppleID)]
            data.append("signedTransactionInfo", .string(transaction))
            let nested = a.sign(["notificationType": "DID_RENEW", "notificationUUID": "n2", "signedDate": .int(a.startMs),
                                 "data": .object(data)])
            // The stranger's chain with the server's root in the x5c: the path still fails.
            let mixed = stranger.chain.sign(payload: a.transaction("7000000004"),
                                            certificates: [stranger.chain.leafDER, stranger.chain.intermediateDER, a.chain.rootDER])
            try await PurchaseErrors.changesNothing(scene) {
                try await Self.expectRefusedEverywhere(a, scene, transaction: transaction, notification: notification, .invalidSignature)
                try await Self.expectRefusedEverywhere(a, scene, transaction: mixed, notification: nested, .invalidSignature)
            }
        }
    }

    @Test func theBuiltInAppleRootRefusesTestChains() async throws {
        let chain = try AppStoreTestChain()
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await StoreFixture.make(server)
            try await f.putConfig(A.config())
            let a = A(f: f, chain: chain)
            let owner = try await f.create()
            Self.expect(try await a.report(owner.id, a.sign(a.transaction("7000000005"))), .invalidSignature)
            Self.expect(try await a.notify(a.notification("n1", "TEST")), .invalidSignature)
        }
    }

    // MARK: wrong_app

    @Test func genuineDataForAnotherBundleOrEnvironmentIsWrongApp() async throws {
        try await A.run { a in
            let scene = try await Self.scene(a)
            let cases: [(transaction: JSONObject, notification: String)] = [
                (a.transaction("7000000006", bundle: "com.example.other"),
                 a.notification("n1", "SUBSCRIBED", "INITIAL_BUY", transaction: a.transaction("7000000006"), bundle: "com.example.other")),
                (a.transaction("7000000007", environment: "Production"),
                 a.notification("n2", "SUBSCRIBED", "INITIAL_BUY", transaction: a.transaction("7000000007"), environment: "Production")),
                (a.transaction("7000000008", environment: "Xcode"),
                 a.notification("n3", "SUBSCRIBED", "INITIAL_BUY", transaction: a.transaction("7000000008", bundle: "com.example.other"))),
            ]
            try await PurchaseErrors.changesNothing(scene) {
                for (transaction, notification) in cases {
                    try await Self.expectRefusedEverywhere(a, scene, transaction: a.sign(transaction), notification: notification, .wrongApp)
                }
            }
            // A refusal does not use up the notification id.
            try await a.notifyApplied(a.notification("n1", "SUBSCRIBED", "INITIAL_BUY", transaction: a.transaction("7000000006")))
        }
    }

    @Test func productionChecksTheAppAppleID() async throws {
        try await A.run(environment: "production") { a in
            let owner = try await a.f.create()
            let production = a.transaction("7000000009", token: owner.token, environment: "Production")
            var data: JSONObject = ["bundleId": .string(A.bundleID), "environment": "Production", "appAppleId": 9999]
            data.append("signedTransactionInfo", .string(a.sign(production)))
            let otherApp = a.sign(["notificationType": "SUBSCRIBED", "subtype": "INITIAL_BUY", "notificationUUID": "n1",
                                   "signedDate": .int(a.startMs), "data": .object(data)])
            Self.expect(try await a.notify(otherApp), .wrongApp, naming: "App Apple ID")
            try await a.notifyApplied(a.notification("n1", "SUBSCRIBED", "INITIAL_BUY", transaction: production, environment: "Production"))
            #expect(try await a.subscription(owner.id, "7000000009")?.string("environment") == "production")
        }
    }

    // MARK: bad_request

    @Test func anAppStoreTheProjectHasNotEnabledIsBadRequest() async throws {
        try await A.run { a in
            let scene = try await Self.scene(a)
            try await a.f.putConfig(A.config(appStore: false))
            let valid = a.sign(a.transaction("7000000010", token: scene.owner.token))
            let notification = a.notification("n1", "SUBSCRIBED", "INITIAL_BUY", transaction: a.transaction("7000000010"))
            try await PurchaseErrors.changesNothing(scene) {
                for (jws, signed) in [(valid, notification), ("garbage", "garbage")] {
                    Self.expect(try await a.report(scene.owner.id, jws), .badRequest, naming: "store")
                    Self.expect(try await a.restore(scene.owner.id, [jws]), .badRequest, naming: "store")
                    Self.expect(try await a.notify(signed), .badRequest, naming: "store")
                }
                // Whatever else is missing, the store is named first.
                let bare = try await a.f.backend.call("purchase.report", ["profile_id": .string(scene.owner.id), "store": "app_store"])
                Self.expect(bare, .badRequest, naming: "store")
            }
            try await a.f.putConfig(A.config())
            try await a.notifyApplied(notification)
        }
    }

    @Test func missingOrMistypedSignedFieldsAreBadRequestNamingThem() async throws {
        try await A.run { a in
            let scene = try await Self.scene(a)
            let backend = a.f.backend
            let id = JSONValue.string(scene.owner.id)
            try await PurchaseErrors.changesNothing(scene) {
                Self.expect(try await backend.call("purchase.report", ["profile_id": id, "store": "app_store"]),
                            .badRequest, naming: "signed_transaction")
                Self.expect(try await backend.call("purchase.report", ["profile_id": id, "store": "app_store", "signed_transaction": 5]),
                            .badRequest, naming: "signed_transaction")
                Self.expect(try await backend.call("purchase.report", [
                    "profile_id": id, "store": "app_store", "transaction": ["transaction_id": "t1"],
                ]), .badRequest, naming: "signed_transaction")
                Self.expect(try await backend.call("purchase.restore", ["profile_id": id, "store": "app_store", "signed_transactions": "x"]),
                            .badRequest, naming: "signed_transactions")
                Self.expect(try await backend.call("purchase.restore", ["profile_id": id, "store": "app_store", "signed_transactions": [5]]),
                            .badRequest, naming: "signed_transactions")
                Self.expect(try await backend.call("store.notify", ["store": "app_store"]), .badRequest, naming: "signed_payload")
                Self.expect(try await backend.call("store.notify", ["store": "app_store", "signed_payload": 5]),
                            .badRequest, naming: "signed_payload")
                Self.expect(try await backend.call("store.notify", ["store": "app_store", "signed_payload": ["nope": 1]]),
                            .badRequest, naming: "signed_payload.signedPayload")
                // A genuine subscription transaction without its expiry cannot be taken.
                var noExpiry = a.transaction("7000000011")
                noExpiry["expiresDate"] = nil
                Self.expect(try await a.report(scene.owner.id, a.sign(noExpiry)), .badRequest, naming: "expiresDate")
            }
        }
    }

    @Test func aRestoreWithOneBadTransactionIsRefusedAsAWhole() async throws {
        try await A.run { a in
            let scene = try await Self.scene(a)
            let good = a.sign(a.transaction("7000000012"))
            let other = a.sign(a.transaction("7000000013", bundle: "com.example.other"))
            try await PurchaseErrors.changesNothing(scene) {
                Self.expect(try await a.restore(scene.owner.id, [good, "a.b.c"]), .invalidSignature)
                Self.expect(try await a.restore(scene.owner.id, [good, other]), .wrongApp)
            }
        }
    }

    // MARK: Apple's own test vectors

    /// `testNotification.jws` of Apple's App Store Server Library: a `TEST` notification for
    /// bundle `com.example` in Sandbox, signed by Apple's test CA.
    @Test(arguments: [("sandbox", true), ("production", false)])
    func applesTestNotificationVerifiesAgainstItsTestCA(_ environment: String, _ accepted: Bool) async throws {
        let library = Self.vectors.appendingPathComponent("apple-app-store-server-library")
        let testCA = try #require(FileManager.default.contents(atPath: library.appendingPathComponent("certs/testCA.der").path))
        let body = try #require(FileManager.default.contents(
            atPath: library.appendingPathComponent("mock_signed_data/testNotification.jws").path))
        let jws = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        try await withTestServer({
            $0.testClock = true
            $0.appStoreRootCertificates = [[UInt8](testCA)]
        }) { server in
            let f = try await StoreFixture.make(server)
            try await f.putConfig(A.config(environment: environment, bundleID: "com.example"))
            let answer = try await f.backend.call("store.notify", ["store": "app_store", "signed_payload": .string(jws)])
            if accepted {
                #expect(answer["applied"] == true, "\(answer)")
                #expect(answer["profile_id"] == .null)
                let again = try await f.backend.call("store.notify", ["store": "app_store", "signed_payload": .string(jws)])
                #expect(again["applied"] == false)
            } else {
                Self.expect(answer, .wrongApp, naming: "environment")
            }
        }
    }

    /// The App Store test vectors (`Tests/Fixtures/vectors`), found from this file's path.
    static let vectors = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/vectors")
}
