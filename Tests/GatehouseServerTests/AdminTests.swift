import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// The operator's ops (PROTOCOL.md, "Operators").
@Suite struct Admin {
    @Test func createAnswersTheProjectAndTwoFreshKeys() async throws {
        try await withTestServer { server in
            let admin = try await server.admin()
            let answer = try await admin.call("project.create", ["project": "acme", "name": "Acme Inc."])
            #expect(answer.isSuccess)
            let project = try #require(answer.object("project"))
            #expect(project.string("id") == "acme")
            #expect(project.string("name") == "Acme Inc.")
            #expect(project.int("profiles") == 0)
            let keys = try #require(answer.object("keys"))
            let publicKey = try #require(keys.string("public"))
            let secretKey = try #require(keys.string("secret"))
            #expect(publicKey.hasPrefix("pk_acme_"))
            #expect(secretKey.hasPrefix("sk_acme_"))
            // At least 128 random bits: 32 base62 characters carry 190.
            #expect(publicKey.count - "pk_acme_".count >= 22)
            #expect(publicKey != secretKey)
            let defaultName = try await admin.call("project.create", ["project": "bare"])
            #expect(defaultName.object("project")?.string("name") == "bare")
        }
    }

    @Test(arguments: ["", "UPPER", "-leading", "_leading", "has space", "dot.ted", String(repeating: "a", count: 64), "ünï"])
    func createWithAnInvalidIDIsBadRequest(_ id: String) async throws {
        try await withTestServer { server in
            let admin = try await server.admin()
            #expect(try await admin.call("project.create", ["project": .string(id)]).errorCode == .badRequest)
            #expect(try await admin.call("project.list").object("projects") == nil)
            #expect(try await admin.call("project.list")["projects"] == .array([]))
        }
    }

