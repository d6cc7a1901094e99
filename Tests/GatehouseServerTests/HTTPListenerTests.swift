import GatehouseCore
import GatehouseHTTP
@testable import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// The HTTP listener's transport (HTTP.md, "Transport"): keep-alive and pipelining in order,
/// both body framings, every limit with its status, request ids, and the deadlines, on a clock
/// the test moves. Everything over real loopback sockets to the server's own event loops.
@Suite struct HTTPListener {
    /// A client whose reads give up after 10 s: a connection that should have been closed and
    /// was not fails the test instead of hanging it.
    static func connect(_ server: TestServer) throws -> TestHTTPClient {
        try TestHTTPClient(connectingTo: server.httpAddress, timeoutMilliseconds: 10_000)
    }

    static func json(_ response: HTTPParsedResponse) throws -> JSONObject {
        try #require(try JSONParser.parse(response.bodyText).objectValue, "not a JSON object: \(response.bodyText)")
    }

    @Test func healthzAnswersOkWithTheHeadersEveryAnswerCarries() async throws {
        try await withTestServer { server in
            let client = try Self.connect(server)
            let response = try await client.request("GET", "/healthz")
            #expect(response.status == 200)
            #expect(try Self.json(response) == ["status": "ok"])
            #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
            #expect(response.headers["Content-Length"] == "\(response.body.count)")
            let date = try #require(response.headers["Date"])
            #expect(date.hasSuffix(" GMT") && date.count == 29, "IMF-fixdate: \(date)")
            let id = try #require(response.headers["X-Request-Id"])
            #expect(!id.isEmpty)
            let second = try await client.request("GET", "/healthz")
            #expect(second.headers["X-Request-Id"] != id, "a fresh id for each request")
        }
    }

    @Test func aRequestIDIsKeptWhenItIsPrintableAndAtMost128Characters() async throws {
        try await withTestServer { server in
            let client = try Self.connect(server)
            let kept = String(repeating: "a", count: 127) + "Z"
            #expect(try await client.request("GET", "/healthz", headers: [("X-Request-Id", kept)]).headers["X-Request-Id"] == kept)
            let tooLong = String(repeating: "b", count: 129)
            let replaced = try await client.request("GET", "/healthz", headers: [("X-Request-Id", tooLong)])
            #expect(replaced.headers["X-Request-Id"] != tooLong)
            #expect(replaced.headers["X-Request-Id"]?.isEmpty == false)
        }
    }

