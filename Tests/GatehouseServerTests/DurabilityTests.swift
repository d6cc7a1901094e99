import Foundation
import GatehouseBase
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// What is acknowledged survives a restart (DESIGN.md, "Durability and recovery").
@Suite struct Durability {
    static let config: JSONValue = [
        "entitlements": [["id": "pro"]],
        "products": [["id": "pro_monthly", "type": "subscription", "entitlements": ["pro"]]],
        "stores": ["test": true],
    ]

    @Test func projectsKeysAndConfigSurviveARestart() async throws {
        let first = try await TestServer.start()
        let acme = try await first.createProject("acme")
        let doomed = try await first.createProject("doomed")
        let backend = try first.connect()
        try await backend.hello(acme.secretKey)
        let put = try await backend.call("config.put", ["config": Self.config])
        #expect(put.isSuccess)
        let admin = try await first.admin()
        let rotated = try await admin.call("project.rotate_keys", ["project": "acme", "which": "public"])
        let newPublic = try #require(rotated.object("keys")?.string("public"))
        #expect(try await admin.call("project.delete", ["project": "doomed"]).isSuccess)
        let before = try await admin.call("project.get", ["project": "acme"])

        let second = try await first.restart()
        let admin2 = try await second.admin()
        #expect(try await admin2.call("project.get", ["project": "acme"]) ["project"] == before["project"])
        #expect(try await admin2.call("project.get", ["project": "doomed"]).errorCode == .notFound)
        #expect(try await second.connect().call("hello", ["key": .string(acme.publicKey)]).errorCode == .unauthorized)
        #expect(try await second.connect().call("hello", ["key": .string(doomed.secretKey)]).errorCode == .unauthorized)
        let sdk = try second.connect()
        try await sdk.hello(newPublic)
        var sdkConfig = try #require(put.object("config"))
        sdkConfig["webhooks"] = nil
        sdkConfig["integrations"] = nil
        #expect(try await sdk.call("config.get")["config"] == .object(sdkConfig))
        let backend2 = try second.connect()
        try await backend2.hello(acme.secretKey)
        #expect(try await backend2.call("config.get")["config"] == put["config"])
        await second.stop()
    }

    @Test func checkpointSnapshotsEveryProjectAndChangesAfterItAreReplayed() async throws {
        let first = try await TestServer.start()
        let keys = try await first.createProject("acme")
        _ = try await first.createProject("other")
        let backend = try first.connect()
        try await backend.hello(keys.secretKey)
        #expect(try await backend.call("config.put", ["config": Self.config]).isSuccess)
        let admin = try await first.admin()
        let checkpoint = try await admin.call("server.checkpoint")
        #expect(checkpoint.isSuccess)
        #expect(checkpoint.object("cursor")?.int("acme") == 1)
        #expect(checkpoint.object("cursor")?.int("other") == 0)
        #expect(try await admin.call("server.stats")["last_snapshot_ms"] != .null)
        // A change after the checkpoint must come back from the log, on top of the snapshot.
        #expect(try await backend.call("config.put", ["config": ["entitlements": [["id": "after"]]]]).isSuccess)
        #expect(try await admin.call("project.create", ["project": "late"]).isSuccess)

        let second = try await first.restart()
        let backend2 = try second.connect()
        try await backend2.hello(keys.secretKey)
        let config = try await backend2.call("config.get").object("config")
        #expect(config?["entitlements"] == [["id": "after"]])
        let projects = try await second.admin().call("project.list")["projects"]?.arrayValue?.compactMap { $0.objectValue?.string("id") }
        #expect(projects == ["acme", "late", "other"])
        await second.stop()
    }

