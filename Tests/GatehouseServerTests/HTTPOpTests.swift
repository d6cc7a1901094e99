import GatehouseCore
import GatehouseHTTP
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// `POST /v1/op` (HTTP.md, "Gatehouse's own endpoints"): one request object of PROTOCOL.md,
/// run under the bearer key's role as the line runs it; the body is the line's answer byte for
/// byte, the status maps its error code.
@Suite struct HTTPOp {
    static func post(_ client: TestHTTPClient, key: String?, _ body: String) async throws -> HTTPParsedResponse {
        let headers = key.map { [("Authorization", "Bearer \($0)")] } ?? []
        return try await client.request("POST", "/v1/op", headers: headers, body: body)
    }

    /// A well-formed profile id of no project's (its tag is not acme's: `forbidden`).
    static let unknownProfile = "gh_" + String(repeating: "A", count: 26)

    /// The line's answer to `request` on a connection that said hello with `key`, without its newline.
    static func lineAnswer(_ server: TestServer, key: String, _ request: String) async throws -> String {
        let client = try server.connect()
        try await client.hello(key)
        try await client.send(request)
        let line = try #require(try await client.readLine())
        await client.close()
        return line
    }

    @Test func theAnswerIsTheLinesByteForByte() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let client = try HTTPListener.connect(server)
            for request in [
                #"{"id":7,"op":"config.get"}"#, #"{"op":"config.get"}"#, #"{"id":"x","op":"profile.get","profile_id":"\#(Self.unknownProfile)"}"#,
                #"{"id":[1],"op":"config.get"}"#, #"{"id":8,"op":"nope"}"#,
            ] {
                let http = try await Self.post(client, key: keys.secretKey, request)
                #expect(http.bodyText == (try await Self.lineAnswer(server, key: keys.secretKey, request)), "\(request)")
                #expect(http.headers["Content-Type"] == "application/json; charset=utf-8")
            }
            let noID = try await Self.post(client, key: keys.secretKey, #"{"op":"config.get"}"#)
            #expect(noID.bodyText.hasPrefix(#"{"id":null,"ok":true"#))
        }
    }

    @Test func anOpOfEveryRoleRunsWithItsKey() async throws {
        try await withTestServer { server in
            let client = try HTTPListener.connect(server)
            let created = try await Self.post(client, key: TestServer.adminKey, #"{"op":"project.create","project":"acme"}"#)
            #expect(created.status == 200)
            let keys = try #require(try HTTPListener.json(created).object("keys"))
            let publicKey = try #require(keys.string("public"))
            let secretKey = try #require(keys.string("secret"))
            let config = #"{"op":"config.put","config":{"currencies":[{"code":"COINS","name":"Coins"}]}}"#
            #expect(try await Self.post(client, key: secretKey, config).status == 200)
            let profile = try await Self.post(client, key: publicKey, #"{"op":"profile.create"}"#)
            #expect(profile.status == 200)
            let id = try #require(try HTTPListener.json(profile).object("profile")?.string("profile_id"))
            let credit = #"{"op":"currency.transact","profile_id":"\#(id)","currency":"COINS","amount":5,"idempotency_key":"a"}"#
            let credited = try await Self.post(client, key: secretKey, credit)
            #expect(credited.status == 200)
            #expect(try HTTPListener.json(credited).int("balance") == 5)
            // The line sees what HTTP wrote: both listeners serve the same data.
            let line = try server.connect()
            try await line.hello(secretKey)
            #expect(try await line.call("profile.get", ["profile_id": .string(id)]).object("currencies")?.int("COINS") == 5)
        }
    }

    @Test func eachErrorCodeHasItsStatus() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let client = try HTTPListener.connect(server)
            let secret = keys.secretKey
            _ = try await Self.post(client, key: secret, #"{"op":"config.put","config":{"currencies":[{"code":"COINS","name":"Coins"}]}}"#)
            let id = try #require(try HTTPListener.json(try await Self.post(client, key: keys.publicKey, #"{"op":"profile.create"}"#))
                .object("profile")?.string("profile_id"))
            let cases: [(key: String?, body: String, status: Int, code: String)] = [
                (secret, "{not json", 400, "bad_json"),
                (secret, #"{"op":"config.put"}"#, 400, "bad_request"),
                (nil, #"{"op":"ping"}"#, 401, "unauthenticated"),
                ("sk_acme_not_the_key_at_all_000000000000", #"{"id":3,"op":"ping"}"#, 401, "unauthorized"),
                (keys.publicKey, #"{"op":"config.put","config":{}}"#, 403, "forbidden"),
                (secret, #"{"op":"profile.get","customer_user_id":"nobody"}"#, 404, "not_found"),
                (secret, #"{"op":"profile.get","profile_id":"\#(Self.unknownProfile)"}"#, 403, "forbidden"),
                (secret, #"{"op":"frobnicate"}"#, 404, "unknown_op"),
                (secret, #"{"op":"currency.transact","profile_id":"\#(id)","currency":"COINS","amount":-1,"idempotency_key":"x"}"#,
                 409, "insufficient_funds"),
                (secret, #"{"op":"hello","key":"\#(secret)"}"#, 400, "bad_request"),
                (secret, #"{"op":"watch","profile_id":"\#(id)"}"#, 400, "bad_request"),
                (secret, #"{"op":"unwatch","profile_id":"\#(id)"}"#, 400, "bad_request"),
            ]
            for (key, body, status, code) in cases {
                let response = try await Self.post(client, key: key, body)
                #expect(response.status == status, "\(body)")
                #expect(try HTTPListener.json(response).object("error")?.string("code") == code, "\(body)")
                if status == 401 { #expect(response.headers["WWW-Authenticate"] == "Bearer") }
            }
            let unauthorized = try HTTPListener.json(try await Self.post(client, key: "sk_acme_nope", #"{"id":3,"op":"ping"}"#))
            #expect(unauthorized["id"] == 3, "the request's id, as the line would answer it")
            let after = try await Self.post(client, key: secret, #"{"op":"profile.get","profile_id":"\#(id)"}"#)
            #expect(try HTTPListener.json(after).object("currencies")?.int("COINS") == 0, "nothing above changed the balance")
        }
    }

    @Test func whileReadOnlyWritesAre503WithRetryAfterAndReadsWork() async throws {
        try await DiskFull.run { disk, server in
            let keys = try await server.createProject("acme")
            let client = try HTTPListener.connect(server)
            disk.reportedFreeBytes = 1000
            let admin = try await server.admin()
            #expect(try await DiskFull.waitFor(admin, readOnly: true))
            let refused = try await Self.post(client, key: keys.secretKey, #"{"op":"config.put","config":{"entitlements":[{"id":"x"}]}}"#)
            #expect(refused.status == 503)
            #expect(refused.headers["Retry-After"] == "30")
            #expect(try await Self.post(client, key: keys.secretKey, #"{"op":"config.get"}"#).status == 200)
            disk.reportedFreeBytes = nil
            #expect(try await DiskFull.waitFor(admin, readOnly: false))
        }
    }

    @Test func aWriteIsAnsweredOnlyOnceItIsDurable() async throws {
        try await AnswerDurability.withHeldDisk { disk, server in
            let c = try await CurrencyFixture.make(server)
            let id = try await c.f.create().id
            disk.holdSyncs()
            let client = try HTTPListener.connect(server)
            let credit = #"{"op":"currency.transact","profile_id":"\#(id)","currency":"COINS","amount":5,"idempotency_key":"a"}"#
            try await client.send("POST", "/v1/op", headers: [("Authorization", "Bearer \(c.f.keys.secretKey)")], body: Array(credit.utf8))
            try await AnswerDurability.eventually("the write waits for its sync") { disk.syncsWaiting > 0 }
            #expect(try await !client.hasUnreadInput(), "no answer before the sync")
            disk.releaseSyncs()
            let response = try #require(try await client.readResponse())
            #expect(response.status == 200)
            #expect(try HTTPListener.json(response).int("balance") == 5)
        }
    }
}
