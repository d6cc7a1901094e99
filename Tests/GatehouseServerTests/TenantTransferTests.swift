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
    /// `path` is where the server says the file is; restores name it `acme-1.snap`.
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
            #expect(path == server.dataPath + "/exports/acme-1.snap", "the default name is <project>-<cursor>.snap")
            #expect(answer.int("cursor") == 1)
            #expect(answer.int("profiles") == 0)
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(answer.int("bytes") == Int64(data.count))
            #expect(answer.string("sha256")?.count == 64)
            let admin = try await server.admin()
            #expect(try await admin.call("tenant.snapshot", ["project": "nope"]).errorCode == .notFound)
        }
    }

    @Test func aPlainNameLandsInTheExportsDirectoryAndRestoresByName() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let admin = try await server.admin()
            let answer = try await admin.call("tenant.snapshot", ["project": "acme", "path": "before the move.snap"])
            #expect(answer.string("path") == server.dataPath + "/exports/before the move.snap")
            #expect(FileManager.default.fileExists(atPath: server.dataPath + "/exports/before the move.snap"))
            let clone = try await admin.call("tenant.restore", ["project": "acme-copy", "path": "before the move.snap"])
            #expect(clone.isSuccess, "\(clone)")
            #expect(try await admin.call("tenant.restore", ["project": "acme", "path": "before the move.snap", "replace": true]).isSuccess)
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
        }
    }

    @Test func theExportsDirectoryCanLiveOutsideTheDataDirectoryAndIsCreatedPrivate() async throws {
        try await withTemporaryDirectory { place in
            let exports = place.appending("backups/gatehouse")
            try await withTestServer({ $0.exportsDirectory = exports }) { server in
                var status = stat()
                #expect(stat(exports, &status) == 0)
                #expect(status.st_mode & 0o777 == 0o700)
                _ = try await server.createProject("acme")
                let admin = try await server.admin()
                let standard = try await admin.call("tenant.snapshot", ["project": "acme"])
                #expect(standard.string("path") == exports + "/acme-\(standard.int("cursor") ?? -1).snap")
                #expect(try await admin.call("tenant.snapshot", ["project": "acme", "path": "named.snap"]).string("path")
                    == exports + "/named.snap")
                #expect(!FileManager.default.fileExists(atPath: server.dataPath + "/exports"))
                #expect(try await admin.call("tenant.restore", ["project": "acme-copy", "path": "named.snap"]).isSuccess)
            }
        }
    }

    /// A path next to the test's temporary directory, outside everything the server owns.
    static func escape(_ server: TestServer) -> String { server.dataDirectory.path + "-escaped.snap" }

    /// Names that would leave the exports directory, and names it must not hold: empty, `.`,
    /// control characters, the server's own temporary files, longer than 251 bytes.
    static func refusedNames(_ server: TestServer) -> [String] {
        [server.dataPath + "/MANIFEST", server.dataPath + "/exports/../MANIFEST", server.dataPath + "/wal/x.snap", Self.escape(server),
         "a/b", "..", "../x", "x/../y", "./x", ".", "", "x\u{0}y", "x\ny", "x.snap.tmp", String(repeating: "n", count: 252)]
    }

    @Test func snapshotToAPathOutsideTheExportsDirectoryIsBadRequestAndWritesNothing() async throws {
        try await withTestServer { server in
            _ = try await server.createProject("acme")
            let admin = try await server.admin()
            let before = try Self.files(under: server.dataDirectory.path)
            for name in Self.refusedNames(server) {
                let answer = try await admin.call("tenant.snapshot", ["project": "acme", "path": .string(name)])
                #expect(answer.errorCode == .badRequest, "\(name.debugDescription): \(answer)")
                #expect(answer.object("error")?.string("message")?.hasPrefix("path: ") == true)
            }
            for written in [Self.escape(server), server.dataPath + "/wal/x.snap", server.dataPath + "/wal/x.snap.tmp"] {
                #expect(!FileManager.default.fileExists(atPath: written), "\(written)")
            }
            #expect(try Self.files(under: server.dataDirectory.path) == before, "no file was written or replaced")
            let longest = String(repeating: "n", count: 251)
            #expect(try await admin.call("tenant.snapshot", ["project": "acme", "path": .string(longest)]).isSuccess)
        }
    }

    @Test func restoreFromAPathOutsideTheExportsDirectoryIsBadRequestAndRestoresNothing() async throws {
        try await withTestServer { server in
            let (_, path, _) = try await Self.exported(server)
            // A valid snapshot outside the exports directory, where each path below reaches it.
            try await TestFiles.copy(path, to: server.dataPath + "/outside.snap")
            let admin = try await server.admin()
            for name in [server.dataPath + "/outside.snap", "../outside.snap", "../exports/acme-1.snap", path, "./acme-1.snap"]
                + Self.refusedNames(server)
            {
                let answer = try await admin.call("tenant.restore", ["project": "fresh", "path": .string(name)])
                #expect(answer.errorCode == .badRequest, "\(name.debugDescription): \(answer)")
            }
            #expect(try await admin.call("project.get", ["project": "fresh"]).errorCode == .notFound)
            #expect(try await admin.call("tenant.restore", ["project": "fresh", "path": "acme-1.snap"]).isSuccess)
        }
    }

    /// Every file below `root` with its size and modification time, but for the log's segments,
    /// which the log's own threads prepare and write when they please.
    static func files(under root: String) throws -> [String: String] {
        var found: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            if relative.hasPrefix("data/wal/") { continue }
            let attributes = try FileManager.default.attributesOfItem(atPath: root + "/" + relative)
            found[relative] = "\(attributes[.size] ?? 0) \(attributes[.modificationDate] ?? 0)"
        }
        return found
    }

    @Test func restoreOnAnotherServerKeepsKeysConfigAndCursor() async throws {
        let source = try await TestServer.start()
        let (keys, path, _) = try await Self.exported(source)
        try await withTestServer { target in
            // The operator copies the file into the target's exports directory.
            try await TestFiles.copy(path, to: target.dataPath + "/exports/moved.snap")
            let admin = try await target.admin()
            let restored = try await admin.call("tenant.restore", ["project": "acme", "path": "moved.snap"])
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
            let (keys, _, _) = try await Self.exported(server)
            let admin = try await server.admin()
            let clone = try await admin.call("tenant.restore", ["project": "acme-copy", "path": "acme-1.snap"])
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
            let (keys, _, _) = try await Self.exported(server)
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
            for index in 0..<3 {
                #expect(try await backend.call("config.put", ["config": ["entitlements": [["id": .string("n\(index)")]]]]).isSuccess)
            }
            let admin = try await server.admin()
            #expect(try await admin.call("tenant.restore", ["project": "acme", "path": "acme-1.snap"]).errorCode == .conflict)
            #expect(try await backend.call("config.get").object("config")?["entitlements"] == [["id": "n2"]], "conflict changed nothing")
            let replaced = try await admin.call("tenant.restore", ["project": "acme", "path": "acme-1.snap", "replace": true])
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
            try await TestFiles.write(bytes, to: server.dataPath + "/exports/damaged.snap")
            try await TestFiles.write(Data("not a snapshot".utf8), to: server.dataPath + "/exports/garbage.snap")
            let admin = try await server.admin()
            for file in ["damaged.snap", "garbage.snap"] {
                #expect(try await admin.call("tenant.restore", ["project": "fresh", "path": .string(file)]).errorCode == .badRequest)
            }
            #expect(try await admin.call("tenant.restore", ["project": "fresh", "path": "missing.snap"]).errorCode == .notFound)
            #expect(try await admin.call("project.get", ["project": "fresh"]).errorCode == .notFound)
            #expect(try await admin.call("tenant.restore", ["project": "Bad Id", "path": "acme-1.snap"]).errorCode == .badRequest)
            #expect(try await admin.call("tenant.restore", ["project": "x"]).errorCode == .badRequest)
        }
    }

    @Test func aRestoreRefusedByAFullDiskChangesNothingAndLeavesNoStagedFile() async throws {
        let disk = FaultyFileSystem()
        try await withTestServer({
            $0.fileSystem = disk
            $0.diskReserveBytes = 1 << 20
        }) { server in
            _ = try await server.createProject("acme")
            let admin = try await server.admin()
            #expect(try await admin.call("tenant.snapshot", ["project": "acme", "path": "acme.snap"]).isSuccess)
            // The state is staged as a snapshot file first; the log record that would make it count is refused.
            disk.reportedFreeBytes = 1000
            #expect(try await DiskFull.waitFor(admin, readOnly: true))
            #expect(try await admin.call("tenant.restore", ["project": "copy", "path": "acme.snap"]).errorCode == .readOnly)
            #expect(try await admin.call("project.get", ["project": "copy"]).errorCode == .notFound)
            #expect(!disk.names(in: server.dataPath + "/snapshots").contains { $0.hasPrefix("restore-") }, "the staged file is removed")
        }
    }

    @Test func tenantOpsAreForTheAdminOnly() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
            for op in ["tenant.snapshot", "tenant.restore", "server.checkpoint"] {
                #expect(try await backend.call(op, ["project": "acme", "path": "x.snap"]).errorCode == .forbidden)
            }
        }
    }
}
