import GatehouseCore
import GatehouseHTTP
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// `GET /v1/subscribers/{id}` (HTTP.md, "Requests", "The subscriber object"): find or create, the
/// subscriber object field by field, keys and ids in every form the SDKs send.
@Suite struct RevenueCatSubscriber {
    typealias R = RevenueCatFixture

    @Test func anInstallIDIsCreatedAnonymousWith201ThenFoundWith200() async throws {
        try await R.run { r throws in
            let install = R.installID(1)
            let created = try await r.subscriber(install)
            #expect(created.status == 201)
            let subscriber = try #require(created.subscriber)
            #expect(subscriber.string("original_app_user_id") == install)
            let again = try await r.subscriber(install)
            #expect(again.status == 200)
            #expect(again.subscriber?.string("original_app_user_id") == install)
            #expect(try await r.profileCount() == 1, "found, not created twice")
            // The line protocol knows the profile by its install id: anonymous, no customer user id.
            let profile = try await r.profile(install)
            #expect(profile.object("profile")?["customer_user_id"] == .null)
            #expect(profile.object("profile")?.string("install_id") == install)
        }
    }

    @Test func aCustomerUserIDIsCreatedIdentifiedWith201ThenFoundWith200() async throws {
        try await R.run { r throws in
            let created = try await r.subscriber("user-42")
            #expect(created.status == 201)
            #expect(created.subscriber?.string("original_app_user_id") == "user-42")
            #expect(try await r.subscriber("user-42").status == 200)
            let line = try await r.a.f.backend.call("profile.get", ["customer_user_id": "user-42"])
            #expect(line.isSuccess)
            #expect(try await r.profileCount() == 1)
        }
    }

    @Test func aProfileIDIsFoundAndAnUnknownOneIs404() async throws {
        try await R.run { r throws in
            let owner = try await r.a.f.create()
            let found = try await r.subscriber(owner.id)
            #expect(found.status == 200)
            #expect(found.subscriber?.string("original_app_user_id") == owner.id, "no install id, no customer user id: the profile id")
            // Another random part under the same project's tag.
            let unknown = "gh_" + (owner.id.dropFirst(3).first == "A" ? "B" : "A") + owner.id.dropFirst(4)
            #expect(ProfileID(parsing: unknown) != nil)
            let missing = try await r.subscriber(unknown)
            #expect(missing.status == 404)
            #expect(missing.code == 7110)
            #expect(try await r.profileCount() == 1, "a profile id is never created")
        }
    }

    @Test func theSubscriberObjectHasEveryFieldOfHTTPmdsTable() async throws {
        try await R.run { r throws in
            let answer = try await r.subscriber(R.installID(2))
            #expect(R.isDate(answer.body["request_date"]))
            #expect(answer.body.int("request_date_ms") == r.a.startMs)
            let subscriber = try #require(answer.subscriber)
            #expect(Set(subscriber.keys) == R.subscriberKeys, "the public key sees no subscriber_attributes")
            #expect(R.isDate(subscriber["first_seen"]) && R.isDate(subscriber["last_seen"]))
            #expect(subscriber["original_purchase_date"] == .null)
            #expect(subscriber["original_application_version"] == .null)
            #expect(subscriber["management_url"] == .null, "never an empty string")
            #expect(subscriber["entitlements"] == .object([:]))
            #expect(subscriber["subscriptions"] == .object([:]), "always an object, even empty")
            #expect(subscriber["non_subscriptions"] == .object([:]))
            #expect(subscriber["other_purchases"] == .object([:]))
            #expect(answer.response.headers["Content-Type"]?.hasPrefix("application/json") == true)
        }
    }

