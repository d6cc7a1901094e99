import GatehouseCore
import GatehouseHTTP
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// The other endpoints of HTTP.md's table: attributes, offerings, the product-entitlement
/// mapping, virtual currencies, intro eligibility, and the secret key's endpoints.
@Suite struct RevenueCatEndpoints {
    typealias R = RevenueCatFixture

    // MARK: Attributes

    static func write(_ r: R, _ key: String, _ value: JSONValue, at ms: Int64) async throws -> R.Answer {
        try await r.post("/v1/subscribers/u1/attributes", ["attributes": [key: ["value": value, "updated_at_ms": .int(ms)]]])
    }

    static func attributes(_ r: R) async throws -> JSONValue? {
        try await r.subscriber("u1", key: r.secretKey).subscriber?["subscriber_attributes"]
    }

    @Test func aNewerAttributeWinsAnOlderOneIsIgnoredAndNullDeletes() async throws {
        try await R.run { r throws in
            let ada: JSONValue = ["$displayName": ["value": "Ada", "updated_at_ms": 2000]]
            let same: JSONValue = ["$displayName": ["value": "Same", "updated_at_ms": 2000]]
            let first = try await Self.write(r, "$displayName", "Ada", at: 2000)
            #expect(first.status == 200)
            let older = try await Self.write(r, "$displayName", "Old", at: 1000)
            #expect(older.status == 200, "ignored, not refused")
            let afterOlder = try await Self.attributes(r)
            #expect(afterOlder == ada)
            _ = try await Self.write(r, "$displayName", "Same", at: 2000)
            let afterEqual = try await Self.attributes(r)
            #expect(afterEqual == same, "an equal time wins")
            _ = try await Self.write(r, "$displayName", .null, at: 3000)
            let afterDelete = try await Self.attributes(r)
            #expect(afterDelete == .object([:]))
        }
    }

    @Test func invalidAttributesAre7263WithAttributeErrorsAndChangeNothing() async throws {
        try await R.run { r throws in
            _ = try await r.subscriber("u1")
            let long = String(repeating: "k", count: 41)
            let refused = try await r.post("/v1/subscribers/u1/attributes", [
                "attributes": ["ok": ["value": "1", "updated_at_ms": 1], long: ["value": "2", "updated_at_ms": 1]],
            ])
            #expect(refused.status == 400 && refused.code == 7263)
            let errors = try #require(refused.body["attribute_errors"]?.arrayValue)
            #expect(errors.count == 1)
            #expect(errors.first?.objectValue?.string("key_name") == long)
            #expect(errors.first?.objectValue?.string("message") != nil)
            let noObject = try await r.post("/v1/subscribers/u1/attributes", ["attributes": "x"])
            #expect(noObject.status == 400 && noObject.code == 7263)
            #expect(try await r.subscriber("u1", key: r.secretKey).subscriber?["subscriber_attributes"] == .object([:]))
        }
    }

    // MARK: Config

    static let offeringsConfig: JSONValue = [
        "entitlements": [["id": "pro"]],
        "products": [
            ["id": "pro_monthly", "type": "subscription", "entitlements": ["pro"]],
            ["id": "pro_yearly", "type": "subscription", "entitlements": ["pro"]],
            ["id": "lifetime", "type": "non_consumable", "entitlements": ["pro"]],
            ["id": "coins_100", "type": "consumable"],
        ],
        "currencies": [["code": "COINS", "name": "Coins"]],
        "offerings": [
            ["id": "default", "is_default": true, "description": "The usual", "metadata": ["color": "blue"], "packages": [
                ["id": "m", "type": "monthly", "product": "pro_monthly"],
                ["id": "y", "type": "annual", "product": "pro_yearly"],
                ["id": "l", "type": "lifetime", "product": "lifetime"],
                ["id": "coins", "type": "custom", "product": "coins_100"],
            ]],
            ["id": "bare", "packages": [["id": "m", "type": "monthly", "product": "pro_monthly"]]],
        ],
        "stores": ["test": true],
    ]

