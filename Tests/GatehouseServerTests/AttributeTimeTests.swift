import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// `profile.attributes` with times over real connections (docs/protocol.md): a string or `null`
/// is set as of now, RevenueCat's `{"value", "updated_at_ms"}` as of its time; an older update is
/// ignored, an equal or newer one wins.
@Suite struct AttributeTimesOverTheWire {
    struct Fixture {
        let sdk: TestClient
        let backend: TestClient
        let admin: TestClient
        let id: String

        func set(_ attributes: JSONValue, via client: TestClient? = nil) async throws -> JSONObject {
            try await (client ?? sdk).call("profile.attributes", ["profile_id": .string(id), "attributes": attributes])
        }

        /// The attributes as the secret key reads them.
        func attributes() async throws -> JSONObject? {
            try await backend.call("profile.get", ["profile_id": .string(id)]).object("attributes")
        }

        func projectCursor() async throws -> Int64? {
            try await admin.call("project.get", ["project": "acme"]).object("project")?.int("cursor")
        }
    }

    static func fixture(_ server: TestServer) async throws -> Fixture {
        let keys = try await server.createProject("acme")
        let sdk = try server.connect()
        try await sdk.hello(keys.publicKey)
        let backend = try server.connect()
        try await backend.hello(keys.secretKey)
        let id = try #require(try await sdk.call("profile.create").object("profile")?.string("profile_id"))
        return Fixture(sdk: sdk, backend: backend, admin: try await server.admin(), id: id)
    }

    static func timed(_ value: JSONValue, _ ms: Int64) -> JSONValue { ["value": value, "updated_at_ms": .int(ms)] }

    @Test func newerWinsOlderIsIgnoredEqualWins() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await Self.fixture(server)
            #expect(try await f.set(["plan": Self.timed("gold", 1_000)]).isSuccess)
            #expect(try await f.set(["plan": Self.timed("silver", 2_000)]).isSuccess)
            #expect(try await f.attributes()?.string("plan") == "silver")
            let cursor = try await f.projectCursor()
            let older = try await f.set(["plan": Self.timed("tin", 1_999)])
            #expect(older.isSuccess, "an older update is no error")
            #expect(try await f.attributes()?.string("plan") == "silver")
            #expect(try await f.projectCursor() == cursor, "and changes nothing")
            #expect(try await f.set(["plan": Self.timed("bronze", 2_000)]).isSuccess)
            #expect(try await f.attributes()?.string("plan") == "bronze")
        }
    }

    @Test func aPlainValueIsSetAsOfNowAndWinsOverAnyPastTime() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await Self.fixture(server)
            #expect(try await f.set(["plan": Self.timed("gold", 1_000)]).isSuccess)
            #expect(try await f.set(["plan": "now"]).isSuccess)
            #expect(try await f.attributes()?.string("plan") == "now")
            // Now is later than 1970 plus a second: the old time loses against it.
            #expect(try await f.set(["plan": Self.timed("past", 1_000)]).isSuccess)
            #expect(try await f.attributes()?.string("plan") == "now")
        }
    }

    @Test func nullAndEmptyDeleteInBothForms() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await Self.fixture(server)
            #expect(try await f.set(["a": "1", "b": "2", "c": Self.timed("3", 10), "d": Self.timed("4", 10)]).isSuccess)
            #expect(try await f.set(["a": .null, "b": "", "c": Self.timed(.null, 10), "d": Self.timed("", 9)]).isSuccess)
            #expect(try await f.attributes() == ["d": "4"], "d's delete is older than d")
            let answer = try await f.set(["d": Self.timed("", 11)], via: f.backend)
            #expect(answer["attributes"] == .object(JSONObject()), "the server role sees {key: value}, after the update")
        }
    }

    @Test func theServerRoleSeesValuesTheSDKNothing() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await Self.fixture(server)
            let sdkAnswer = try await f.set(["plan": Self.timed("gold", 5)])
            #expect(sdkAnswer.isSuccess && sdkAnswer["attributes"] == nil)
            let serverAnswer = try await f.set(["theme": "dark"], via: f.backend)
            #expect(serverAnswer["attributes"] == ["plan": "gold", "theme": "dark"])
            #expect(try await f.sdk.call("profile.get", ["profile_id": .string(f.id)])["attributes"] == nil)
        }
    }

    @Test(arguments: [
        (["k": ["updated_at_ms": 1]], "attributes.k.value"),
        (["k": ["value": 5, "updated_at_ms": 1]], "attributes.k.value"),
        (["k": ["value": ["x"], "updated_at_ms": 1]], "attributes.k.value"),
        (["k": ["value": "v"]], "attributes.k.updated_at_ms"),
        (["k": ["value": "v", "updated_at_ms": "1"]], "attributes.k.updated_at_ms"),
        (["k": ["value": "v", "updated_at_ms": -1]], "attributes.k.updated_at_ms"),
        (["k": ["value": "v", "updated_at_ms": 1.5]], "attributes.k.updated_at_ms"),
        (["k": ["value": "v", "updated_at_ms": .null]], "attributes.k.updated_at_ms"),
        (["k": 5], "attributes.k"),
        (["k": true], "attributes.k"),
        (["k": ["v"]], "attributes.k"),
        (["ok": "fine", "k": ["value": .string(String(repeating: "v", count: 501)), "updated_at_ms": 1]], "attributes.k"),
        ([String(repeating: "k", count: 41): ["value": "v", "updated_at_ms": 1]], "attributes.\(String(repeating: "k", count: 41))"),
        ("not an object", "attributes"),
    ] as [(JSONValue, String)])
    func aBadShapeIsRefusedNamingItsFieldAndChangesNothing(_ attributes: JSONValue, _ field: String) async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await Self.fixture(server)
            #expect(try await f.set(["kept": "yes"]).isSuccess)
            let cursor = try await f.projectCursor()
            let answer = try await f.set(attributes)
            #expect(answer.errorCode == .badRequest)
            let message = answer.object("error")?.string("message") ?? ""
            #expect(message.hasPrefix("\(field): "), "\(message)")
            #expect(try await f.projectCursor() == cursor)
            #expect(try await f.attributes() == ["kept": "yes"])
        }
    }

    @Test func attributeChangesAreNoSyncChange() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await Self.fixture(server)
            let cursor = try #require(try await f.sdk.call("sync", ["profile_id": .string(f.id)]).int("cursor"))
            #expect(try await f.set(["plan": Self.timed("gold", 5), "theme": "dark"]).isSuccess)
            let sync = try await f.sdk.call("sync", ["profile_id": .string(f.id), "cursor": .int(cursor)])
            #expect(sync["changed"] == .array([]) && sync.int("cursor") == cursor)
        }
    }
}
