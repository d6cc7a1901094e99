import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// `tenant.snapshot` and `tenant.restore` (PROTOCOL.md, "Operators").
@Suite struct TenantTransfer {
    static let config: JSONValue = ["entitlements": [["id": "pro"]], "login": "switch"]

    /// A project with a config, its keys, and a snapshot file of it.
    static func exported(_ server: TestServer) async throws -> (keys: (publicKey: String, secretKey: String), path: String, answer: JSONObject) {
        let keys = try await server.createProject("acme")
        let backend = try server.connect()
        try await backend.hello(keys.secretKey)
        #expect(try await backend.call("config.put", ["config": config]).isSuccess)
        let admin = try await server.admin()
        let answer = try await admin.call("tenant.snapshot", ["project": "acme"])
        #expect(answer.isSuccess)
        return (keys, try #require(answer.string("path")), answer)
    }

    @Test func snapshotAnswersPathCursorProfilesBytesAndDigest() async throws {
        try await withTestServer { server in
            let (_, path, answer) = try await Self.exported(server)
            #expect(path.hasPrefix(server.dataPath + "/exports/acme-"))
            #expect(answer.int("cursor") == 1)
            #expect(answer.int("profiles") == 0)
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(answer.int("bytes") == Int64(data.count))
            #expect(answer.string("sha256")?.count == 64)
            let custom = server.dataDirectory.appending("custom.snap")
            let admin = try await server.admin()
            #expect(try await admin.call("tenant.snapshot", ["project": "acme", "path": .string(custom)]).string("path") == custom)
            #expect(try await admin.call("tenant.snapshot", ["project": "nope"]).errorCode == .notFound)
        }
    }

    @Test func restoreOnAnotherServerKeepsKeysConfigAndCursor() async throws {
        let source = try TestServer()
        let (keys, path, _) = try await Self.exported(source)
        let copy = source.dataDirectory.appending("moved.snap")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try await withTestServer { target in
            let admin = try await target.admin()
            let restored = try await admin.call("tenant.restore", ["project": "acme", "path": .string(copy)])
            #expect(restored.isSuccess)
            #expect(restored.string("project") == "acme")
            #expect(restored.int("cursor") == 1)
            #expect(restored["keys"] == nil, "the same id keeps its keys")
            let sdk = try target.connect()
            try await sdk.hello(keys.publicKey)
            #expect(try await sdk.call("config.get").object("config")?["login"] == "switch")
            // And it is durable: it survives a restart of the target.
            let restarted = try await target.restart()
            let sdk2 = try restarted.connect()
            try await sdk2.hello(keys.secretKey)
            #expect(try await sdk2.call("config.get").object("config")?["login"] == "switch")
            await restarted.server.shutdown()
        }
        await source.stop()
    }

    @Test func restoreUnderAnotherIDIsACloneWithFreshKeys() async throws {
        try await withTestServer { server in
            let (keys, path, _) = try await Self.exported(server)
            let admin = try await server.admin()
            let clone = try await admin.call("tenant.restore", ["project": "acme-copy", "path": .string(path)])
            #expect(clone.isSuccess)
            let fresh = try #require(clone.object("keys"))
            let secret = try #require(fresh.string("secret"))
            #expect(secret.hasPrefix("sk_acme-copy_"))
            #expect(secret != keys.secretKey)
            let backend = try server.connect()
            try await backend.hello(secret)
            #expect(try await backend.call("config.get").object("config")?["login"] == "switch")
            // The original is untouched and still answers to its own keys.
            let original = try server.connect()
            try await original.hello(keys.secretKey)
        }
    }

    @Test func restoreOverALiveProjectNeedsReplaceAndMovesTheCursorForward() async throws {
        try await withTestServer { server in
            let (keys, path, _) = try await Self.exported(server)
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
            for index in 0..<3 {
                #expect(try await backend.call("config.put", ["config": ["entitlements": [["id": .string("n\(index)")]]]]).isSuccess)
            }
            let admin = try await server.admin()
            #expect(try await admin.call("tenant.restore", ["project": "acme", "path": .string(path)]).errorCode == .conflict)
            #expect(try await backend.call("config.get").object("config")?["entitlements"] == [["id": "n2"]], "conflict changed nothing")
            let replaced = try await admin.call("tenant.restore", ["project": "acme", "path": .string(path), "replace": true])
            #expect(replaced.isSuccess)
            #expect((replaced.int("cursor") ?? 0) > 4, "a cursor never goes back, also across a restore")
            #expect(try await backend.call("config.get").errorCode == .unauthenticated, "sessions of the replaced tenant end")
            try await backend.hello(keys.secretKey)
            #expect(try await backend.call("config.get").object("config")?["login"] == "switch")
        }
    }

    @Test func fileThatIsNotASnapshotIsBadRequestAndChangesNothing() async throws {
        try await withTestServer { server in
            let (_, path, _) = try await Self.exported(server)
            var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            bytes[bytes.count / 2] ^= 0x40
            let damaged = server.dataDirectory.appending("damaged.snap")
            try bytes.write(to: URL(fileURLWithPath: damaged))
            let garbage = server.dataDirectory.appending("garbage.snap")
            try Data("not a snapshot".utf8).write(to: URL(fileURLWithPath: garbage))
            let admin = try await server.admin()
            for file in [damaged, garbage] {
                #expect(try await admin.call("tenant.restore", ["project": "fresh", "path": .string(file)]).errorCode == .badRequest)
            }
            #expect(try await admin.call("tenant.restore", ["project": "fresh", "path": "/nonexistent/x.snap"]).errorCode == .notFound)
            #expect(try await admin.call("project.get", ["project": "fresh"]).errorCode == .notFound)
            #expect(try await admin.call("tenant.restore", ["project": "Bad Id", "path": .string(path)]).errorCode == .badRequest)
            #expect(try await admin.call("tenant.restore", ["project": "x"]).errorCode == .badRequest)
        }
    }

    @Test func tenantOpsAreForTheAdminOnly() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
            for op in ["tenant.snapshot", "tenant.restore", "server.checkpoint"] {
                #expect(try await backend.call(op, ["project": "acme", "path": "/tmp/x"]).errorCode == .forbidden)
            }
        }
    }
}
