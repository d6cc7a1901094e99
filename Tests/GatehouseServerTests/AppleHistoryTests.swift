import GatehouseAppStore
import GatehouseBase
@testable import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// A `purchase.restore` of App Store transactions asks Apple for the rest of the customer's
/// history when the project holds an In-App Purchase key (DESIGN.md, "Asking Apple";
/// PROTOCOL.md, "Purchases and the store"), against a local fake of Apple's API.
@Suite struct AppleHistory {
    typealias A = AppStoreFixture
    static let day = A.day

    /// The `apple` member of a restore that learned `transactions` and skipped `skipped`.
    static func learned(_ transactions: Int, skipped: Int = 0) -> JSONValue {
        ["asked": true, "transactions": .int(Int64(transactions)), "skipped": .int(Int64(skipped)), "error": .null]
    }

    @Test func aRestoreOfOneTransactionLearnsTheRestOfTheHistoryWithItsGrants() async throws {
        try await AppleFixture.run { apple in
            let a = apple.a
            let alice = try await a.f.create()
            let s = a.startMs
            // Five transactions: three pages of two.
            let signed = apple.history([
                a.transaction("3000000001", purchasedMs: s, expiresMs: s + 30 * Self.day),
                a.transaction("3000000002", original: "3000000001", purchasedMs: s + 30 * Self.day, expiresMs: s + 60 * Self.day),
                a.transaction("3000000003", original: "3000000001", purchasedMs: s + 60 * Self.day, expiresMs: s + 90 * Self.day),
                a.transaction("3000000004", product: "lifetime", type: "Non-Consumable", price: 29_990),
                a.transaction("3000000005", product: "coins_500", type: "Consumable", price: 4_990),
            ])
            let restored = try await a.restore(alice.id, [signed[0]], via: a.f.sdk)
            #expect(restored.isSuccess, "\(restored)")
            #expect(restored["apple"] == Self.learned(5))
            #expect(StoreFixture.subscription(restored, "3000000001")?.int("expires_ms") == s + 90 * Self.day)
            let purchases = restored["purchases"]?.arrayValue?.compactMap { $0.objectValue?.string("transaction_id") }
            #expect(Set(purchases ?? []) == ["3000000004", "3000000005"])
            // The first term's COINS 100, the consumable's 500, GEMS 10 for each renewal.
            #expect(restored.object("currencies") == ["COINS": 600, "GEMS": 20])
            let document = try await a.get(alice.id)
            for part in ["subscriptions", "purchases", "currencies", "entitlements"] {
                #expect(document[part] == restored[part], "the profile holds the \(part) the answer showed")
            }
            #expect(apple.fake.seen.map(\.path) == Array(repeating: "/inApps/v2/history/3000000001", count: 3))
            #expect(apple.fake.seen.allSatisfy { $0.refusal == nil })
        }
    }

    @Test func theTokenNamesTheProjectsKeyAndApp() async throws {
        try await AppleFixture.run { apple in
            let a = apple.a
            let alice = try await a.f.create()
            let signed = apple.history([a.transaction("3100000001")])
            _ = try await a.restore(alice.id, signed)
            let token = try #require(apple.fake.seen.first?.token.flatMap(TestAPIKey.decode))
            #expect(token.header["kid"] == .string(FakeAppStoreAPI.keyID))
            #expect(token.header["alg"] == "ES256")
            #expect(token.claims["iss"] == .string(FakeAppStoreAPI.issuerID))
            #expect(token.claims["bid"] == .string(A.bundleID))
            #expect(token.claims["aud"] == "appstoreconnect-v1")
            #expect(apple.fake.key.verifies(signature: token.signature, of: token.signingInput))
        }
    }