    @Test func offeringsAreAnsweredForAnyWellFormedIDAndCreateNothing() async throws {
        try await R.run { r throws in
            try await r.a.f.putConfig(Self.offeringsConfig)
            let answer = try await r.get("/v1/subscribers/never-seen/offerings")
            #expect(answer.status == 200)
            #expect(answer.body.string("current_offering_id") == "default")
            let offerings = try #require(answer.body["offerings"]?.arrayValue?.compactMap { $0.objectValue })
            #expect(offerings.map { $0.string("identifier") } == ["default", "bare"])
            #expect(offerings[0].string("description") == "The usual")
            #expect(offerings[0]["metadata"] == ["color": "blue"])
            #expect(offerings[1].string("description") == "bare", "the id when the config has none")
            #expect(offerings[1]["metadata"] == .object([:]))
            let packages = try #require(offerings[0]["packages"]?.arrayValue?.compactMap { $0.objectValue })
            #expect(packages.map { $0.string("identifier") } == ["$rc_monthly", "$rc_annual", "$rc_lifetime", "coins"])
            #expect(packages.map { $0.string("platform_product_identifier") } == ["pro_monthly", "pro_yearly", "lifetime", "coins_100"])
            #expect(try await r.profileCount() == 0)
            let blank = try await r.get("/v1/subscribers/%20/offerings")
            #expect(blank.status == 400 && blank.code == 7220)
        }
    }

    @Test func theProductEntitlementMappingComesFromTheConfig() async throws {
        try await R.run { r throws in
            try await r.a.f.putConfig(Self.offeringsConfig)
            let answer = try await r.get("/v1/product_entitlement_mapping")
            #expect(answer.status == 200)
            let mapping = try #require(answer.body.object("product_entitlement_mapping"))
            #expect(mapping["pro_monthly"] == ["product_identifier": "pro_monthly", "entitlements": ["pro"]])
            #expect(mapping["coins_100"] == ["product_identifier": "coins_100", "entitlements": []])
            #expect(mapping.keys.count == 4)
        }
    }

    @Test func virtualCurrenciesShowEveryConfiguredCurrencyWithItsBalance() async throws {
        try await R.run { r throws in
            _ = try await r.subscriber("u1")
            let credited = try await r.post("/v1/virtual-currencies/u1/COINS/transactions",
                                            ["amount": 25, "idempotency_key": "k1"], key: r.secretKey)
            #expect(credited.status == 200)
            let answer = try await r.get("/v1/subscribers/u1/virtual_currencies")
            #expect(answer.status == 200)
            let coins = try #require(answer.body.object("virtual_currencies")?.object("COINS"))
            #expect(coins.int("balance") == 25 && coins.string("code") == "COINS" && coins.string("name") == "Coins")
            #expect(coins["description"] == .null)
            #expect(answer.body.object("virtual_currencies")?.object("GEMS")?.int("balance") == 0)
        }
    }

    @Test func introEligibilityIsFalseOnlyForProductsTheProfileEverSubscribedTo() async throws {
        try await R.run { r throws in
            #expect(try await r.receipt("u1", r.signedTransaction("7000000001")).status == 200)
            let answer = try await r.post("/v1/subscribers/u1/intro_eligibility", ["product_identifiers": ["pro_monthly", "pro_yearly", "unknown"]])
            #expect(answer.status == 200)
            #expect(answer.body == ["pro_monthly": false, "pro_yearly": true, "unknown": true])
            let bad = try await r.post("/v1/subscribers/u1/intro_eligibility", ["product_identifiers": "pro_monthly"])
            #expect(bad.status == 400)
        }
    }

    // MARK: The secret key's endpoints

    @Test func theSecretKeysEndpointsRefuseThePublicKeyWith7243() async throws {
        try await R.run { r throws in
            _ = try await r.subscriber("u1")
            let paths: [(String, String, JSONValue?)] = [
                ("DELETE", "/v1/subscribers/u1", nil),
                ("POST", "/v1/subscribers/u1/entitlements/pro/promotional", ["duration": "monthly"]),
                ("POST", "/v1/subscribers/u1/entitlements/pro/revoke_promotionals", [:]),
                ("POST", "/v1/virtual-currencies/u1/COINS/transactions", ["amount": 5, "idempotency_key": "k"]),
            ]
            for (method, path, body) in paths {
                let refused = try await r.request(method, path, body: body)
                #expect(refused.status == 403 && refused.code == 7243, "\(method) \(path)")
            }
            let subscriber = try #require(try await r.subscriber("u1").subscriber)
            #expect(subscriber.object("entitlements") == [:])
            #expect(try await r.profileCount() == 1)
        }
    }

    @Test func deleteRemovesTheProfileAndAnswersTheID() async throws {
        try await R.run { r throws in
            _ = try await r.subscriber("u1")
            let deleted = try await r.request("DELETE", "/v1/subscribers/u1", key: r.secretKey)
            #expect(deleted.status == 200 && deleted.body == ["app_user_id": "u1"])
            #expect(try await r.profileCount() == 0)
            let again = try await r.request("DELETE", "/v1/subscribers/u1", key: r.secretKey)
            #expect(again.status == 404 && again.code == 7110)
        }
    }

