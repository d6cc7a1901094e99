import GatehouseCore
import GatehouseTesting
import GatehouseWire
import Testing

/// `config.put` / `config.get` over the wire (PROTOCOL.md, "Configuration").
@Suite struct Config {
    static let example: JSONValue = [
        "entitlements": [["id": "pro"]],
        "products": [
            ["id": "pro_monthly", "type": "subscription", "entitlements": ["pro"],
             "grants": [["currency": "COINS", "amount": 100, "on": "purchase"]]],
            ["id": "lifetime", "type": "non_consumable", "entitlements": ["pro"]],
            ["id": "coins_500", "type": "consumable", "grants": [["currency": "COINS", "amount": 500, "on": "purchase"]]],
        ],
        "currencies": [["code": "COINS", "name": "Coins"]],
        "offerings": [["id": "default", "is_default": true,
                       "packages": [["id": "monthly", "type": "monthly", "product": "pro_monthly"]]]],
        "login": "alias",
        "restore": "transfer",
        "grace_period_ms": 0,
        "stores": ["test": true, "app_store": ["bundle_id": "com.example.app", "environment": "production"]],
    ]

    @Test func newProjectHasTheEmptyConfig() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let sdk = try server.connect()
            try await sdk.hello(keys.publicKey)
            let config = try #require(try await sdk.call("config.get").object("config"))
            #expect(config["products"] == .array([]))
            #expect(config["login"] == "alias")
            #expect(config["restore"] == "transfer")
            #expect(config["limits"] == ["sdk_creates_per_second": 1000])
        }
    }

    @Test func putReplacesTheConfigAndBothRolesReadItBack() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
            let put = try await backend.call("config.put", ["config": Self.example])
            #expect(put.isSuccess)
            let expected = try ProjectConfig(json: #require(Self.example.objectValue))
            #expect(put["config"] == expected.json)
            let sdk = try server.connect()
            try await sdk.hello(keys.publicKey)
            #expect(try await sdk.call("config.get")["config"] == expected.sdkJSON)
            #expect(try await backend.call("config.get")["config"] == expected.json)
        }
    }

    /// The public key ships in every app: its `config.get` shows no webhook or integration, so
    /// none of their secrets; the secret key sees them all, a secret the server made included.
    @Test func deliverySecretsAreShownToTheSecretKeyOnly() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
            let config: JSONValue = [
                "webhooks": [["id": "backend", "url": "https://hooks.example.com/rc", "authorization": "Bearer abc"]],
                "integrations": ["onesignal": ["app_id": "app", "api_key": "os-key"]],
            ]
            let put = try await backend.call("config.put", ["config": config])
            let webhook = try #require(put["config"]?.objectValue?["webhooks"]?.arrayValue?.first?.objectValue)
            let secret = try #require(webhook["secret"]?.stringValue)
            #expect(secret.hasPrefix("whsec_"))
            #expect(webhook["authorization"] == "Bearer abc")
            let read = try #require(try await backend.call("config.get")["config"]?.objectValue)
            #expect(read["webhooks"] == put["config"]?.objectValue?["webhooks"])
            #expect(read["integrations"]?.objectValue?["onesignal"]?.objectValue?["api_key"] == "os-key")
            let sdk = try server.connect()
            try await sdk.hello(keys.publicKey)
            let shown = try #require(try await sdk.call("config.get")["config"]?.objectValue)
            #expect(shown["webhooks"] == nil)
            #expect(shown["integrations"] == nil)
            #expect(shown["limits"] == ["sdk_creates_per_second": 1000])
            let putAgain = try await backend.call("config.put", ["config": .object(read)])
            #expect(putAgain["config"] == .object(read), "a config read and put back keeps every secret")
        }
    }

    @Test(arguments: [
        ("unknown entitlement", #"{"entitlements":[],"products":[{"id":"p","type":"subscription","entitlements":["gold"]}]}"#),
        ("repeated id", #"{"entitlements":[{"id":"pro"},{"id":"pro"}]}"#),
        ("wrong type", #"{"products":"none"}"#),
        ("bad enum", #"{"login":"merge"}"#),
        ("bad product type", #"{"products":[{"id":"p","type":"rental"}]}"#),
        ("unknown currency", #"{"products":[{"id":"p","type":"consumable","grants":[{"currency":"GEMS","amount":5,"on":"purchase"}]}]}"#),
        ("amount out of range", #"{"currencies":[{"code":"C"}],"products":[{"id":"p","type":"consumable","grants":[{"currency":"C","amount":1e30,"on":"purchase"}]}]}"#),
        ("unknown product in package", #"{"offerings":[{"id":"o","packages":[{"id":"m","product":"nope"}]}]}"#),
        ("config not an object", #"[]"#),
        ("offering metadata not an object", #"{"offerings":[{"id":"o","metadata":[1]}]}"#),
        ("offering metadata too big", #"{"offerings":[{"id":"o","metadata":{"k":"\#(String(repeating: "x", count: 4_096))"}}]}"#),
        ("limit out of range", #"{"limits":{"sdk_creates_per_second":0}}"#),
        ("limit too high", #"{"limits":{"sdk_creates_per_second":1000001}}"#),
        ("unknown key in limits", #"{"limits":{"sdk_creates_per_sec":5}}"#),
        ("offering description too long", #"{"offerings":[{"id":"o","description":"\#(String(repeating: "x", count: 1_001))"}]}"#),
    ])
    func invalidConfigIsBadRequestAndChangesNothing(_ name: String, _ config: String) async throws {
        let put = try await Self.putOverTheExample(config)
        #expect(put.answer.errorCode == .badRequest, "\(name)")
        #expect(put.after == put.before, "\(name) changed nothing")
    }

    /// The issue's example: misspelled keys once answered ok and emptied the whole config.
    @Test(arguments: [
        (#"{"entitlemnts":[{"id":"pro"}],"curencies":[{"code":"COINS"}]}"#, "entitlemnts"),
        (#"{"products":[{"id":"p","type":"consumable","entitelments":[]}]}"#, "products[0].entitelments"),
        (#"{"products":[{"id":"p","type":"consumable"}],"offerings":[{"id":"o","packages":[{"id":"m","product":"p","typ":"monthly"}]}]}"#,
         "offerings[0].packages[0].typ"),
        (#"{"stores":{"test":true,"app_store":{"bundle_id":"b","environment":"sandbox","app_id":1}}}"#,
         "stores.app_store.app_id"),
    ])
    func misspelledKeyIsBadRequestNamingItAndTheConfigStays(_ config: String, _ path: String) async throws {
        let put = try await Self.putOverTheExample(config)
        #expect(put.answer.errorCode == .badRequest)
        #expect(put.answer.object("error")?.string("message") == "\(path): unknown key")
        #expect(put.after == put.before)
        #expect(put.after?.objectValue?["entitlements"] == [["id": "pro"]])
    }

    /// Puts the example, then `config` (JSON text) over it: the second put's answer, and what
    /// `config.get` showed before and after it.
    static func putOverTheExample(_ config: String) async throws
        -> (answer: JSONObject, before: JSONValue?, after: JSONValue?)
    {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
            #expect(try await backend.call("config.put", ["config": Self.example]).isSuccess)
            let before = try await backend.call("config.get")["config"]
            try await backend.send(#"{"id":9,"op":"config.put","config":\#(config)}"#)
            let answer = try await backend.readAnswer()
            return (answer, before, try await backend.call("config.get")["config"])
        }
    }

    /// The example with PROTOCOL.md's optional offering texts.
    static var exampleWithTexts: JSONValue {
        var config = example.objectValue!
        var offering = config["offerings"]!.arrayValue![0].objectValue!
        offering["description"] = "What most people buy"
        offering["metadata"] = ["paywall": ["title": "Go pro", "tiers": [1, 2]], "beta": nil]
        config["offerings"] = [.object(offering)]
        return .object(config)
    }

    @Test func offeringDescriptionAndMetadataAreShownAndSurviveTheLogAndASnapshot() async throws {
        var server = try await TestServer.start()
        let keys = try await server.createProject("acme")
        let backend = try server.connect()
        try await backend.hello(keys.secretKey)
        let put = try await backend.call("config.put", ["config": Self.exampleWithTexts])
        let offering = put.object("config")?["offerings"]?.arrayValue?.first?.objectValue
        var sdkConfig = try #require(put.object("config"))
        sdkConfig["webhooks"] = nil
        sdkConfig["integrations"] = nil
        #expect(offering?["description"] == "What most people buy")
        #expect(offering?["metadata"] == ["paywall": ["title": "Go pro", "tiers": [1, 2]], "beta": nil])
        for checkpoint in [false, true] {
            if checkpoint { #expect(try await server.admin().call("server.checkpoint").isSuccess) }
            server = try await server.restart()
            let sdk = try server.connect()
            try await sdk.hello(keys.publicKey)
            #expect(try await sdk.call("config.get")["config"] == .object(sdkConfig), checkpoint ? "from a snapshot" : "from the log")
        }
        await server.stop()
    }

    @Test func putWithoutAConfigIsBadRequest() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
            #expect(try await backend.call("config.put").errorCode == .badRequest)
        }
    }

    @Test func projectsDoNotSeeEachOthersConfig() async throws {
        try await withTestServer { server in
            let acme = try await server.createProject("acme")
            let other = try await server.createProject("other")
            let acmeBackend = try server.connect()
            try await acmeBackend.hello(acme.secretKey)
            #expect(try await acmeBackend.call("config.put", ["config": Self.example]).isSuccess)
            let otherBackend = try server.connect()
            try await otherBackend.hello(other.secretKey)
            #expect(try await otherBackend.call("config.get").object("config")?["products"] == .array([]))
        }
    }
}