    @Test func projectsSnapshotThemselvesAfterEnoughLogAndRecoverFromThat() async throws {
        let first = try await TestServer.start { $0.snapshotAfterLoggedBytes = 1 }
        let keys = try await first.createProject("acme")
        let backend = try first.connect()
        try await backend.hello(keys.secretKey)
        for index in 0..<20 {
            #expect(try await backend.call("config.put", ["config": ["entitlements": [["id": .string("e\(index)")]]]]).isSuccess)
        }
        let second = try await first.restart { $0.snapshotAfterLoggedBytes = 1 }
        let backend2 = try second.connect()
        try await backend2.hello(keys.secretKey)
        #expect(try await backend2.call("config.get").object("config")?["entitlements"] == [["id": "e19"]])
        #expect(try await second.admin().call("project.get", ["project": "acme"]).object("project")?.int("cursor") == 20)
        await second.stop()
    }

    @Test func restartingTwiceInARowLosesNothing() async throws {
        var server = try await TestServer.start()
        let keys = try await server.createProject("acme")
        for round in 0..<3 {
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
            #expect(try await backend.call("config.put", ["config": ["entitlements": [["id": .string("r\(round)")]]]]).isSuccess)
            if round == 1 { #expect(try await server.admin().call("server.checkpoint").isSuccess) }
            server = try await server.restart()
            let check = try server.connect()
            try await check.hello(keys.secretKey)
            #expect(try await check.call("config.get").object("config")?["entitlements"] == [["id": .string("r\(round)")]])
        }
        await server.stop()
    }
}

/// Damage the server must survive or refuse cleanly.
@Suite struct DamagedState {
    @Test func damagedNewestSnapshotFallsBackToThePreviousOneAndTheLog() async throws {
        let first = try await TestServer.start()
        let keys = try await first.createProject("acme")
        let backend = try first.connect()
        try await backend.hello(keys.secretKey)
        let admin = try await first.admin()
        for version in 1...3 {
            #expect(try await backend.call("config.put", ["config": ["entitlements": [["id": .string("v\(version)")]]]]).isSuccess)
            if version < 3 { #expect(try await admin.call("server.checkpoint").isSuccess) }
        }
        await first.server.shutdown()
        // Two snapshots of the project are kept; flip a byte in the middle of the newest.
        let directory = first.dataPath + "/snapshots"
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".snap") }.sorted()
        #expect(names.count == 2)
        let newest = try #require(names.last)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + newest))
        bytes[bytes.count / 2] ^= 0x01
        try await TestFiles.write(bytes, to: directory + "/" + newest)

        let second = try await TestServer.start(dataDirectory: first.dataDirectory)
        let check = try second.connect()
        try await check.hello(keys.secretKey)
        #expect(try await check.call("config.get").object("config")?["entitlements"] == [["id": "v3"]])
        #expect(second.logs.events.contains("recovery.snapshot_fallback"))
        await second.stop()
    }

