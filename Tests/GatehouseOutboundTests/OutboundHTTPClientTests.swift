import GatehouseHTTP
import GatehouseOutbound
import GatehousePosix
import GatehouseTesting
import Synchronization
import Testing

/// The libcurl client against a loopback server: what it sends, what it answers, and each way a
/// request can fail.
@Suite struct OutboundHTTPClientTests {
    /// Runs `body` with a client and a server answering with `handler`, and closes both after.
    func withServer<T>(
        _ handler: @escaping LoopbackHTTPServer.Handler, _ body: (OutboundHTTPClient, LoopbackHTTPServer) async throws -> T
    ) async throws -> T {
        let server = try LoopbackHTTPServer(handler: handler)
        let client = OutboundHTTPClient()
        defer { server.stop() }
        do {
            let result = try await body(client, server)
            await client.close()
            return result
        } catch {
            await client.close()
            throw error
        }
    }

    @Test func sendsTheMethodHeadersAndBodyAndAnswersTheResponse() async throws {
        let received = Mutex<HTTPRequest?>(nil)
        let result = try await withServer({ request in
            received.withLock { $0 = request }
            return .json(201, #"{"ok":true}"#, headers: [(name: "X-Reply", value: "yes")])
        }) { client, server in
            await client.send(
                OutboundRequest(
                    method: "POST", url: server.baseURL + "/hooks/1?x=1",
                    headers: HTTPHeaders([(name: "Content-Type", value: "application/json"), (name: "X-Test", value: "a b")]),
                    body: Array(#"{"event":1}"#.utf8)))
        }
        let response = try result.get()
        #expect(response.status == 201)
        #expect(response.headers["x-reply"] == "yes")
        #expect(response.body == Array(#"{"ok":true}"#.utf8))
        let request = try #require(received.withLock { $0 })
        #expect(request.method == "POST")
        #expect(request.target == "/hooks/1?x=1")
        #expect(request.headers["X-Test"] == "a b")
        #expect(request.headers["Content-Type"] == "application/json")
        #expect(request.headers["User-Agent"] == "gatehouse")
        #expect(request.headers["Expect"] == nil)
        #expect(request.body == Array(#"{"event":1}"#.utf8))
    }

    @Test func anErrorStatusIsAnAnswerNotAFailure() async throws {
        let result = try await withServer({ _ in .json(503, "{}") }) { client, server in
            await client.send(OutboundRequest(url: server.baseURL + "/"))
        }
        #expect(try result.get().status == 503)
    }

    @Test func requestsToOneHostShareAConnection() async throws {
        let statuses = try await withServer({ _ in .json(200, "{}") }) { client, server in
            var statuses: [Int] = []
            for index in 0..<3 {
                statuses.append(try await client.send(OutboundRequest(url: server.baseURL + "/\(index)")).get().status)
            }
            #expect(server.acceptedConnections == 1)
            return statuses
        }
        #expect(statuses == [200, 200, 200])
    }

    @Test func concurrentRequestsAreAllAnswered() async throws {
        let answered = try await withServer({ request in .json(200, #"{"path":"\#(request.path)"}"#) }) { client, server in
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        let body = try await client.send(OutboundRequest(url: server.baseURL + "/\(index)")).get().body
                        return body == Array(#"{"path":"/\#(index)"}"#.utf8)
                    }
                }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
        }
        #expect(answered == 20)
    }

    @Test func aPortNobodyListensOnCannotConnect() async throws {
        let client = OutboundHTTPClient()
        let result = await client.send(OutboundRequest(url: "http://127.0.0.1:\(try closedPort())/"))
        await client.close()
        #expect(result.failure?.code == .cannotConnect, "\(result)")
    }

    @Test func anAnswerSlowerThanTheTimeoutTimesOut() async throws {
        let result = try await withServer({ _ in .respond(.json(200, []), delay: .seconds(10)) }) { client, server in
            await client.send(OutboundRequest(url: server.baseURL + "/", timeout: .milliseconds(200)))
        }
        #expect(result.failure?.code == .timedOut, "\(result)")
    }

    @Test func aConnectionClosedWithoutAnAnswerIsLost() async throws {
        let result = try await withServer({ _ in .drop }) { client, server in
            await client.send(OutboundRequest(url: server.baseURL + "/"))
        }
        #expect(result.failure?.code == .connectionLost, "\(result)")
    }

    @Test func aBodyOverTheLimitIsRefused() async throws {
        let result = try await withServer({ _ in .respond(.json(200, [UInt8](repeating: 32, count: 2000))) }) { client, server in
            await client.send(OutboundRequest(url: server.baseURL + "/", responseBytesMax: 1000))
        }
        #expect(result.failure?.code == .responseTooLarge, "\(result)")
    }

    @Test func aChunkedBodyOverTheLimitIsRefusedAsItArrives() async throws {
        let chunk = String(repeating: "x", count: 600)
        let raw = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n258\r\n\(chunk)\r\n258\r\n\(chunk)\r\n0\r\n\r\n"
        let (over, under) = try await withServer({ _ in .raw(Array(raw.utf8)) }) { client, server in
            let over = await client.send(OutboundRequest(url: server.baseURL + "/", responseBytesMax: 1000))
            let under = await client.send(OutboundRequest(url: server.baseURL + "/", responseBytesMax: 1200))
            return (over, under)
        }
        #expect(over.failure?.code == .responseTooLarge, "\(over)")
        #expect(try under.get().body.count == 1200)
    }

    @Test(arguments: [
        OutboundRequest(url: "/", headers: HTTPHeaders([(name: "X-Evil", value: "a\r\nX-Injected: 1")])),
        OutboundRequest(url: "/", headers: HTTPHeaders([(name: "Bad Name", value: "1")])),
        OutboundRequest(method: "GET /x", url: "/"),
        OutboundRequest(url: "/ with space"),
        OutboundRequest(url: "/", timeout: .zero),
    ])
    func aRequestThatCannotBeSentIsRefusedUnsent(request: OutboundRequest) async throws {
        let (result, seen) = try await withServer({ _ in .json(200, "{}") }) { client, server in
            var request = request
            request.url = server.baseURL + request.url
            let result = await client.send(request)
            return (result, server.acceptedConnections)
        }
        #expect(result.failure?.code == .invalidRequest, "\(result)")
        #expect(seen == 0)
    }

    @Test func aSchemeOtherThanHTTPIsRefused() async throws {
        let client = OutboundHTTPClient()
        let result = await client.send(OutboundRequest(url: "file:///etc/passwd"))
        await client.close()
        #expect(result.failure?.code == .invalidRequest, "\(result)")
    }

    @Test func closingFailsWhatIsUnderWayAndEverythingAfter() async throws {
        let (arrived, arrival) = AsyncStream.makeStream(of: Void.self)
        let server = try LoopbackHTTPServer { _ in
            arrival.yield()
            return .respond(.json(200, []), delay: .seconds(10))
        }
        defer { server.stop() }
        let client = OutboundHTTPClient()
        let pending = Task { await client.send(OutboundRequest(url: server.baseURL + "/")) }
        for await _ in arrived { break }
        await client.close()
        #expect(await pending.value.failure?.code == .closed)
        #expect(await client.send(OutboundRequest(url: server.baseURL + "/")).failure?.code == .closed)
        await client.close()  // a second close returns at once
    }

    @Test func aClientClosedBeforeItsFirstRequestRefusesEveryLaterOne() async throws {
        // Its thread starts with the first request; closing one that never sent starts none.
        let client = OutboundHTTPClient()
        await client.close()
        let refused = await client.send(OutboundRequest(url: "http://127.0.0.1:\(try closedPort())/"))
        #expect(refused.failure?.code == .closed, "\(refused)")
        await client.close()
    }

    @Test func cancellingTheTaskEndsItsRequest() async throws {
        let (arrived, arrival) = AsyncStream.makeStream(of: Void.self)
        let result = try await withServer({ _ in
            arrival.yield()
            return .respond(.json(200, []), delay: .seconds(10))
        }) { client, server in
            let pending = Task { await client.send(OutboundRequest(url: server.baseURL + "/")) }
            for await _ in arrived { break }
            pending.cancel()
            return await pending.value
        }
        #expect(result.failure?.code == .cancelled, "\(result)")
    }
}

/// A loopback port that was just free: bound, read, closed.
func closedPort() throws -> UInt16 {
    let socket = try Socket.listen(on: SocketAddress.resolve(HostPort(host: "127.0.0.1", port: 0)))
    defer { socket.close() }
    return try socket.localAddress().port
}

extension Result {
    var failure: Failure? {
        if case .failure(let failure) = self { failure } else { nil }
    }
}
