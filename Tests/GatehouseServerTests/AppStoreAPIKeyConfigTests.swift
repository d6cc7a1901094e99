import GatehouseAppStore
import GatehouseBase
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// `stores.app_store.api`, the In-App Purchase key, in `config.put` and `config.get`
/// (PROTOCOL.md, "Configuration"): kept, checked before it is taken, never shown.
@Suite struct AppStoreAPIKeyConfig {
    typealias A = AppStoreFixture

    /// Every answer and log line of `apple`'s server holds nothing of the private key.
    static func expectNoPrivateKey(_ texts: [String], _ apple: AppleFixture, sourceLocation: SourceLocation = #_sourceLocation) {
        let keyLines = apple.fake.key.pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }
        for text in texts + apple.a.server.logs.records.map({ "\($0)" }) {
            #expect(!text.contains("PRIVATE KEY"), "\(text)", sourceLocation: sourceLocation)
            #expect(!keyLines.contains { text.contains($0) }, "\(text)", sourceLocation: sourceLocation)
        }
    }

    @Test func theKeyIsTakenButNoAnswerShowsItsPrivateKey() async throws {
        try await AppleFixture.run(withKey: false) { apple in
            let put = try await apple.f.backend.call("config.put", ["config": A.config(api: apple.api)])
            #expect(put.isSuccess, "\(put)")
            let shown: JSONValue = ["issuer_id": .string(apple.fake.issuerID), "key_id": .string(apple.fake.keyID)]
            #expect(put.object("config")?.object("stores")?.object("app_store")?["api"] == shown)
            let secretGet = try await apple.f.backend.call("config.get")
            let publicGet = try await apple.f.sdk.call("config.get")
            for answer in [secretGet, publicGet] {
                #expect(answer.object("config")?.object("stores")?.object("app_store")?["api"] == shown)
            }
            let alice = try await apple.f.create()
            let restored = try await apple.a.restore(alice.id, apple.history([apple.a.transaction("4000000001")]))
            #expect(restored["apple"]?.objectValue?["error"] == .null, "the key is used: \(restored)")
            Self.expectNoPrivateKey([put, secretGet, publicGet, restored].map { JSONWriter.string(.object($0)) }, apple)
        }
    }

    @Test func aConfigReadEditedAndPutBackKeepsTheStoredKey() async throws {
        try await AppleFixture.run { apple in
            var config = try #require(try await apple.f.backend.call("config.get").object("config"))
            config["grace_period_ms"] = 60_000
            let put = try await apple.f.backend.call("config.put", ["config": .object(config)])
            #expect(put.isSuccess, "\(put)")
            #expect(put.object("config")?.int("grace_period_ms") == 60_000)
            let alice = try await apple.f.create()
            let restored = try await apple.a.restore(alice.id, apple.history([apple.a.transaction("4100000001")]))
            #expect(restored["apple"]?.objectValue?["error"] == .null, "the stored key signed: \(restored)")
            #expect(apple.fake.seen.map(\.refusal) == [nil])
        }
    }

    /// The put and what it must leave: the config as it was.
    static func expectRefused(
        _ config: JSONValue, naming field: String, _ apple: AppleFixture, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let before = try await apple.f.backend.call("config.get")["config"]
        let put = try await apple.f.backend.call("config.put", ["config": config])
        PurchaseErrors.expectBadRequest(put, naming: field, sourceLocation: sourceLocation)
        #expect(try await apple.f.backend.call("config.get")["config"] == before, "changed nothing", sourceLocation: sourceLocation)
    }

    @Test func anotherKeyWithoutItsPrivateKeyIsBadRequestAndChangesNothing() async throws {
        try await AppleFixture.run { apple in
            for member in ["key_id", "issuer_id"] {
                var api = apple.api
                api["private_key"] = nil
                api[member] = "CHANGED123"
                try await Self.expectRefused(A.config(api: api), naming: "stores.app_store.api.private_key", apple)
            }
        }
        try await AppleFixture.run(withKey: false) { apple in
            var api = apple.api
            api["private_key"] = nil
            try await Self.expectRefused(A.config(api: api), naming: "stores.app_store.api.private_key", apple)
        }
    }

    static let otherKey = TestAPIKey()

    @Test(arguments: [
        ("not a PEM at all", "AuthKey_2X9R4HXF34.p8"),
        ("damaged base64", "-----BEGIN PRIVATE KEY-----\n!!notbase64!!\n-----END PRIVATE KEY-----\n"),
        ("not a key inside", TestAPIKey.pem(label: "PRIVATE KEY", der: Array("certainly not DER".utf8))),
        ("SEC1, not PKCS#8", otherKey.sec1PEM),
        ("P-384", TestAPIKey.p384PEM()),
        ("two keys", otherKey.pem + TestAPIKey().pem),
        ("too long", otherKey.pem + String(repeating: " ", count: 8_192)),
    ])
    func aPrivateKeyThatIsNotAnAppleKeyIsBadRequestAndChangesNothing(_ name: String, _ pem: String) async throws {
        try await AppleFixture.run { apple in
            var api = apple.api
            api["private_key"] = .string(pem)
            try await Self.expectRefused(A.config(api: api), naming: "stores.app_store.api.private_key", apple)
        }
    }

    @Test(arguments: [
        ("no key_id", ["issuer_id": "i", "private_key": .string(otherKey.pem)], "stores.app_store.api.key_id"),
        ("empty issuer_id", ["issuer_id": "", "key_id": "k", "private_key": .string(otherKey.pem)], "stores.app_store.api.issuer_id"),
        ("key_id not text", ["issuer_id": "i", "key_id": 7, "private_key": .string(otherKey.pem)], "stores.app_store.api.key_id"),
        ("unknown member", ["issuer_id": "i", "key_id": "k", "private_key_set": true], "stores.app_store.api.private_key_set"),
    ] as [(String, JSONObject, String)])
    func aMalformedKeyIsBadRequestAndChangesNothing(_ name: String, _ api: JSONObject, _ field: String) async throws {
        try await AppleFixture.run { apple in
            try await Self.expectRefused(A.config(api: api), naming: field, apple)
        }
    }

    @Test func theKeySurvivesRestartsFromTheLogAndFromASnapshot() async throws {
        let chain = try AppStoreTestChain()
        let fake = try FakeAppStoreAPI(bundleID: A.bundleID, currentTimeMilliseconds: AppStoreVerifier.systemTimeMilliseconds)
        defer { fake.stop() }
        let configure: (inout ServerConfiguration) -> Void = {
            $0.testClock = true
            $0.appStoreRootCertificates = [chain.rootDER]
            AppleFixture.askApple(at: fake.baseURL, &$0)
        }
        var server = try await TestServer.start(configure)
        let first = try await StoreFixture.make(server)
        let api: JSONObject = ["issuer_id": .string(fake.issuerID), "key_id": .string(fake.keyID), "private_key": .string(fake.key.pem)]
        try await first.putConfig(A.config(api: api))
        var f = first
        var transaction = 4_200_000_001
        for checkpoint in [false, true] {
            if checkpoint { #expect(try await f.admin.call("server.checkpoint").isSuccess) }
            server = try await server.restart(configure)
            f = try await first.reconnected(to: server)
            let a = AppStoreFixture(f: f, chain: chain)
            let alice = try await a.f.create()
            let signed = a.sign(a.transaction(String(transaction)))
            fake.setHistory([signed, a.sign(a.transaction(String(transaction + 1), product: "lifetime", type: "Non-Consumable"))],
                            findableBy: [String(transaction)])
            let restored = try await a.restore(alice.id, [signed])
            #expect(restored["apple"]?.objectValue?["error"] == .null, "after a restart (checkpoint: \(checkpoint)): \(restored)")
            #expect(restored["purchases"]?.arrayValue?.count == 1)
            transaction += 10
        }
        #expect(fake.seen.allSatisfy { $0.refusal == nil })
        await server.stop()
    }
}