    @Test func failedFsyncStopsWritesAndAnswersNothingInFlightAndTheDiskRecovers() async throws {
        let disk = FaultyFileSystem()
        let first = try await TestServer.start {
            $0.fileSystem = disk
            // The write that is never answered holds its connection open; do not wait long for it.
            $0.shutdownGrace = .milliseconds(100)
        }
        let keys = try await first.createProject("acme")
        let backend = try first.connect()
        try await backend.hello(keys.secretKey)
        #expect(try await backend.call("config.put", ["config": ["entitlements": [["id": "kept"]]]]).isSuccess)

        disk.failNextSync()
        try await backend.send(#"{"id":"lost","op":"config.put","config":{"entitlements":[{"id":"lost"}]}}"#)
        // fsyncgate: the failure is reported once, and the write in flight is never answered.
        let deadline = ContinuousClock.now + .seconds(10)
        while !first.logs.events.contains("wal.failed"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(first.logs.events.filter { $0 == "wal.failed" }.count == 1)
        let other = try first.connect()
        try await other.hello(keys.secretKey)
        #expect(try await other.call("config.put", ["config": ["entitlements": [["id": "later"]]]]).errorCode == .internal)
        await first.server.shutdown()

        // What reached the disk is what the next start sees: the acknowledged write, never "later".
        let survivor = disk.crash(seed: 7, .dropUnsynced)
        let second = try await TestServer.start(dataDirectory: first.dataDirectory) { $0.fileSystem = survivor }
        let check = try second.connect()
        try await check.hello(keys.secretKey)
        let entitlements = try await check.call("config.get").object("config")?["entitlements"]
        #expect(entitlements == [["id": "kept"]] || entitlements == [["id": "lost"]])
        await second.stop()
    }
}

/// Identity outlives the process and moves with its tenant (issue: profiles and identity).
@Suite struct IdentityDurability {
    /// Two profiles, one merged into the other, with attributes; answers the ids and the token.
    static func populate(_ server: TestServer) async throws -> (kept: String, merged: String, token: String, keys: (publicKey: String, secretKey: String)) {
        let keys = try await server.createProject("acme")
        let sdk = try server.connect()
        try await sdk.hello(keys.publicKey)
        let kept = try #require(try await sdk.call("profile.create", ["customer_user_id": "kate"]).object("profile")?.string("profile_id"))
        let anonymous = try await sdk.call("profile.create")
        let merged = try #require(anonymous.object("profile")?.string("profile_id"))
        let token = try #require(anonymous.object("profile")?.string("app_account_token"))
        #expect(try await sdk.call("profile.attributes", ["profile_id": .string(merged), "attributes": ["$email": "k@x.io"]]).isSuccess)
        #expect(try await sdk.call("profile.identify", ["profile_id": .string(merged), "customer_user_id": "kate"])["switched"] == true)
        return (kept, merged, token, keys)
    }

    static func check(_ server: TestServer, _ ids: (kept: String, merged: String, token: String, keys: (publicKey: String, secretKey: String))) async throws {
        let backend = try server.connect()
        try await backend.hello(ids.keys.secretKey)
        let byAlias = try await backend.call("profile.get", ["profile_id": .string(ids.merged)])
        #expect(byAlias.object("profile")?.string("profile_id") == ids.kept)
        #expect(byAlias.object("profile")?["aliases"] == .array([.string(ids.merged)]))
        #expect(byAlias.object("attributes")?.string("$email") == "k@x.io")
        #expect(try await backend.call("profile.get", ["app_account_token": .string(ids.token)]).object("profile")?.string("profile_id") == ids.kept)
        #expect(try await backend.call("profile.get", ["customer_user_id": "kate"]).object("profile")?.string("profile_id") == ids.kept)
        // The customer user id is still taken: creating with it answers the same profile.
        #expect(try await backend.call("profile.create", ["customer_user_id": "kate"])["created"] == false)
        let events = try await backend.call("events")["events"]?.arrayValue ?? []
        #expect(events.compactMap { $0.objectValue?.string("type") } == ["SUBSCRIBER_ALIAS"])
    }

    @Test func profilesAliasesAndEventsSurviveARestartFromLogAndFromSnapshot() async throws {
        let first = try await TestServer.start()
        let ids = try await Self.populate(first)
        let second = try await first.restart()
        try await Self.check(second, ids)
        #expect(try await second.admin().call("server.checkpoint").isSuccess)
        let third = try await second.restart()
        try await Self.check(third, ids)
        await third.stop()
    }

    @Test func profilesMoveWithATenantSnapshot() async throws {
        let source = try await TestServer.start()
        let ids = try await Self.populate(source)
        let path = try #require(try await source.admin().call("tenant.snapshot", ["project": "acme", "path": "acme.snap"]).string("path"))
        try await withTestServer { target in
            try await TestFiles.copy(path, to: target.dataPath + "/exports/acme.snap")
            #expect(try await target.admin().call("tenant.restore", ["project": "acme", "path": "acme.snap"]).isSuccess)
            try await Self.check(target, ids)
        }
        await source.stop()
    }
}
