import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// `offerings` over real connections (PROTOCOL.md, "Sync and push", "Configuration").
@Suite struct OfferingsTests {
    typealias S = SyncFixture
    typealias F = StoreFixture

    static let entitlements: JSONValue = [["id": "pro"], ["id": "extra"]]
    static let products: JSONValue = [
        ["id": "pro_monthly", "type": "subscription", "entitlements": ["pro"],
         "grants": [["currency": "COINS", "amount": 100, "on": "both"]]],
        ["id": "pro_yearly", "type": "subscription", "entitlements": ["pro", "extra"]],
        ["id": "lifetime", "type": "non_consumable", "entitlements": ["pro"]],
        ["id": "coins_500", "type": "consumable", "grants": [["currency": "COINS", "amount": 500, "on": "purchase"]]],
    ]

    static func config(offerings: JSONValue) -> JSONValue {
        [
            "entitlements": entitlements,
            "products": products,
            "currencies": [["code": "COINS", "name": "Coins"]],
            "offerings": offerings,
            "stores": ["test": true],
        ]
    }

    static let twoOfferings: JSONValue = [
        ["id": "sale", "packages": [["id": "year", "type": "annual", "product": "pro_yearly"]]],
        ["id": "main", "is_default": true, "packages": [
            ["id": "monthly", "type": "monthly", "product": "pro_monthly"],
            ["id": "forever", "type": "lifetime", "product": "lifetime"],
            ["id": "coins", "type": "custom", "product": "coins_500"],
        ]],
    ]

    static let resolved: JSONValue = [
        ["id": "sale", "is_default": false, "packages": [
            ["id": "year", "type": "annual", "product": [
                "id": "pro_yearly", "type": "subscription", "entitlements": ["pro", "extra"], "grants": [],
            ]],
        ]],
        ["id": "main", "is_default": true, "packages": [
            ["id": "monthly", "type": "monthly", "product": [
                "id": "pro_monthly", "type": "subscription", "entitlements": ["pro"],
                "grants": [["currency": "COINS", "amount": 100, "on": "both"]],
            ]],
            ["id": "forever", "type": "lifetime", "product": [
                "id": "lifetime", "type": "non_consumable", "entitlements": ["pro"], "grants": [],
            ]],
            ["id": "coins", "type": "custom", "product": [
                "id": "coins_500", "type": "consumable", "entitlements": [],
                "grants": [["currency": "COINS", "amount": 500, "on": "purchase"]],
            ]],
        ]],
    ]

    static func offerings(_ client: TestClient, _ id: String) async throws -> JSONObject {
        try await client.call("offerings", ["profile_id": .string(id)])
    }

    @Test func theAnswerResolvesEachPackagesProductForBothRoles() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            try await f.putConfig(Self.config(offerings: Self.twoOfferings))
            let alice = try await f.create("alice")
            for client in [f.sdk, f.backend] {
                let answer = try await Self.offerings(client, alice.id)
                #expect(answer.isSuccess, "\(answer)")
                #expect(answer.keys == ["id", "ok", "current", "offerings"])
                #expect(answer["current"] == "main")
                #expect(answer["offerings"] == Self.resolved)
            }
        }
    }

    @Test func currentIsNullWithoutADefault() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            try await f.putConfig(Self.config(offerings: [
                ["id": "sale", "packages": [["id": "year", "type": "annual", "product": "pro_yearly"]]],
            ]))
            let alice = try await f.create("alice")
            let answer = try await Self.offerings(f.sdk, alice.id)
            #expect(answer.keys == ["id", "ok", "current", "offerings"])
            #expect(answer["current"] == .null)
            #expect(answer["offerings"]?.arrayValue?.count == 1)
            // No offerings at all.
            try await f.putConfig(Self.config(offerings: []))
            let none = try await Self.offerings(f.sdk, alice.id)
            #expect(none["current"] == .null && none["offerings"] == .array([]))
        }
    }

    @Test func unknownForeignAndMalformedProfiles() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let other = try await F.make(server, project: "other")
            let foreign = try await other.create("x")
            let gone = try await f.create("gone")
            #expect(try await f.backend.call("profile.delete", ["profile_id": .string(gone.id)]).isSuccess)
            for client in [f.sdk, f.backend] {
                #expect(try await Self.offerings(client, gone.id).errorCode == .notFound)
                #expect(try await Self.offerings(client, foreign.id).errorCode == .forbidden)
                #expect(try await Self.offerings(client, "gh_nope").errorCode == .badRequest)
                #expect(try await client.call("offerings").errorCode == .badRequest)
            }
            #expect(try await f.admin.call("offerings", ["profile_id": .string(gone.id)]).errorCode == .forbidden)
        }
    }

    @Test func anAliasAnswersLikeItsProfile() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            try await f.putConfig(Self.config(offerings: Self.twoOfferings))
            _ = try await f.create("dave")
            let anonymous = try #require(F.id(try await f.sdk.call("profile.create")))
            #expect(try await f.sdk.call("profile.identify", ["profile_id": .string(anonymous), "customer_user_id": "dave"]).isSuccess)
            let answer = try await Self.offerings(f.sdk, anonymous)
            #expect(answer["current"] == "main" && answer["offerings"] == Self.resolved)
        }
    }

    @Test func aConfigPutChangesTheAnswerAndSyncReportsOfferings() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            try await f.putConfig(Self.config(offerings: Self.twoOfferings))
            let alice = try await f.create("alice")
            let s = SyncFixture(f: f)
            let cursor = try #require(try await s.sync(alice.id).int("cursor"))
            let before = try await Self.offerings(f.sdk, alice.id)
            #expect(before["current"] == "main")
            try await f.putConfig(Self.config(offerings: [
                ["id": "sale", "is_default": true, "packages": [["id": "year", "type": "annual", "product": "pro_yearly"]]],
            ]))
            let after = try await Self.offerings(f.sdk, alice.id)
            #expect(after["current"] == "sale")
            #expect(after["offerings"] == [
                ["id": "sale", "is_default": true, "packages": [
                    ["id": "year", "type": "annual", "product": [
                        "id": "pro_yearly", "type": "subscription", "entitlements": ["pro", "extra"], "grants": [],
                    ]],
                ]],
            ])
            for client in [f.sdk, f.backend] {
                let answer = try await s.sync(alice.id, cursor, via: client)
                #expect(S.changed(answer) == ["offerings"], "\(answer)")
                let next = try #require(answer.int("cursor"))
                #expect(next > cursor)
                try await s.expectNothingChanged(alice.id, next, via: client)
            }
            // A config.put that names an unknown product changes nothing: not the answer, not sync.
            let latest = try #require(try await s.sync(alice.id, cursor).int("cursor"))
            let rejected = try await f.backend.call("config.put", ["config": Self.config(offerings: [
                ["id": "x", "packages": [["id": "p", "type": "monthly", "product": "nope"]]],
            ])])
            #expect(rejected.errorCode == .badRequest)
            try await s.expectNothingChanged(alice.id, latest)
            #expect(try await Self.offerings(f.sdk, alice.id)["current"] == "sale")
        }
    }
}