    @Test func aSubscriptionAndItsEntitlementAreShownAsTheSDKDecodesThem() async throws {
        try await R.run { r throws in
            let install = R.installID(3)
            _ = try await r.subscriber(install)
            let purchase = try await r.receipt(install, r.signedTransaction("7000000001"))
            #expect(purchase.status == 200, "\(purchase.body)")
            let subscriber = try #require(try await r.subscriber(install).subscriber)
            let subscription = try #require(subscriber.object("subscriptions")?.object("pro_monthly"))
            for key in ["purchase_date", "original_purchase_date", "expires_date"] {
                #expect(R.isDate(subscription[key]), "\(key)")
            }
            #expect(subscription.string("store") == "app_store")
            #expect(subscription["is_sandbox"] == true)
            #expect(subscription.string("period_type") == "normal")
            #expect(subscription.string("ownership_type") == "PURCHASED")
            #expect(subscription.string("store_transaction_id") == "7000000001")
            for key in ["unsubscribe_detected_at", "billing_issues_detected_at", "grace_period_expires_date", "refunded_at"] {
                #expect(subscription[key] == .null, "\(key)")
            }
            // The model keeps no currency with a term, and both SDKs refuse a price without one.
            #expect(subscription["price"] == .null)
            let entitlement = try #require(subscriber.object("entitlements")?.object("pro"))
            #expect(entitlement.string("product_identifier") == "pro_monthly", "a key of subscriptions")
            #expect(entitlement["expires_date"] == subscription["expires_date"])
            #expect(entitlement["grace_period_expires_date"] == .null)
            #expect(R.isDate(entitlement["purchase_date"]))
            #expect(subscriber.string("management_url") == "https://apps.apple.com/account/subscriptions")
        }
    }

    @Test func aOneTimePurchaseCarriesBothIDs() async throws {
        try await R.run { r throws in
            let install = R.installID(4)
            let lifetime = r.signedTransaction("7000000009", product: "lifetime", type: "Non-Consumable")
            #expect(try await r.receipt(install, lifetime).status == 200)
            let subscriber = try #require(try await r.subscriber(install).subscriber)
            let purchases = try #require(subscriber.object("non_subscriptions")?["lifetime"]?.arrayValue)
            #expect(purchases.count == 1)
            let purchase = try #require(purchases.first?.objectValue)
            #expect(purchase.string("id") == "7000000009")
            #expect(purchase.string("store_transaction_id") == "7000000009")
            #expect(R.isDate(purchase["purchase_date"]) && R.isDate(purchase["original_purchase_date"]))
            #expect(purchase.string("store") == "app_store")
            #expect(purchase["is_sandbox"] == true)
            let entitlement = try #require(subscriber.object("entitlements")?.object("pro"))
            #expect(entitlement.string("product_identifier") == "lifetime")
            #expect(entitlement["expires_date"] == .null, "for life")
            #expect(subscriber["management_url"] == .null, "no active subscription")
        }
    }

    @Test func idsAreReadWhetherIOSOrAndroidEscapedThem() async throws {
        try await R.run { r throws in
            let install = R.installID(5)
            #expect(try await r.get("/v1/subscribers/\(R.iosEscaped(install))").status == 201)
            let android = try await r.get("/v1/subscribers/\(R.androidEscaped(install))", key: r.googleKey)
            #expect(android.status == 200, "the same install id")
            #expect(android.subscriber?.string("original_app_user_id") == install)
            // A slash escaped inside an id belongs to it.
            let slashed = "team/7 user"
            #expect(try await r.get("/v1/subscribers/\(R.androidEscaped(slashed))").status == 201)
            #expect(try await r.get("/v1/subscribers/\(R.iosEscaped(slashed))").subscriber?.string("original_app_user_id") == slashed)
            #expect(try await r.profileCount() == 2)
        }
    }

    @Test func malformedAppUserIDsAre7220Or7256AndCreateNothing() async throws {
        try await R.run { r throws in
            let blank = try await r.get("/v1/subscribers/%20%20")
            #expect(blank.status == 400 && blank.code == 7220)
            let long = try await r.subscriber(String(repeating: "x", count: 256))
            #expect(long.status == 400 && long.code == 7256)
            // Shaped like an install id but not one: a customer user id may not begin so.
            let fake = try await r.subscriber("$RCAnonymousID:NOT-HEX")
            #expect(fake.status == 400 && fake.code == 7256)
            #expect(try await r.profileCount() == 0)
        }
    }

