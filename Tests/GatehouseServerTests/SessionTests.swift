import GatehouseCore
import GatehouseTesting
import GatehouseWire
import Testing

/// `hello`, the three roles and what each may run (PROTOCOL.md, "Session and roles").
@Suite struct Sessions {
    @Test func opBeforeHelloIsUnauthenticated() async throws {
        try await withTestServer { server in
            let client = try server.connect()
            for op in ["ping", "project.list", "config.get", "server.stats"] {
                #expect(try await client.call(op).errorCode == .unauthenticated, "\(op)")
            }
        }
    }

    @Test func helloAnswersRoleProjectServerAndTime() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let expectations: [(String, String, JSONValue)] = [
                (TestServer.adminKey, "admin", .null),
                (keys.publicKey, "sdk", "acme"),
                (keys.secretKey, "server", "acme"),
            ]
            for (key, role, project) in expectations {
                let client = try server.connect()
                let answer = try await client.call("hello", ["key": .string(key)])
                #expect(answer.isSuccess)
                #expect(answer.string("role") == role)
                #expect(answer["project"] == project)
                #expect(answer.string("server")?.hasPrefix("gatehouse/") == true)
                #expect((answer.int("time_ms") ?? 0) > 1_600_000_000_000)
            }
        }
    }

    @Test(arguments: ["", "nope", "pk_acme_short", "sk_acme_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "pk_other_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"])
    func helloWithAnInvalidKeyIsUnauthorized(_ key: String) async throws {
        try await withTestServer { server in
            _ = try await server.createProject("acme")
            let client = try server.connect()
            #expect(try await client.call("hello", ["key": .string(key)]).errorCode == .unauthorized)
            #expect(try await client.call("ping").errorCode == .unauthenticated)
        }
    }

    @Test func helloWithoutAKeyIsBadRequest() async throws {
        try await withTestServer { server in
            let client = try server.connect()
            #expect(try await client.call("hello").errorCode == .badRequest)
            #expect(try await client.call("hello", ["key": 42]).errorCode == .badRequest)
        }
    }

    @Test func laterHelloReplacesTheRoleAndAFailedOneClearsIt() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let client = try await server.admin()
            #expect(try await client.call("project.list").isSuccess)
            try await client.hello(keys.secretKey)
            #expect(try await client.call("project.list").errorCode == .forbidden)
            #expect(try await client.call("config.get").isSuccess)
            #expect(try await client.call("hello", ["key": "wrong"]).errorCode == .unauthorized)
            #expect(try await client.call("config.get").errorCode == .unauthenticated)
        }
    }

    @Test func eachRoleIsForbiddenTheOpsOfTheOthers() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let adminOps = ["project.create", "project.list", "project.get", "project.delete", "project.rotate_keys",
                            "server.stats", "clock.advance"]
            let sdk = try server.connect()
            try await sdk.hello(keys.publicKey)
            for op in adminOps + ["config.put"] {
                #expect(try await sdk.call(op, ["project": "acme"]).errorCode == .forbidden, "sdk \(op)")
            }
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
            for op in adminOps {
                #expect(try await backend.call(op, ["project": "acme"]).errorCode == .forbidden, "server \(op)")
            }
            let admin = try await server.admin()
            for op in ["config.get", "config.put"] {
                #expect(try await admin.call(op, ["config": [:]]).errorCode == .forbidden, "admin \(op)")
            }
        }
    }

    @Test func pipelinedHelloAppliesToTheRequestsAfterItOnly() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let client = try await server.admin()
            // A deferred op, then hello, then ops that depend on the new role: order decides.
            let lines = [
                #"{"id":1,"op":"project.list"}"#,
                #"{"id":2,"op":"hello","key":"\#(keys.secretKey)"}"#,
                #"{"id":3,"op":"config.get"}"#,
                #"{"id":4,"op":"project.list"}"#,
            ]
            try await client.sendRaw(Array((lines.joined(separator: "\n") + "\n").utf8))
            #expect(try await client.readAnswer().isSuccess)
            #expect(try await client.readAnswer().string("role") == "server")
            #expect(try await client.readAnswer().isSuccess)
            #expect(try await client.readAnswer().errorCode == .forbidden)
        }
    }
}