    @Test func itemsThatDoNotVerifyOrAreForAnotherAppAreSkippedAndCounted() async throws {
        try await AppleFixture.run { apple in
            let a = apple.a
            let alice = try await a.f.create()
            let posted = a.sign(a.transaction("3200000001"))
            let genuine = a.sign(a.transaction("3200000002", product: "pro_yearly")).split(separator: ".").map(String.init)
            let forgedPayload = a.sign(a.transaction("3200000003", product: "pro_yearly", price: 1)).split(separator: ".")[1]
            let tampered = [genuine[0], String(forgedPayload), genuine[2]].joined(separator: ".")
            let otherApp = a.sign(a.transaction("3200000004", product: "lifetime", type: "Non-Consumable", bundle: "com.example.other"))
            let untrusted = try AppStoreTestChain().sign(payload: a.transaction("3200000005", product: "lifetime", type: "Non-Consumable"))
            let production = a.sign(a.transaction("3200000006", product: "lifetime", type: "Non-Consumable", environment: "Production"))
            let lifetime = a.sign(a.transaction("3200000007", product: "lifetime", type: "Non-Consumable"))
            apple.fake.setHistory([posted, tampered, otherApp, untrusted, production, lifetime], findableBy: ["3200000001"])
            let restored = try await a.restore(alice.id, [posted])
            #expect(restored.isSuccess, "\(restored)")
            #expect(restored["apple"] == Self.learned(6, skipped: 4))
            #expect(StoreFixture.subscription(restored, "3200000003") == nil)
            #expect(restored["purchases"]?.arrayValue?.compactMap { $0.objectValue?.string("transaction_id") } == ["3200000007"])
            #expect(a.server.logs.events.contains("apple.history_items_skipped"))
        }
    }

    @Test(arguments: ["keep", "transfer"])
    func theLearnedPurchasesFollowTheRestoreSetting(_ restore: String) async throws {
        try await AppleFixture.run(restore: restore) { apple in
            let a = apple.a
            let owner = try await a.f.create()
            let reporter = try await a.f.create()
            let lifetime = a.transaction("3300000002", product: "lifetime", type: "Non-Consumable")
            _ = try await a.report(owner.id, a.sign(lifetime))
            let signed = apple.history([a.transaction("3300000001"), lifetime])
            let restored = try await a.restore(reporter.id, [signed[0]])
            #expect(restored["apple"] == Self.learned(2))
            #expect(StoreFixture.subscription(restored, "3300000001") != nil, "the posted one is the reporter's")
            if restore == "keep" {
                #expect(restored["kept_by_other"] == ["3300000002"])
                #expect(restored["transferred_from"] == [])
                #expect(restored["purchases"] == [])
            } else {
                #expect(restored["kept_by_other"] == [])
                #expect(restored["transferred_from"] == [.string(owner.id)])
                #expect(try await a.get(owner.id)["purchases"] == [])
            }
        }
    }

    /// More than a request may post: they are restored a thousand at a time, every one of them.
    @Test func aLongHistoryIsRestoredWhole() async throws {
        try await AppleFixture.run(pageSize: 20) { apple in
            let a = apple.a
            let alice = try await a.f.create()
            let consumables = (1...1_001).map { a.transaction(String(3_800_000_000 + $0), product: "coins_500", type: "Consumable") }
            let signed = apple.history([a.transaction("3800000000")] + consumables)
            let restored = try await a.restore(alice.id, [signed[0]])
            #expect(restored["apple"] == Self.learned(1_002))
            #expect(restored["purchases"]?.arrayValue?.count == 1_001)
            let coins: Int64 = 100 + 1_001 * 500
            #expect(restored.object("currencies")?.int("COINS") == coins)
        }
    }

    @Test func appleFailingAndThenAnsweringIsRetried() async throws {
        try await AppleFixture.run { apple in
            let a = apple.a
            let alice = try await a.f.create()
            let signed = apple.history([a.transaction("3400000001"), a.transaction("3400000002", product: "lifetime", type: "Non-Consumable")])
            apple.fake.failNext(.status(500), .status(503))
            let restored = try await a.restore(alice.id, [signed[0]])
            #expect(restored["apple"] == Self.learned(2))
            #expect(restored["purchases"]?.arrayValue?.count == 1)
            #expect(apple.fake.seen.count == 3)
        }
    }

