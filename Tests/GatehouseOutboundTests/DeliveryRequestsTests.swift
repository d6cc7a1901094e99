import GatehouseBase
import GatehouseCore
import GatehouseHTTP
import GatehouseOutbound
import GatehouseTesting
import Synchronization
import Testing

/// The outbox's requests as a receiver sees them, and what each kind of answer means.
@Suite struct DeliveryRequestsTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let previous = "whsec_" + Base64.encode(Array(repeating: 5, count: 32), alphabet: .standard, padded: true)
    static let body = Array(#"{"api_version":"1.0","event":{"id":"evt_7_0"}}"#.utf8)

    /// Sends `request` to a server answering `reply`, and answers the result with what the server read.
    func exchange(_ reply: LoopbackReply, _ request: (String) throws -> OutboundRequest) async throws
        -> (result: Result<OutboundResponse, OutboundError>, received: HTTPRequest?)
    {
        let received = Mutex<HTTPRequest?>(nil)
        let server = try LoopbackHTTPServer { request in
            received.withLock { $0 = request }
            return reply
        }
        defer { server.stop() }
        let client = OutboundHTTPClient()
        let result = await client.send(try request(server.baseURL + "/hooks"))
        await client.close()
        return (result, received.withLock { $0 })
    }

    func webhook(_ url: String, authorization: String? = nil, previousSecret: String? = nil, allowsPrivate: Bool = true)
        throws -> OutboundRequest
    {
        try DeliveryRequests.webhookRequest(
            url: url, eventID: "evt_7_0", timestampSeconds: 1_700_000_000, body: Self.body, secret: Self.secret,
            previousSecret: previousSecret, authorization: authorization, allowsPrivate: allowsPrivate)
    }

    @Test func aWebhookIsASignedJSONPost() async throws {
        let (result, received) = try await exchange(.json(200, "{}")) { try webhook($0, authorization: "Bearer abc") }
        #expect(DeliveryRequests.webhookAnswer(result) == (.success, 200, nil))
        let request = try #require(received)
        #expect(request.method == "POST")
        #expect(request.path == "/hooks")
        #expect(request.body == Self.body)
        #expect(request.headers["Content-Type"] == "application/json")
        #expect(request.headers["webhook-id"] == "evt_7_0")
        #expect(request.headers["webhook-timestamp"] == "1700000000")
        #expect(request.headers["Authorization"] == "Bearer abc")
        #expect(request.headers["User-Agent"] == "gatehouse-webhooks")
        let expected = try StandardWebhookSignature.signature(
            id: "evt_7_0", timestampSeconds: 1_700_000_000, body: request.body, secret: Self.secret)
        #expect(request.headers["webhook-signature"] == expected)
    }

    @Test func noAuthorizationIsSentWhenTheConfigSetsNone() async throws {
        let (_, received) = try await exchange(.json(200, "{}")) { try webhook($0) }
        let request = try #require(received)
        #expect(request.headers["Authorization"] == nil)
        #expect(request.headers.values("webhook-signature").count == 1)
    }

    @Test func duringARotationBothSecretsSignCurrentFirst() async throws {
        let (_, received) = try await exchange(.json(204, "")) { try webhook($0, previousSecret: Self.previous) }
        let request = try #require(received)
        let sign = { (secret: String) in
            try StandardWebhookSignature.signature(id: "evt_7_0", timestampSeconds: 1_700_000_000, body: Self.body, secret: secret)
        }
        #expect(request.headers["webhook-signature"] == (try sign(Self.secret)) + " " + (try sign(Self.previous)))
    }

    @Test func aMalformedSecretBuildsNoRequest() {
        #expect(throws: OutboundError.self) {
            try DeliveryRequests.webhookRequest(
                url: "https://example.com/", eventID: "evt_1_0", timestampSeconds: 1, body: [], secret: "not-a-secret",
                previousSecret: nil, authorization: nil, allowsPrivate: false)
        }
    }

    @Test func theRequestsCarryTheDeliverySafetyOptions() throws {
        let strict = try webhook("https://example.com/", allowsPrivate: false)
        #expect(strict.schemes == ["https"])
        #expect(strict.addressPolicy == .publicOnly)
        #expect(strict.timeout == .seconds(30))
        #expect(strict.connectTimeout == .seconds(10))
        #expect(strict.responseBytesMax == 64 * 1024)
        #expect(strict.discardsLongBodies)
        let loose = try webhook("http://127.0.0.1/", allowsPrivate: true)
        #expect(loose.schemes == ["http", "https"])
        #expect(loose.addressPolicy == .any)
        let push = DeliveryRequests.oneSignalRequest(url: "https://api.onesignal.com/notifications", apiKey: "k", body: [], allowsPrivate: false)
        #expect(push.schemes == ["https"] && push.addressPolicy == .publicOnly && push.discardsLongBodies)
        #expect(push.timeout == .seconds(30) && push.responseBytesMax == 64 * 1024)
    }

    @Test func a410MeansGone() async throws {
        let (result, _) = try await exchange(.json(410, "{}")) { try webhook($0) }
        #expect(DeliveryRequests.webhookAnswer(result) == (.gone, 410, "HTTP 410"))
    }

    @Test func a503WithRetryAfterIsAFailureRetriedNoSoonerThanAsked() async throws {
        let (result, _) = try await exchange(.json(503, "busy", headers: [(name: "Retry-After", value: "7")])) { try webhook($0) }
        #expect(DeliveryRequests.webhookAnswer(result) == (.failure(retryAfterMs: 7000), 503, "HTTP 503"))
    }

    @Test(arguments: [301, 400, 404, 500])
    func anyOtherStatusIsAFailure(status: Int) async throws {
        let (result, _) = try await exchange(.json(status, "{}")) { try webhook($0) }
        #expect(DeliveryRequests.webhookAnswer(result) == (.failure(retryAfterMs: nil), status, "HTTP \(status)"))
    }

    @Test func aRefusedConnectionIsAFailureNamedByItsCode() async throws {
        let client = OutboundHTTPClient()
        let result = await client.send(try webhook("http://user:pass@127.0.0.1:\(try closedPort())/"))
        await client.close()
        let answer = DeliveryRequests.webhookAnswer(result)
        #expect(answer == (.failure(retryAfterMs: nil), nil, "cannot_connect"))
    }

    @Test func aLoopbackTargetIsRefusedUnlessPrivateTargetsAreAllowed() async throws {
        let server = try LoopbackHTTPServer { _ in .json(200, "{}") }
        defer { server.stop() }
        let client = OutboundHTTPClient()
        let result = await client.send(try webhook("https://127.0.0.1:\(server.port)/", allowsPrivate: false))
        let plain = await client.send(try webhook("http://127.0.0.1:\(server.port)/", allowsPrivate: false))
        await client.close()
        #expect(DeliveryRequests.webhookAnswer(result) == (.failure(retryAfterMs: nil), nil, "address_refused"))
        #expect(DeliveryRequests.webhookAnswer(plain) == (.failure(retryAfterMs: nil), nil, "invalid_request"))
        #expect(server.acceptedConnections == 0)
    }

    // MARK: OneSignal

    func push(_ url: String) -> OutboundRequest {
        DeliveryRequests.oneSignalRequest(url: url, apiKey: "os_v2_app_secret", body: Self.body, allowsPrivate: true)
    }

    @Test func aPushIsAJSONPostWithTheKey() async throws {
        let (result, received) = try await exchange(.json(200, #"{"id":"x"}"#)) { push($0) }
        #expect(DeliveryRequests.oneSignalAnswer(result) == (.success, 200, nil))
        let request = try #require(received)
        #expect(request.method == "POST")
        #expect(request.body == Self.body)
        #expect(request.headers["Authorization"] == "Key os_v2_app_secret")
        #expect(request.headers["Content-Type"] == "application/json")
    }

    @Test func aPushAnswered200WithErrorsIsAFailure() async throws {
        let (result, _) = try await exchange(.json(200, #"{"id":"","errors":["All included players are not subscribed"]}"#)) { push($0) }
        #expect(
            DeliveryRequests.oneSignalAnswer(result)
                == (.failure(retryAfterMs: nil), 200, "onesignal errors: All included players are not subscribed"))
    }

    @Test func errorsAsAnObjectNameTheirFirstMemberAndAreCut() async throws {
        let long = String(repeating: "z", count: 300)
        let (result, _) = try await exchange(.json(200, #"{"errors":{"invalid_aliases":{"external_id":["\#(long)"]}}}"#)) { push($0) }
        let answer = DeliveryRequests.oneSignalAnswer(result)
        #expect(answer.answer == .failure(retryAfterMs: nil))
        let expected = "onesignal errors: " + String("invalid_aliases: external_id: \(long)".prefix(200))
        #expect(answer.error == expected)
    }

    @Test(arguments: [#"{"id":"x","errors":[]}"#, #"{"id":"x","errors":{}}"#, "not json", ""])
    func aPushWithNoErrorsListedIsDelivered(body: String) async throws {
        let (result, _) = try await exchange(.json(200, body)) { push($0) }
        #expect(DeliveryRequests.oneSignalAnswer(result) == (.success, 200, nil))
    }

    @Test func aPushAnswered400IsAFailureLikeAWebhook() async throws {
        let (result, _) = try await exchange(.json(400, #"{"errors":["bad"]}"#)) { push($0) }
        #expect(DeliveryRequests.oneSignalAnswer(result) == (.failure(retryAfterMs: nil), 400, "HTTP 400"))
    }
}
