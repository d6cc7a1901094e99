import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// Install ids (a profile's own, and one merged into it) and attribute times survive a restart
/// from the log, from a snapshot, and a tenant's export and restore.
@Suite struct InstallIDDurability {
    static let own = "$RCAnonymousID:0123456789abcdef0123456789abcdef"
    static let merged = "$RCAnonymousID:fedcba9876543210fedcba9876543210"

    /// Alice, created with `own`; a guest created with `merged`, with an attribute set at 5,000 ms,
    /// merged into her. Answers her profile id.
    static func populate(_ server: TestServer, keys: (publicKey: String, secretKey: String)) async throws -> String {
        let sdk = try server.connect()
        try await sdk.hello(keys.publicKey)
        let alice = try #require(try await sdk.call("profile.create", [
            "customer_user_id": "alice", "install_id": .string(own),
        ]).object("profile")?.string("profile_id"))
        #expect(try await sdk.call("profile.create", ["install_id": .string(merged)]).isSuccess)
        #expect(try await sdk.call("profile.attributes", [
            "profile_id": .string(merged), "attributes": ["plan": ["value": "gold", "updated_at_ms": 5_000]],
        ]).isSuccess)
        let merge = try await sdk.call("profile.identify", ["profile_id": .string(merged), "customer_user_id": "alice"])
        #expect(merge["merged_from"]?.arrayValue?.count == 1)
        return alice
    }

    /// Both install ids resolve to Alice, her document shows her own, and her attribute kept its
    /// time: an update older than 5,000 ms is ignored, one at 5,000 ms wins.
    static func expectKept(_ server: TestServer, keys: (publicKey: String, secretKey: String), alice: String,
                           sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let backend = try server.connect()
        try await backend.hello(keys.secretKey)
        for install in [own, merged] {
            let document = try await backend.call("profile.get", ["profile_id": .string(install)])
            #expect(document.object("profile")?.string("profile_id") == alice, "\(install)", sourceLocation: sourceLocation)
            #expect(document.object("profile")?.string("install_id") == own, sourceLocation: sourceLocation)
        }
        let older = try await backend.call("profile.attributes", [
            "profile_id": .string(alice), "attributes": ["plan": ["value": "older", "updated_at_ms": 4_999]],
        ])
        #expect(older["attributes"] == ["plan": "gold"], sourceLocation: sourceLocation)
        let equal = try await backend.call("profile.attributes", [
            "profile_id": .string(alice), "attributes": ["plan": ["value": "equal", "updated_at_ms": 5_000]],
        ])
        #expect(equal["attributes"] == ["plan": "equal"], sourceLocation: sourceLocation)
    }

    @Test(arguments: [false, true])
    func theyOutliveARestartFromTheLogOrASnapshot(checkpointFirst: Bool) async throws {
        let first = try await TestServer.start()
        let keys = try await first.createProject("acme")
        let alice = try await Self.populate(first, keys: keys)
        if checkpointFirst { #expect(try await first.admin().call("server.checkpoint").isSuccess) }
        let second = try await first.restart()
        try await Self.expectKept(second, keys: keys, alice: alice)
        // The second run's changes and the first's replay together again.
        let third = try await second.restart()
        let backend = try third.connect()
        try await backend.hello(keys.secretKey)
        #expect(try await backend.call("profile.get", ["profile_id": .string(Self.merged)]).object("attributes") == ["plan": "equal"])
        await third.stop()
    }

    @Test func theyTravelWithATenantsExportAndRestore() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let alice = try await Self.populate(server, keys: keys)
            let admin = try await server.admin()
            #expect(try await admin.call("tenant.snapshot", ["project": "acme", "path": "acme.snap"]).isSuccess)
            let clone = try await admin.call("tenant.restore", ["project": "acme-copy", "path": "acme.snap"])
            let fresh = try #require(clone.object("keys"))
            let cloneKeys = (publicKey: try #require(fresh.string("public")), secretKey: try #require(fresh.string("secret")))
            try await Self.expectKept(server, keys: cloneKeys, alice: alice)
            // The original is its own tenant: the clone's update did not reach it.
            let original = try server.connect()
            try await original.hello(keys.secretKey)
            #expect(try await original.call("profile.get", ["profile_id": .string(Self.own)]).object("attributes") == ["plan": "gold"])
        }
    }
}