    @Test func keysAreCheckedAsHelloChecksThem() async throws {
        try await R.run { r throws in
            let none = try await r.subscriber("u1", key: .some(nil))
            #expect(none.status == 401 && none.code == 7225)
            #expect(none.response.headers["WWW-Authenticate"] == "Bearer")
            let wrong = try await r.subscriber("u1", key: "appl_acme_" + String(repeating: "x", count: 32))
            #expect(wrong.status == 401 && wrong.code == 7225)
            let admin = try await r.subscriber("u1", key: TestServer.adminKey)
            #expect(admin.status == 403 && admin.code == 7243)
            #expect(try await r.profileCount() == 0, "nothing refused created anything")
            for key in [r.appleKey, r.googleKey, r.a.f.keys.publicKey, r.secretKey] {
                #expect(try await r.subscriber("u1", key: key).status != 401, "\(key.prefix(5))")
            }
        }
    }

    @Test func aKeyRotatedOrAProjectDeletedStopsOnAKeepAliveConnectionAtOnce() async throws {
        // The connection remembers the key it presented last; that must never outlive the key.
        try await R.run { r throws in
            #expect(try await r.subscriber("u1").status == 201)
            #expect(try await r.subscriber("u1").status == 200, "the remembered key")
            let rotated = try await r.a.f.admin.call("project.rotate_keys", ["project": "acme", "which": "public"])
            let apple = try #require(rotated.object("keys")?.string("apple"))
            let stale = try await r.subscriber("u1")
            #expect(stale.status == 401 && stale.code == 7225, "on the same connection")
            #expect(try await r.subscriber("u1", key: apple).status == 200)
            #expect(try await r.a.f.admin.call("project.delete", ["project": "acme"]).isSuccess)
            let gone = try await r.subscriber("u1", key: apple)
            #expect(gone.status == 401 && gone.code == 7225)
        }
    }

    @Test func onlyTheSecretKeySeesAttributesWithTheirTimes() async throws {
        try await R.run { r throws in
            _ = try await r.subscriber("u1")
            let written = try await r.post("/v1/subscribers/u1/attributes", [
                "attributes": ["$email": ["value": "a@example.com", "updated_at_ms": 1_700_000_000_000]],
            ])
            #expect(written.status == 200 && written.body == [:])
            #expect(try await r.subscriber("u1").subscriber?["subscriber_attributes"] == nil)
            let secret = try #require(try await r.subscriber("u1", key: r.secretKey).subscriber)
            #expect(secret["subscriber_attributes"] == [
                "$email": ["value": "a@example.com", "updated_at_ms": 1_700_000_000_000],
            ])
        }
    }

    @Test func unknownPathsUnderV1Are404InRevenueCatsForm() async throws {
        try await R.run { r throws in
            for path in ["/v1/config/app", "/v1/subscribers/u1/nothing", "/v1/product_entitlement_mapping/x"] {
                let answer = try await r.get(path)
                #expect(answer.status == 404, "\(path)")
                #expect(answer.code == 7110 && answer.body.string("message") != nil, "\(path)")
            }
        }
    }

    @Test func theEndpointsTheSDKCallsAndToleratesAnswerAsItExpects() async throws {
        try await R.run { r throws in
            #expect(try await r.get("/v1/health", key: .some(nil)).body == [:])
            let report = try await r.get("/v1/subscribers/u1/health_report_availability", key: .some(nil))
            #expect(report.status == 200 && report.body == ["report_logs": false])
            let events = try await r.post("/v1/events", ["events": [["type": "paywall_impression"]]])
            #expect(events.status == 200 && events.body == [:])
            #expect(try await r.post("/v1/events", [:], key: .some(nil)).code == 7225)
            #expect(try await r.profileCount() == 0)
        }
    }

    @Test func whileReadOnlyAWriteIs529WithRetryAfter() async throws {
        try await DiskFull.run { disk, server in
            let keys = try await server.createProject("acme")
            let client = try HTTPListener.connect(server)
            disk.reportedFreeBytes = 1000
            #expect(try await DiskFull.waitFor(try await server.admin(), readOnly: true))
            let response = try await client.request("GET", "/v1/subscribers/new-user", headers: [("Authorization", "Bearer \(keys.publicKey)")])
            #expect(response.status == 529)
            #expect(response.headers["Retry-After"] == "30")
            #expect(try HTTPListener.json(response).int("code") == 7110)
            disk.reportedFreeBytes = nil
            #expect(try await DiskFull.waitFor(try await server.admin(), readOnly: false))
        }
    }
}