    @Test func aPromotionalForADurationShowsAsRCPromoWithItsName() async throws {
        try await R.run { r throws in
            let granted = try await r.post("/v1/subscribers/u1/entitlements/pro/promotional", ["duration": "monthly"], key: r.secretKey)
            #expect(granted.status == 201)
            let subscriber = try #require(granted.subscriber)
            let promo = try #require(subscriber.object("subscriptions")?.object("rc_promo_pro_monthly"))
            #expect(promo.string("store") == "promotional")
            #expect(R.isDate(promo["expires_date"]))
            #expect(subscriber.object("entitlements")?.object("pro")?.string("product_identifier") == "rc_promo_pro_monthly")
            let custom = try await r.post("/v1/subscribers/u2/entitlements/pro/promotional",
                                          ["end_time_ms": .int(r.a.startMs + 5 * R.A.day + 7)], key: r.secretKey)
            #expect(custom.subscriber?.object("subscriptions")?.object("rc_promo_pro_custom") != nil)
            let lifetime = try await r.post("/v1/subscribers/u3/entitlements/pro/promotional", ["duration": "lifetime"], key: r.secretKey)
            #expect(lifetime.subscriber?.object("subscriptions")?.object("rc_promo_pro_lifetime")?["expires_date"] == .null)
        }
    }

    @Test func badPromotionalsAreRefusedAndChangeNothing() async throws {
        try await R.run { r throws in
            _ = try await r.subscriber("u1")
            let unknown = try await r.post("/v1/subscribers/u1/entitlements/nope/promotional", ["duration": "monthly"], key: r.secretKey)
            #expect(unknown.status == 404 && unknown.code == 7110)
            let noEnd = try await r.post("/v1/subscribers/u1/entitlements/pro/promotional", [:], key: r.secretKey)
            #expect(noEnd.status == 400)
            let badDuration = try await r.post("/v1/subscribers/u1/entitlements/pro/promotional", ["duration": "fortnightly"], key: r.secretKey)
            #expect(badDuration.status == 400)
            let past = try await r.post("/v1/subscribers/u1/entitlements/pro/promotional", ["end_time_ms": 5], key: r.secretKey)
            #expect(past.status == 400)
            #expect(try await r.subscriber("u1").subscriber?.object("entitlements") == [:])
        }
    }

    @Test func revokePromotionalsRemovesTheGrants() async throws {
        try await R.run { r throws in
            _ = try await r.post("/v1/subscribers/u1/entitlements/pro/promotional", ["duration": "weekly"], key: r.secretKey)
            let revoked = try await r.post("/v1/subscribers/u1/entitlements/pro/revoke_promotionals", [:], key: r.secretKey)
            #expect(revoked.status == 200)
            let entitlement = revoked.subscriber?.object("entitlements")?.object("pro")
            #expect(entitlement == nil || entitlement?["expires_date"] != .null, "no longer active")
        }
    }

    @Test func aCurrencyTransactionAnswersTheBalanceAndIsIdempotent() async throws {
        try await R.run { r throws in
            _ = try await r.subscriber("u1")
            let path = "/v1/virtual-currencies/u1/COINS/transactions"
            let credit = try await r.post(path, ["amount": 50, "idempotency_key": "c1", "reason": "welcome"], key: r.secretKey)
            #expect(credit.status == 200)
            #expect(credit.body.int("balance") == 50)
            let id = try #require(credit.body.string("transaction_id"))
            let replay = try await r.post(path, ["amount": 50, "idempotency_key": "c1", "reason": "welcome"], key: r.secretKey)
            #expect(replay.body.int("balance") == 50 && replay.body.string("transaction_id") == id)
            let overdraw = try await r.post(path, ["amount": -80, "idempotency_key": "d1"], key: r.secretKey)
            #expect(overdraw.status == 422)
            #expect(try await r.get("/v1/subscribers/u1/virtual_currencies").body.object("virtual_currencies")?.object("COINS")?.int("balance") == 50)
            let unknownCurrency = try await r.post("/v1/virtual-currencies/u1/NOPE/transactions", ["amount": 1, "idempotency_key": "x"], key: r.secretKey)
            #expect(unknownCurrency.status == 404)
            let missingKey = try await r.post(path, ["amount": 1], key: r.secretKey)
            #expect(missingKey.status == 400)
        }
    }
}