    @Test func createOfAnExistingIDIsConflictAndKeepsTheFirst() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let admin = try await server.admin()
            #expect(try await admin.call("project.create", ["project": "acme"]).errorCode == .conflict)
            let sdk = try server.connect()
            try await sdk.hello(keys.publicKey)
        }
    }

    @Test func concurrentCreatesOfOneIDHaveExactlyOneWinner() async throws {
        try await withTestServer { server in
            let results = try await withThrowingTaskGroup(of: ErrorCode?.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let admin = try await server.admin()
                        return try await admin.call("project.create", ["project": "race"]).errorCode
                    }
                }
                return try await group.reduce(into: [ErrorCode?]()) { $0.append($1) }
            }
            #expect(results.filter { $0 == nil }.count == 1)
            #expect(results.filter { $0 == .conflict }.count == 7)
        }
    }

    @Test func listAndGetShowProjectsInIDOrder() async throws {
        try await withTestServer { server in
            for id in ["zeta", "alpha", "mid"] { _ = try await server.createProject(id) }
            let admin = try await server.admin()
            let projects = try #require(try await admin.call("project.list")["projects"]?.arrayValue)
            #expect(projects.compactMap { $0.objectValue?.string("id") } == ["alpha", "mid", "zeta"])
            #expect(projects.allSatisfy { $0.objectValue?.int("created_ms") != nil && $0.objectValue?.int("profiles") == 0 })
            let one = try await admin.call("project.get", ["project": "mid"])
            #expect(one.object("project")?.string("id") == "mid")
            #expect(try await admin.call("project.get", ["project": "nope"]).errorCode == .notFound)
            #expect(try await admin.call("project.get").errorCode == .badRequest)
        }
    }

    @Test func deleteRemovesTheProjectAndItsKeysStopAtOnce() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
            let admin = try await server.admin()
            #expect(try await admin.call("project.delete", ["project": "acme"])["deleted"] == true)
            #expect(try await backend.call("config.get").errorCode == .unauthenticated)
            #expect(try await backend.call("hello", ["key": .string(keys.secretKey)]).errorCode == .unauthorized)
            #expect(try await admin.call("project.get", ["project": "acme"]).errorCode == .notFound)
            #expect(try await admin.call("project.delete", ["project": "acme"]).errorCode == .notFound)
            // The id is free again, with new keys.
            let again = try await admin.call("project.create", ["project": "acme"])
            #expect(again.isSuccess)
            #expect(again.object("keys")?.string("secret") != keys.secretKey)
        }
    }

    @Test func rotateKeysReplacesOneKeyAndTheOldOneStopsAtOnce() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let sdk = try server.connect()
            try await sdk.hello(keys.publicKey)
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
            let admin = try await server.admin()
            let answer = try await admin.call("project.rotate_keys", ["project": "acme", "which": "public"])
            let newPublic = try #require(answer.object("keys")?.string("public"))
            #expect(newPublic != keys.publicKey)
            #expect(newPublic.hasPrefix("pk_acme_"))
            #expect(answer.object("keys")?["secret"] == nil)
            // The open sdk session and the old key stop; the secret key is untouched.
            #expect(try await sdk.call("config.get").errorCode == .unauthenticated)
            #expect(try await sdk.call("hello", ["key": .string(keys.publicKey)]).errorCode == .unauthorized)
            try await sdk.hello(newPublic)
            #expect(try await sdk.call("config.get").isSuccess)
            #expect(try await backend.call("config.get").isSuccess)
        }
    }

    /// HTTP.md, "Requests": the public key in the forms RevenueCat's SDKs expect.
    @Test func thePublicKeyHasAnAppleAndAGoogleFormThatActAsIt() async throws {
        try await withTestServer { server in
            let admin = try await server.admin()
            let keys = try #require(try await admin.call("project.create", ["project": "acme"]).object("keys"))
            let publicKey = try #require(keys.string("public"))
            let random = publicKey.dropFirst("pk_acme_".count)
            #expect(keys.string("apple") == "appl_acme_" + random)
            #expect(keys.string("google") == "goog_acme_" + random)
            #expect(keys.keys == ["public", "apple", "google", "secret"])
            for form in ["appl_acme_", "goog_acme_"] {
                let sdk = try server.connect()
                let hello = try await sdk.call("hello", ["key": .string(form + random)])
                #expect(hello.string("role") == "sdk" && hello.string("project") == "acme")
            }
            // Only the public key has them; a test_ form (RevenueCat's simulated store) is no key.
            let secretRandom = try #require(keys.string("secret")).dropFirst("sk_acme_".count)
            for key in ["appl_acme_" + secretRandom, "test_acme_" + random, "appl_acme_" + random.dropLast(), "appl_other_" + random] {
                let sdk = try server.connect()
                #expect(try await sdk.call("hello", ["key": .string(key)]).errorCode == .unauthorized, "\(key)")
            }
            // Rotating the public key replaces all three forms.
            let rotated = try #require(try await admin.call("project.rotate_keys", ["project": "acme", "which": "public"]).object("keys"))
            #expect(rotated.keys == ["public", "apple", "google"])
            let sdk = try server.connect()
            #expect(try await sdk.call("hello", ["key": .string("appl_acme_" + random)]).errorCode == .unauthorized)
            try await sdk.hello(try #require(rotated.string("apple")))
        }
    }

    @Test func rotateKeysValidatesItsParameters() async throws {
        try await withTestServer { server in
            _ = try await server.createProject("acme")
            let admin = try await server.admin()
            #expect(try await admin.call("project.rotate_keys", ["project": "acme", "which": "both"]).errorCode == .badRequest)
            #expect(try await admin.call("project.rotate_keys", ["project": "acme"]).errorCode == .badRequest)
            #expect(try await admin.call("project.rotate_keys", ["project": "nope", "which": "secret"]).errorCode == .notFound)
        }
    }

    @Test func statsReportsConnectionsProjectsAndPolicy() async throws {
        try await withTestServer { server in
            _ = try await server.createProject("acme")
            let admin = try await server.admin()
            let stats = try await admin.call("server.stats")
            #expect(stats.isSuccess)
            #expect(stats.int("projects") == 1)
            #expect(stats.string("fsync") == "always")
            #expect((stats.object("connections")?.int("open") ?? 0) >= 1)
            #expect((stats.int("requests") ?? 0) >= 3)
            #expect(stats.int("uptime_ms") != nil)
            #expect(stats["read_only"] == false)
        }
    }

    @Test func clockAdvanceMovesATestClockAndIsForbiddenOtherwise() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let admin = try await server.admin()
            let before = try #require(try await admin.call("server.stats").int("time_ms"))
            let answer = try await admin.call("clock.advance", ["ms": 86_400_000])
            #expect(answer.int("time_ms") == before + 86_400_000)
            #expect(try await admin.call("server.stats").int("time_ms") == before + 86_400_000)
        }
        try await withTestServer { server in
            let admin = try await server.admin()
            #expect(try await admin.call("clock.advance", ["ms": 1000]).errorCode == .forbidden)
        }
    }
}