    @Test(arguments: [false, true])
    func appleDownLeavesThePostedPurchaseRestoredAndSaysSo(unreachable: Bool) async throws {
        // Port 1 on loopback: nothing listens there, so every connection is refused at once.
        try await AppleFixture.run(apiURL: unreachable ? "http://127.0.0.1:1" : nil) { apple in
            let a = apple.a
            let alice = try await a.f.create()
            let signed = apple.history([a.transaction("3500000001"), a.transaction("3500000002", product: "lifetime", type: "Non-Consumable")])
            if !unreachable { apple.fake.failNext(.status(500), .status(500), .status(500)) }
            let restored = try await a.restore(alice.id, [signed[0]])
            #expect(restored.isSuccess, "\(restored)")
            #expect(restored["apple"] == ["asked": true, "transactions": 0, "skipped": 0, "error": "unavailable"])
            #expect(StoreFixture.subscription(restored, "3500000001")?.string("status") == "active")
            #expect(restored["purchases"] == [])
            #expect(try await a.subscription(alice.id, "3500000001") != nil)
            let warning = try #require(a.server.logs.records(event: "apple.history_failed").first)
            #expect(warning.level == .warning)
            #expect(apple.fake.seen.count == (unreachable ? 0 : 3))
        }
    }

    @Test func aKeyAppleRefusesIsReportedAsUnauthorized() async throws {
        try await AppleFixture.run { apple in
            let a = apple.a
            var api = apple.api
            api["key_id"] = "OTHERKEY01"
            try await a.f.putConfig(A.config(api: api))
            let alice = try await a.f.create()
            let signed = apple.history([a.transaction("3600000001")])
            let restored = try await a.restore(alice.id, signed)
            #expect(restored["apple"] == ["asked": true, "transactions": 0, "skipped": 0, "error": "unauthorized"])
            #expect(apple.fake.seen.map(\.refusal) == ["kid is not the key's id"])
            #expect(StoreFixture.subscription(restored, "3600000001") != nil)
        }
    }

    @Test func aProjectWithoutAKeyAsksNothing() async throws {
        try await AppleFixture.run(withKey: false) { apple in
            let a = apple.a
            let alice = try await a.f.create()
            let signed = apple.history([a.transaction("3700000001"), a.transaction("3700000002", product: "lifetime", type: "Non-Consumable")])
            let restored = try await a.restore(alice.id, [signed[0]])
            #expect(restored.isSuccess, "\(restored)")
            #expect(restored["apple"] == nil)
            #expect(restored["purchases"] == [])
            #expect(apple.fake.seen.isEmpty)
            #expect(apple.fake.acceptedConnections == 0)
        }
    }

    @Test func aRestoreOfTheTestStoreAsksNothing() async throws {
        try await AppleFixture.run { apple in
            let alice = try await apple.f.create()
            let s = apple.a.startMs
            let restored = try await apple.f.restore(alice.id, [StoreFixture.subscription("t1", purchasedMs: s, expiresMs: s + Self.day)])
            #expect(restored.isSuccess, "\(restored)")
            #expect(restored["apple"] == nil)
            #expect(apple.fake.seen.isEmpty)
        }
    }
}

/// `gatehouse serve --app-store-api-url`: where the server's App Store Server API requests go.
@Suite struct AppStoreAPIURLFlag {
    static func configuration(_ arguments: [String]) throws -> ServerConfiguration {
        try ServeCommand.makeConfiguration(try ServeCommand.parser.parse(arguments), environment: [:])
    }

    @Test func theFlagSetsTheBaseURLAndApplesHostsAreTheDefault() throws {
        #expect(try Self.configuration([]).appStoreAPIBaseURL == nil)
        #expect(try Self.configuration(["--app-store-api-url=http://127.0.0.1:9100/"]).appStoreAPIBaseURL == "http://127.0.0.1:9100/")
        #expect(try Self.configuration(["--app-store-api-url", "https://apple-proxy.internal"]).appStoreAPIBaseURL
            == "https://apple-proxy.internal")
    }

    @Test(arguments: ["api.storekit.apple.com", "ftp://example.com", "https://", ""])
    func anAddressThatIsNotHTTPIsAUsageError(_ url: String) {
        #expect(throws: UsageError.self) { try Self.configuration(["--app-store-api-url=\(url)"]) }
    }
}
