import GatehouseCore
import GatehouseHTTP
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// `POST /v1/receipts` (HTTP.md, "Endpoints"): a StoreKit 2 signed transaction, signed here by
/// the test chain, runs `purchase.report`, or `purchase.restore` for a restore; errors in
/// RevenueCat's codes, 4xx where the SDK should finish the transaction.
@Suite struct RevenueCatReceipt {
    typealias R = RevenueCatFixture

    @Test func aPurchaseIsReportedAndTheAnswerIsTheSubscriberObject() async throws {
        try await R.run { r throws in
            let install = R.installID(1)
            let answer = try await r.receipt(install, r.signedTransaction("7000000001"))
            #expect(answer.status == 200)
            let subscriber = try #require(answer.subscriber)
            #expect(subscriber.object("subscriptions")?.object("pro_monthly")?.string("store_transaction_id") == "7000000001")
            #expect(R.isDate(answer.body["request_date"]))
            #expect(answer.etag == nil, "a POST is never revalidated")
            #expect(try await r.a.balance(try #require(r.profile(install).object("profile")?.string("profile_id"))) == 100)
        }
    }

    @Test(arguments: [false, true])
    func aRestoreByAnotherProfileMovesThePurchaseUnderTransfer(initiationSource: Bool) async throws {
        try await R.run { r throws in
            let token = r.signedTransaction("7000000001")
            #expect(try await r.receipt("u1", token).status == 200)
            let extra: JSONObject = initiationSource ? ["initiation_source": "restore"] : ["is_restore": true]
            let restored = try await r.receipt("u2", token, restore: !initiationSource, extra: extra)
            #expect(restored.status == 200)
            #expect(restored.subscriber?.object("entitlements")?.object("pro") != nil)
            // It moved: u1 still lists the entitlement it once had, lapsed before the request.
            let before = try await r.subscriber("u1")
            let lapsed = try #require(before.subscriber?.object("entitlements")?.object("pro")?.string("expires_date"))
            #expect(lapsed < (before.body.string("request_date") ?? ""))
        }
    }

    @Test func underKeepAReportIs7102AndARestoreIs200LeavingThePurchaseWhereItIs() async throws {
        try await R.run(restore: "keep") { r throws in
            let token = r.signedTransaction("7000000001")
            #expect(try await r.receipt("u1", token).status == 200)
            let reported = try await r.receipt("u2", token)
            #expect(reported.status == 400 && reported.code == 7102)
            let restored = try await r.receipt("u2", token, restore: true)
            #expect(restored.status == 200)
            #expect(restored.subscriber?.object("subscriptions") == [:], "the restorer's object, without it")
            #expect(try await r.subscriber("u1").subscriber?.object("subscriptions")?.object("pro_monthly") != nil)
        }
    }

    @Test func underTransferIfNoActiveAnActiveOwnerKeepsIt() async throws {
        try await R.run(restore: "transfer_if_no_active") { r throws in
            let token = r.signedTransaction("7000000001")
            #expect(try await r.receipt("u1", token).status == 200)
            let restored = try await r.receipt("u2", token, restore: true)
            #expect(restored.status == 200)
            #expect(restored.subscriber?.object("subscriptions") == [:])
            #expect(try await r.subscriber("u1").subscriber?.object("entitlements")?.object("pro") != nil)
        }
    }

    @Test func anotherAppsOrATamperedTransactionIs7103AndChangesNothing() async throws {
        try await R.run { r throws in
            let other = r.signedTransaction("7000000001", bundle: "com.other.app")
            let wrongApp = try await r.receipt("u1", other)
            #expect(wrongApp.status == 400 && wrongApp.code == 7103)
            var parts = r.signedTransaction("7000000002").split(separator: ".").map(String.init)
            parts[1] = String(r.signedTransaction("7000000003", product: "pro_yearly").split(separator: ".")[1])
            let tampered = try await r.receipt("u1", parts.joined(separator: "."))
            #expect(tampered.status == 400 && tampered.code == 7103)
            #expect(try await r.subscriber("u1").subscriber?.object("subscriptions") == [:])
            #expect(try await r.a.eventTypes(after: 0) == [])
        }
    }

    @Test func aStoreKit1ReceiptIs7103SayingSo() async throws {
        try await R.run { r throws in
            let answer = try await r.receipt("u1", "MIIT0QYJKoZIhvcNAQcCoIITwjCCE74CAQExCzAJBgUrDgMCGgUAMIIDcgYJKoZIhvcNAQcBoIIDYwSCA18x")
            #expect(answer.status == 400 && answer.code == 7103)
            #expect(answer.body.string("message")?.contains("StoreKit 1") == true)
            #expect(try await r.profileCount() == 0, "refused before any profile was made")
        }
    }

    @Test func anotherPlatformOrAStoreNotEnabledIs7000() async throws {
        try await R.run { r throws in
            let android = try await r.receipt("u1", r.signedTransaction("7000000001"), key: r.googleKey, platform: "android")
            #expect(android.status == 400 && android.code == 7000)
            try await r.a.f.putConfig(R.A.config(appStore: false))
            let disabled = try await r.receipt("u1", r.signedTransaction("7000000001"))
            #expect(disabled.status == 400 && disabled.code == 7000)
        }
    }

    @Test func aMissingFetchTokenIs400() async throws {
        try await R.run { r throws in
            let answer = try await r.post("/v1/receipts", ["app_user_id": "u1"])
            #expect(answer.status == 400 && answer.code == 7110)
            #expect(answer.body.string("message")?.contains("fetch_token") == true)
        }
    }
}

/// A StoreKit 2 restore posted to `/v1/receipts` is a `purchase.restore`: with the project's In-App
/// Purchase key, the rest of the customer's history is asked of (a local fake of) Apple.
@Suite struct RevenueCatRestoreAsksApple {
    @Test func aRestoreOfOneSignedTransactionLearnsTheRestFromApple() async throws {
        try await AppleFixture.run { apple throws in
            let a = apple.a
            let s = a.startMs
            let signed = apple.history([
                a.transaction("3000000001", purchasedMs: s, expiresMs: s + 30 * StoreFixture.day),
                a.transaction("3000000004", product: "lifetime", type: "Non-Consumable", price: 29_990),
            ])
            let client = try HTTPListener.connect(a.server)
            let random = a.f.keys.publicKey.dropFirst("pk_acme_".count)
            let body = JSONWriter.serialize([
                "app_user_id": .string(RevenueCatFixture.installID(9)), "fetch_token": .string(signed[0]), "is_restore": true,
            ])
            let response = try await client.request(
                "POST", "/v1/receipts", headers: [("Authorization", "Bearer appl_acme_\(random)"), ("X-Platform", "iOS")], body: body)
            #expect(response.status == 200)
            let subscriber = try #require(try HTTPListener.json(response).object("subscriber"))
            #expect(subscriber.object("subscriptions")?.object("pro_monthly") != nil, "the posted one")
            #expect(subscriber.object("non_subscriptions")?["lifetime"] != nil, "the one Apple told of")
            #expect(apple.fake.seen.map(\.path) == ["/inApps/v2/history/3000000001"])
        }
    }
}