    @Test func pipelinedRequestsOnOneConnectionAreAnsweredInOrder() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let client = try Self.connect(server)
            let bearer = [("Authorization", "Bearer \(keys.secretKey)")]
            var bytes: [UInt8] = []
            bytes += TestHTTPClient.requestBytes("GET", "/healthz", headers: [("X-Request-Id", "one")])
            bytes += TestHTTPClient.requestBytes("POST", "/v1/op", headers: bearer + [("X-Request-Id", "two")],
                                                body: Array(#"{"id":2,"op":"profile.create"}"#.utf8))
            bytes += TestHTTPClient.requestBytes("GET", "/nowhere", headers: [("X-Request-Id", "three")])
            bytes += TestHTTPClient.requestBytes("POST", "/v1/op", headers: bearer + [("X-Request-Id", "four")],
                                                body: Array(#"{"id":4,"op":"ping"}"#.utf8))
            try await client.send(bytes)
            var ids: [String] = []
            var statuses: [Int] = []
            for _ in 0..<4 {
                let response = try #require(try await client.readResponse())
                ids.append(response.headers["X-Request-Id"] ?? "")
                statuses.append(response.status)
            }
            #expect(ids == ["one", "two", "three", "four"])
            #expect(statuses == [200, 200, 404, 200])
        }
    }

    @Test func pipelinedWritesRunInTheOrderTheyWereSent() async throws {
        try await withTestServer { server in
            let c = try await CurrencyFixture.make(server)
            let profile = try await c.f.create().id
            let client = try Self.connect(server)
            var bytes: [UInt8] = []
            for (index, amount) in [100, -60, -60, 5].enumerated() {
                let body = #"{"id":\#(index),"op":"currency.transact","profile_id":"\#(profile)","currency":"COINS","amount":\#(amount),"idempotency_key":"k\#(index)"}"#
                bytes += TestHTTPClient.requestBytes("POST", "/v1/op", headers: [("Authorization", "Bearer \(c.f.keys.secretKey)")],
                                                    body: Array(body.utf8))
            }
            try await client.send(bytes)
            var outcomes: [String] = []
            for _ in 0..<4 {
                let answer = try Self.json(try #require(try await client.readResponse()))
                outcomes.append(answer.isSuccess ? "\(answer.int("balance") ?? -1)" : answer.errorCode?.rawValue ?? "?")
            }
            #expect(outcomes == ["100", "40", "insufficient_funds", "45"])
        }
    }

    @Test func pipelinedRequestsHeldBackByBackpressureAreAnsweredOnceAnswersDrain() async throws {
        // A tiny high-water mark, so the batch is held in the parser's buffer far past it and
        // must resume as the client reads.
        try await withTestServer({ $0.outputBytesHighWater = 2048 }) { server in
            let client = try Self.connect(server)
            var batch: [UInt8] = []
            for index in 0..<2000 { batch += TestHTTPClient.requestBytes("GET", "/healthz", headers: [("X-Request-Id", "r\(index)")]) }
            try await client.send(batch)
            for index in 0..<2000 {
                let response = try #require(try await client.readResponse())
                #expect(response.headers["X-Request-Id"] == "r\(index)")
            }
        }
    }

    @Test func aChunkedBodyIsReadLikeOneWithAContentLength() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let client = try Self.connect(server)
            let body = #"{"id":"c","op":"ping"}"#
            let half = body.count / 2
            let chunked = "POST /v1/op HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(keys.secretKey)\r\nTransfer-Encoding: chunked\r\n\r\n"
                + String(half, radix: 16) + "\r\n" + body.prefix(half) + "\r\n"
                + String(body.count - half, radix: 16) + ";ext=1\r\n" + body.dropFirst(half) + "\r\n0\r\n\r\n"
            try await client.send(chunked)
            let response = try #require(try await client.readResponse())
            #expect(response.status == 200)
            let answer = try Self.json(response)
            #expect(answer["id"] == "c")
            #expect(answer.isSuccess)
        }
    }

    @Test func expectContinueIsAnswered100ThenTheRequest() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let client = try Self.connect(server)
            let body = #"{"id":1,"op":"ping"}"#
            try await client.send("POST /v1/op HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(keys.secretKey)\r\n"
                + "Content-Length: \(body.utf8.count)\r\nExpect: 100-continue\r\n\r\n")
            #expect(try await client.readResponse()?.status == 100, "the body is asked for before it is sent")
            try await client.send(body)
            let response = try #require(try await client.readResponse())
            #expect(response.status == 200)
            #expect(try Self.json(response).isSuccess)
        }
    }

    @Test func headersOver16KiBAre431AndTheConnectionCloses() async throws {
        try await withTestServer { server in
            let client = try Self.connect(server)
            let response = try await client.request("GET", "/healthz", headers: [("X-Padding", String(repeating: "p", count: 16 * 1024))])
            #expect(response.status == 431)
            #expect(response.headers["Connection"] == "close")
            #expect(try await client.serverClosed())
            #expect(try await Self.connect(server).request("GET", "/healthz").status == 200, "the server goes on")
        }
    }

    @Test func aBodyOverTheLimitIs413AndChangesNothing() async throws {
        try await withTestServer({ $0.httpBodyBytesMax = 1024 }) { server in
            let keys = try await server.createProject("acme")
            let client = try Self.connect(server)
            let big = #"{"op":"config.put","config":{"entitlements":[{"id":"\#(String(repeating: "e", count: 1100))"}]}}"#
            let response = try await client.request("POST", "/v1/op", headers: [("Authorization", "Bearer \(keys.secretKey)")], body: big)
            #expect(response.status == 413)
            #expect(try await client.serverClosed())
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
            #expect(try await backend.call("config.get").object("config")?["entitlements"] == [])
        }
    }

    @Test func garbageIs400ThenAGoodRequestOnANewConnectionWorks() async throws {
        try await withTestServer { server in
            let garbage = try Self.connect(server)
            try await garbage.send([0x16, 0x03, 0x01, 0x00, 0xff] + Array("\r\n\r\nnot http at all\r\n\r\n".utf8))
            let refused = try #require(try await garbage.readResponse())
            #expect(refused.status == 400)
            #expect(try Self.json(refused).object("error")?.string("code") == "bad_request")
            #expect(try await garbage.serverClosed())
            #expect(try await Self.connect(server).request("GET", "/healthz").status == 200)
        }
    }

    @Test func rfc9112RefusalsThatTheParserLetsThrough() async throws {
        try await withTestServer { server in
            for request in [
                "GET /healthz HTTP/1.1\r\n\r\n",  // no Host
                "GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n",  // whitespace before the colon
            ] {
                let client = try Self.connect(server)
                try await client.send(request)
                #expect(try await client.readResponse()?.status == 400, "\(request.debugDescription)")
                #expect(try await client.serverClosed())
            }
            let old = try Self.connect(server)
            try await old.send("GET /healthz HTTP/1.0\r\n\r\n")
            #expect(try await old.readResponse()?.status == 200, "HTTP/1.0 needs no Host")
        }
    }

    @Test func aMethodThePathDoesNotTakeIs405WithAllowAndTheConnectionStaysOpen() async throws {
        try await withTestServer { server in
            let client = try Self.connect(server)
            let refused = try await client.request("DELETE", "/healthz")
            #expect(refused.status == 405)
            #expect(refused.headers["Allow"] == "GET, HEAD")
            let op = try await client.request("GET", "/v1/op")
            #expect(op.status == 405)
            #expect(op.headers["Allow"] == "POST")
            #expect(try await client.request("GET", "/healthz").status == 200, "the same connection")
            let head = try await client.request("HEAD", "/healthz")
            #expect(head.status == 200)
        }
    }

    @Test func unknownPathsAre404() async throws {
        try await withTestServer { server in
            let client = try Self.connect(server)
            for path in ["/", "/healthz/", "/v1/stores/play/acme"] {
                let response = try await client.request("GET", path)
                #expect(response.status == 404, "\(path)")
                #expect(try Self.json(response).object("error")?.string("code") == "not_found")
            }
            // Under /v1/, but for Gatehouse's own paths, a refusal takes RevenueCat's form (HTTP.md).
            let revenueCat = try await client.request("GET", "/v1/nothing")
            #expect(revenueCat.status == 404)
            #expect(try Self.json(revenueCat).int("code") == 7110)
        }
    }

    @Test func aSlowlorisIsAnswered408AtTenSecondsAfterItsFirstByte() async throws {
        let clock = ManualConnectionClock()
        try await withTestServer({ $0.connectionClock = clock }) { server in
            // The whole request before the slow one proves the server has read the slow one's
            // first bytes (they came in the same write): its clock has started.
            let early = try Self.connect(server)
            try await early.send(TestHTTPClient.requestBytes("GET", "/healthz") + Array("GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: ".utf8))
            #expect(try await early.readResponse()?.status == 200)
            clock.advance(.seconds(9))
            try await early.send("b\r\n\r\n")
            #expect(try await early.readResponse()?.status == 200, "nine seconds is not too late")

            let slow = try Self.connect(server)
            try await slow.send(TestHTTPClient.requestBytes("GET", "/healthz") + Array("GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: ".utf8))
            #expect(try await slow.readResponse()?.status == 200)
            clock.advance(.milliseconds(10_001))
            let timedOut = try #require(try await slow.readResponse())
            #expect(timedOut.status == 408)
            #expect(try await slow.serverClosed())
        }
    }

    @Test func anIdleKeepAliveConnectionIsClosedAfterSixtySeconds() async throws {
        let clock = ManualConnectionClock()
        try await withTestServer({ $0.connectionClock = clock }) { server in
            let client = try Self.connect(server)
            #expect(try await client.request("GET", "/healthz").status == 200)
            clock.advance(.seconds(59))
            #expect(try await client.request("GET", "/healthz").status == 200, "not idle long enough")
            clock.advance(.seconds(61))
            #expect(try await client.serverClosed())
        }
    }

    @Test func httpConnectionsCountAgainstTheConnectionLimit() async throws {
        try await withTestServer({ $0.connectionsMax = 1 }) { server in
            let line = try server.connect()
            try await line.hello(TestServer.adminKey)
            let refused = try Self.connect(server)
            let response = try #require(try await refused.readResponse())
            #expect(response.status == 503)
            #expect(response.headers["Retry-After"] == "30")
            #expect(try Self.json(response).object("error")?.string("code") == "overloaded")
            #expect(try await refused.serverClosed())
            await line.close()
        }
    }

    @Test func connectionCloseIsHonouredAfterTheAnswer() async throws {
        try await withTestServer { server in
            let client = try Self.connect(server)
            let response = try await client.request("GET", "/healthz", headers: [("Connection", "close")])
            #expect(response.status == 200)
            #expect(response.headers["Connection"] == "close")
            #expect(try await client.serverClosed())
        }
    }

    @Test func readyzIsReadyThenReadOnlyWhileTheDiskIsFull() async throws {
        try await DiskFull.run { disk, server in
            let client = try Self.connect(server)
            let ready = try await client.request("GET", "/readyz")
            #expect(ready.status == 200)
            #expect(try Self.json(ready) == ["status": "ready"])
            disk.reportedFreeBytes = 1000
            let admin = try await server.admin()
            #expect(try await DiskFull.waitFor(admin, readOnly: true))
            let readOnly = try await client.request("GET", "/readyz")
            #expect(readOnly.status == 503)
            #expect(readOnly.headers["Retry-After"] == "30")
            #expect(try Self.json(readOnly) == ["status": "read_only"])
            #expect(try await client.request("GET", "/healthz").status == 200, "healthy while read-only")
            disk.reportedFreeBytes = nil
            #expect(try await DiskFull.waitFor(admin, readOnly: false))
        }
    }
}
