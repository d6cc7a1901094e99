import Foundation
import GatehouseHTTP
import GatehouseOutbound
import GatehouseTesting
import GatehouseWire
import Testing

/// The webhook receiver the outbox's tests deliver to, on its own: it takes what the
/// `standardwebhooks` package signs, refuses what it does not, and answers as scripted.
@Suite struct WebhookReceiverTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let otherSecret = "whsec_c2Vjb25kIHNlY3JldCBvZiB0d2VudHktZm91cg=="
    /// The time every test signs at and has the receiver check against, so no test depends on the real clock.
    static let timestamp: Int64 = 1_767_225_600
    static let body = #"{"api_version":"1.0","event":{"id":"evt_7_0","type":"INITIAL_PURCHASE"}}"#

    /// Runs `body` with a receiver checking against `secrets` at ``timestamp``, and a client; stops both after.
    func withReceiver<T>(secrets: [String] = [secret], _ body: (WebhookReceiver, OutboundHTTPClient) async throws -> T)
        async throws -> T
    {
        let receiver = try await WebhookReceiver.start(secrets: secrets)
        let client = OutboundHTTPClient()
        do {
            try await receiver.checkTimestamps(asOf: Self.timestamp)
            let result = try await body(receiver, client)
            await client.close()
            await receiver.stop()
            return result
        } catch {
            await client.close()
            await receiver.stop()
            throw error
        }
    }

    /// The `webhook-signature` value `standardwebhooks` itself makes for `body`.
    static func signature(secret: String, id: String, timestamp: Int64 = timestamp, body: String = body) async throws -> String {
        let sign = """
            import sys; from datetime import datetime, timezone; from standardwebhooks import Webhook
            print(Webhook(sys.argv[1]).sign(sys.argv[2], datetime.fromtimestamp(int(sys.argv[3]), timezone.utc), sys.argv[4]))
            """
        let output = try await PythonProcess.run(sign, arguments: [secret, id, String(timestamp), body])
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func post(
        _ client: OutboundHTTPClient, to url: String, id: String = "evt_7_0", signature: String, authorization: String? = nil,
        timeout: Duration = .seconds(15)
    ) async -> Result<OutboundResponse, OutboundError> {
        var headers = [
            (name: "Content-Type", value: "application/json"), (name: "webhook-id", value: id),
            (name: "webhook-timestamp", value: String(timestamp)), (name: "webhook-signature", value: signature),
        ]
        if let authorization { headers.append((name: "Authorization", value: authorization)) }
        return await client.send(
            OutboundRequest(method: "POST", url: url, headers: HTTPHeaders(headers), body: Array(body.utf8), timeout: timeout))
    }

    @Test func aDeliverySignedByStandardWebhooksVerifiesAndIsRecordedAsSent() async throws {
        let signature = try await Self.signature(secret: Self.secret, id: "evt_7_0")
        let deliveries = try await withReceiver { receiver, client in
            let answer = await Self.post(client, to: receiver.url, signature: signature, authorization: "Bearer backend-token")
            #expect(try answer.get().status == 200)
            return try await receiver.deliveries()
        }
        let delivery = try #require(deliveries.first)
        #expect(deliveries.count == 1)
        #expect(delivery.order == 1)
        #expect(delivery.path == "/hook")
        #expect(delivery.verified == [true])
        #expect(delivery.error == nil)
        #expect(delivery.webhookID == "evt_7_0")
        #expect(delivery.timestamp == String(Self.timestamp))
        #expect(delivery.signature == signature)
        #expect(delivery.authorization == "Bearer backend-token")
        #expect(delivery.status == 200)
        #expect(delivery.body == Array(Self.body.utf8))
        #expect(delivery.event?["type"]?.stringValue == "INITIAL_PURCHASE")
    }

    @Test func aSignatureMadeWithAnotherSecretOrForAnotherIDDoesNotVerify() async throws {
        let wrongSecret = try await Self.signature(secret: Self.otherSecret, id: "evt_7_0")
        let wrongID = try await Self.signature(secret: Self.secret, id: "evt_8_0")
        let deliveries = try await withReceiver { receiver, client in
            _ = await Self.post(client, to: receiver.url, signature: wrongSecret)
            _ = await Self.post(client, to: receiver.url, signature: wrongID)
            return try await receiver.deliveries()
        }
        #expect(deliveries.map(\.verified) == [[false], [false]])
        #expect(deliveries.allSatisfy { $0.error?.contains("No matching signature found") == true })
    }

    @Test func aTimestampFarFromTheTimeCheckedAgainstDoesNotVerify() async throws {
        let signature = try await Self.signature(secret: Self.secret, id: "evt_7_0")
        let deliveries = try await withReceiver { receiver, client in
            try await receiver.checkTimestamps(asOf: Self.timestamp + 3600)
            _ = await Self.post(client, to: receiver.url, signature: signature)
            return try await receiver.deliveries()
        }
        #expect(deliveries.map(\.verified) == [[false]])
        #expect(deliveries.first?.error?.contains("too old") == true)
    }

    @Test func twoSecretsRecordAVerdictEach() async throws {
        let current = try await Self.signature(secret: Self.secret, id: "evt_7_0")
        let previous = try await Self.signature(secret: Self.otherSecret, id: "evt_7_0")
        let deliveries = try await withReceiver(secrets: [Self.secret, Self.otherSecret]) { receiver, client in
            _ = await Self.post(client, to: receiver.url, signature: previous)
            _ = await Self.post(client, to: receiver.url, signature: "\(current) \(previous)")
            return try await receiver.deliveries()
        }
        #expect(deliveries.map(\.verified) == [[false, true], [true, true]])
        #expect(deliveries[0].errors[0]?.contains("No matching signature found") == true)
        #expect(deliveries[0].errors[1] == nil)
    }

    @Test func scriptedAnswersComeInOrderWithRetryAfterThenTheDefault() async throws {
        let signature = try await Self.signature(secret: Self.secret, id: "evt_7_0")
        let (answers, deliveries) = try await withReceiver { receiver, client in
            try await receiver.script(
                answers: [.init(status: 503, retryAfter: "7"), .init(status: 200, body: "thanks")], default: .init(status: 410))
            var answers: [OutboundResponse] = []
            for _ in 0..<3 { answers.append(try await Self.post(client, to: receiver.url, signature: signature).get()) }
            return (answers, try await receiver.deliveries())
        }
        #expect(answers.map(\.status) == [503, 200, 410])
        #expect(answers.map(\.retryAfter) == [.seconds(7), nil, nil])
        #expect(answers[1].body == Array("thanks".utf8))
        #expect(deliveries.map(\.order) == [1, 2, 3])
        #expect(deliveries.map(\.status) == [503, 200, 410])
    }

    @Test func aDelayedAnswerTimesTheSenderOutAndTheRequestIsStillRecorded() async throws {
        let signature = try await Self.signature(secret: Self.secret, id: "evt_7_0")
        let (answer, deliveries) = try await withReceiver { receiver, client in
            try await receiver.script(answers: [.init(status: 200, delay: .seconds(5))])
            let answer = await Self.post(client, to: receiver.url, signature: signature, timeout: .milliseconds(300))
            return (answer, try await receiver.deliveries())
        }
        #expect(throws: OutboundError.self) { try answer.get() }
        if case .failure(let error) = answer { #expect(error.code == .timedOut) }
        #expect(deliveries.map(\.verified) == [[true]])
    }
}
