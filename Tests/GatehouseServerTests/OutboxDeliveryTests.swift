import GatehouseCore
import GatehouseRuntime
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

// The outbox end to end (DESIGN.md, "Outbound delivery"): the real server delivers to real
// receivers on loopback, which check each signature with Python's `standardwebhooks`; the
// schedule is driven by the server's test clock, never by sleeping through it.

private typealias O = OutboxFixture

/// A server on the test clock whose deliveries may go to loopback.
func withOutboxServer(attemptTimeout: Duration = .milliseconds(500), _ body: (TestServer) async throws -> Void) async throws {
    try await withTestServer({
        $0.testClock = true
        $0.outboundAllowPrivate = true
        $0.outboundTimeout = attemptTimeout
    }, body)
}

@Suite(.serialized) struct OutboxDeliveryTests {
    @Test func everyEventGoesToTheWebhookSignedWithItsIDAndTheSameBodyAsTheFeed() async throws {
        try await withOutboxServer { server in
            let o = try await O.make(server)
            let receiver = try await WebhookReceiver.start(secrets: [O.secret])
            defer { Task { await receiver.stop() } }
            try await o.configure([O.webhook("main", receiver.url, authorization: "Bearer backend-token")])
            let alice = try await o.store.create("alice")
            _ = try await o.transact(alice.id, 25, key: "k1")
            #expect(try await o.store.report(alice.id, StoreFixture.subscription("t1", purchasedMs: o.store.startMs,
                                                                                  expiresMs: o.store.startMs + 86_400_000)).isSuccess)
            let received = try await o.deliveries(receiver, count: 2)
            let feed = try await o.store.events()
            #expect(received.count == 2)
            #expect(Set(received.compactMap(\.webhookID)) == Set(feed.compactMap { $0.string("id") }))
            for delivery in received {
                #expect(delivery.verified == [true], "\(delivery.error ?? "")")
                #expect(delivery.authorization == "Bearer backend-token")
                let event = try #require(delivery.event)
                #expect(event.string("id") == delivery.webhookID)
                #expect(event.string("app_user_id") == "alice")
                #expect(event.string("app_id") == "acme")
                #expect(delivery.envelope?.string("api_version") == "1.0")
            }
            let types = Set(received.compactMap { $0.event?.string("type") })
            #expect(types == ["VIRTUAL_CURRENCY_TRANSACTION", "INITIAL_PURCHASE"])
            try await o.status("main") { $0.int("pending") == 0 && $0.int("last_success_ms") != nil }
        }
    }

    @Test func duringARotationEachDeliveryCarriesBothSignatures() async throws {
        try await withOutboxServer { server in
            let o = try await O.make(server)
            let receiver = try await WebhookReceiver.start(secrets: [O.otherSecret, O.secret])
            defer { Task { await receiver.stop() } }
            try await o.configure([O.webhook("main", receiver.url, secret: O.otherSecret, previousSecret: O.secret)])
            let alice = try await o.store.create("alice")
            _ = try await o.transact(alice.id, 1, key: "k1")
            let delivery = try #require(try await o.deliveries(receiver, count: 1).first)
            #expect(delivery.verified == [true, true])
            #expect(delivery.signature?.split(separator: " ").count == 2)
        }
    }

    @Test func aFailureIsRetriedOnTheSchedulesClockUntilItIsDelivered() async throws {
        try await withOutboxServer { server in
            let o = try await O.make(server)
            let receiver = try await WebhookReceiver.start(secrets: [O.secret])
            defer { Task { await receiver.stop() } }
            try await receiver.script(answers: [.init(status: 500), .init(status: 502)], default: .ok)
            try await o.configure([O.webhook("main", receiver.url)])
            let alice = try await o.store.create("alice")
            _ = try await o.transact(alice.id, 1, key: "k1")
            let failing = try await o.status("main") { $0.int("failing") == 1 && $0.int("next_attempt_ms") != nil }
            let firstAt = o.clock.nowMs()
            let next = try #require(failing.int("next_attempt_ms"))
            #expect(next >= firstAt + 4_000 && next <= firstAt + 6_000, "5 s ±20 %: \(next - firstAt)")
            #expect(try await receiver.deliveries().count == 1, "nothing more before the clock moves")
            try await receiver.checkTimestamps(asOf: next / 1000)
            o.clock.advance(byMs: next - firstAt)
            let second = try await o.status("main") { ($0.int("next_attempt_ms") ?? 0) > next }
            let third = try #require(second.int("next_attempt_ms"))
            let secondAt = o.clock.nowMs()
            #expect(third >= secondAt + 240_000 && third <= secondAt + 360_000, "5 min ±20 %: \(third - secondAt)")
            try await receiver.checkTimestamps(asOf: third / 1000)
            o.clock.advance(byMs: third - secondAt)
            try await o.status("main") { $0.int("pending") == 0 }
            let received = try await receiver.deliveries()
            #expect(received.map(\.status) == [500, 502, 200])
            #expect(Set(received.compactMap(\.webhookID)).count == 1, "the same id on every attempt")
            #expect(Set(received.map(\.body)).count == 1, "the same body on every attempt")
            #expect(received.allSatisfy { $0.verified == [true] })
            let attempts = try await o.attempts("main")
            #expect(attempts.compactMap { $0.int("attempt") } == [3, 2, 1])
            #expect(attempts.compactMap { $0.int("status") } == [200, 502, 500])
        }
    }

    @Test func retryAfterLongerThanTheScheduleIsHonoured() async throws {
        try await withOutboxServer { server in
            let o = try await O.make(server)
            let receiver = try await WebhookReceiver.start(secrets: [O.secret])
            defer { Task { await receiver.stop() } }
            try await receiver.script(answers: [.init(status: 503, retryAfter: "120")], default: .ok)
            try await o.configure([O.webhook("main", receiver.url)])
            let alice = try await o.store.create("alice")
            _ = try await o.transact(alice.id, 1, key: "k1")
            let failing = try await o.status("main") { $0.int("failing") == 1 }
            #expect(try #require(failing.int("next_attempt_ms")) >= o.clock.nowMs() + 120_000)
        }
    }

    @Test func anAttemptThatTimesOutIsAFailure() async throws {
        try await withOutboxServer { server in
            let o = try await O.make(server)
            let receiver = try await WebhookReceiver.start(secrets: [O.secret])
            defer { Task { await receiver.stop() } }
            try await receiver.script(answers: [.init(status: 200, delay: .seconds(3))], default: .ok)
            try await o.configure([O.webhook("main", receiver.url)])
            let alice = try await o.store.create("alice")
            _ = try await o.transact(alice.id, 1, key: "k1")
            let failing = try await o.status("main") { $0.int("failing") == 1 }
            #expect(failing.string("last_error") == "timed_out", "\(failing)")
            let attempt = try #require(try await o.attempts("main").first)
            #expect(attempt["status"] == .null)
        }
    }

    @Test func goneDisablesTheWebhookAndAConfigThatNamesItAgainEnablesIt() async throws {
        try await withOutboxServer { server in
            let o = try await O.make(server)
            let receiver = try await WebhookReceiver.start(secrets: [O.secret])
            defer { Task { await receiver.stop() } }
            try await receiver.script(answers: [.init(status: 410)], default: .ok)
            try await o.configure([O.webhook("main", receiver.url)])
            let alice = try await o.store.create("alice")
            _ = try await o.transact(alice.id, 1, key: "k1")
            let disabled = try await o.status("main") { $0.string("state") == "disabled" }
            #expect(disabled.string("disabled_reason") == "gone")
            #expect(disabled.int("failed") == 1)
            _ = try await o.transact(alice.id, 1, key: "k2")
            let replay = try await o.backend.call("webhook.replay", ["webhook": "main", "failed_since_ms": 0])
            #expect(replay.errorCode == .conflict, "\(replay)")
            try await o.configure([O.webhook("main", receiver.url)])
            try await o.status("main") { $0.string("state") == "active" }
            _ = try await o.transact(alice.id, 1, key: "k3")
            let received = try await o.deliveries(receiver, count: 2)
            #expect(received.map(\.status) == [410, 200], "the event while disabled is not owed")
        }
    }

    /// Attempts may take 5 s: on CI's loaded cores a live attempt can take longer than the
    /// suite's usual 500 ms, and a timed-out one waits for a retry on the frozen clock.
    @Test func aDeadEndpointNeverHoldsUpALiveOne() async throws {
        try await withOutboxServer(attemptTimeout: .seconds(5)) { server in
            let o = try await O.make(server)
            let live = try await WebhookReceiver.start(secrets: [O.secret])
            let slow = try await WebhookReceiver.start(secrets: [O.secret])
            defer { Task { await live.stop(); await slow.stop() } }
            try await slow.script(answers: [], default: .init(status: 200, delay: .seconds(10)))
            try await o.configure([O.webhook("slow", slow.url), O.webhook("dead", "http://127.0.0.1:9/nothing"),
                                   O.webhook("live", live.url)])
            let alice = try await o.store.create("alice")
            for n in 0..<40 { _ = try await o.transact(alice.id, 1, key: "k\(n)") }
            let received = try await o.deliveries(live, count: 40, timeout: .seconds(60))
            #expect(received.count == 40)
            let slowStatus = try await o.status("slow")
            #expect((slowStatus.int("in_flight") ?? 0) <= 16)
            let dead = try await o.status("dead") { $0.int("failing") == 40 }
            #expect(dead.int("failing") == 40)
        }
    }

    @Test func replaySendsOneEventAgainOrEveryFailedDeliverySinceATime() async throws {
        try await withOutboxServer { server in
            let o = try await O.make(server)
            let receiver = try await WebhookReceiver.start(secrets: [O.secret])
            defer { Task { await receiver.stop() } }
            try await o.configure([O.webhook("main", receiver.url)])
            let alice = try await o.store.create("alice")
            _ = try await o.transact(alice.id, 1, key: "k1")
            let first = try #require(try await o.deliveries(receiver, count: 1).first)
            try await o.status("main") { $0.int("pending") == 0 }
            let again = try await o.backend.call("webhook.replay", ["webhook": "main", "event_id": .string(first.webhookID ?? "")])
            #expect(again.int("queued") == 1, "\(again)")
            let both = try await o.deliveries(receiver, count: 2)
            #expect(both.count == 2 && both[0].body == both[1].body && both[0].webhookID == both[1].webhookID)

            // Every attempt fails until the schedule gives up; then a replay since a time sends it again.
            try await receiver.script(answers: [], default: .init(status: 500))
            _ = try await o.transact(alice.id, 1, key: "k2")
            for delay in DeliverySchedule.retryDelaysMs {
                try await o.status("main") { $0.int("in_flight") == 0 && $0.int("failing") == 1 || $0.int("failed") == 1 }
                let move = Int64(Double(delay) * 1.21)
                try await receiver.checkTimestamps(asOf: (o.clock.nowMs() + move) / 1000)
                o.clock.advance(byMs: move)
            }
            let failed = try await o.status("main") { $0.int("failed") == 1 }
            #expect(failed.int("failed") == 1 && failed.int("pending") == 0, "\(failed)")
            #expect(try await receiver.deliveries().count == 2 + DeliverySchedule.attemptsMax)
            try await receiver.script(answers: [], default: .ok)
            let replay = try await o.backend.call("webhook.replay", ["webhook": "main", "failed_since_ms": 0])
            #expect(replay.int("queued") == 1, "\(replay)")
            let all = try await o.deliveries(receiver, count: 3 + DeliverySchedule.attemptsMax)
            #expect(all.last?.status == 200)
            try await o.status("main") { $0.int("failed") == 0 && $0.int("pending") == 0 }
        }
    }

    @Test func aWebhookAddedLaterStartsFromTheNewestEvent() async throws {
        try await withOutboxServer { server in
            let o = try await O.make(server)
            let receiver = try await WebhookReceiver.start(secrets: [O.secret])
            defer { Task { await receiver.stop() } }
            try await o.configure([])
            let alice = try await o.store.create("alice")
            for n in 0..<5 { _ = try await o.transact(alice.id, 1, key: "old\(n)") }
            try await o.configure([O.webhook("late", receiver.url)])
            _ = try await o.transact(alice.id, 1, key: "new")
            let received = try await o.deliveries(receiver, count: 1)
            try await o.status("late") { $0.int("pending") == 0 }
            #expect(try await receiver.deliveries().count == 1)
            #expect(received.first?.event?.int("cursor") == (try await o.store.feedCursor()))
        }
    }

    @Test func aTestEventGoesToTheNamedWebhookAloneAndStaysOutOfTheFeed() async throws {
        try await withOutboxServer { server in
            let o = try await O.make(server)
            let named = try await WebhookReceiver.start(secrets: [O.secret])
            let other = try await WebhookReceiver.start(secrets: [O.secret])
            defer { Task { await named.stop(); await other.stop() } }
            try await o.configure([O.webhook("named", named.url, events: ["RENEWAL"]), O.webhook("other", other.url)])
            let answer = try await o.backend.call("webhook.test", ["webhook": "named"])
            let id = try #require(answer.string("event_id"), "\(answer)")
            let received = try #require(try await o.deliveries(named, count: 1).first)
            #expect(received.webhookID == id && received.event?.string("type") == "TEST")
            try await o.status("other") { $0.int("pending") == 0 }
            #expect(try await other.deliveries().isEmpty)
            #expect(try await o.store.events().isEmpty)
        }
    }

    @Test func pendingDeliveriesAndTheirScheduleSurviveARestart() async throws {
        let receiver = try await WebhookReceiver.start(secrets: [O.secret])
        defer { Task { await receiver.stop() } }
        let configure: (inout ServerConfiguration) -> Void = {
            $0.testClock = true
            $0.outboundAllowPrivate = true
        }
        let server = try await TestServer.start(configure)
        let o = try await O.make(server)
        try await receiver.script(answers: [.init(status: 500)], default: .ok)
        try await o.configure([O.webhook("main", receiver.url)])
        let alice = try await o.store.create("alice")
        _ = try await o.transact(alice.id, 1, key: "k1")
        let before = try await o.status("main") { $0.int("failing") == 1 }
        let restarted = try await server.restart(configure)
        let store = try await o.store.reconnected(to: restarted)
        let after = try await OutboxFixture(store: store, clock: try #require(restarted.server.engine.registry.clock as? ManualServerClock))
            .status("main")
        #expect(after.int("next_attempt_ms") == before.int("next_attempt_ms"))
        #expect(after.int("failing") == 1)
        await restarted.stop()
    }
}

@Suite struct WebhookOpRefusals {
    @Test func theWebhookOpsRefuseBadInputAndChangeNothing() async throws {
        try await withOutboxServer { server in
            let o = try await O.make(server)
            try await o.configure([O.webhook("main", "https://example.com/hook")])
            let cases: [(String, JSONObject, ErrorCode)] = [
                ("webhook.deliveries", ["webhook": "nope"], .notFound),
                ("webhook.deliveries", [:], .badRequest),
                ("webhook.deliveries", ["webhook": "main", "limit": 0], .badRequest),
                ("webhook.deliveries", ["webhook": 7], .badRequest),
                ("webhook.replay", ["webhook": "main"], .badRequest),
                ("webhook.replay", ["webhook": "main", "event_id": "evt_1_0", "failed_since_ms": 0], .badRequest),
                ("webhook.replay", ["webhook": "main", "event_id": "nope"], .badRequest),
                ("webhook.replay", ["webhook": "main", "event_id": "evt_999999_0"], .notFound),
                ("webhook.replay", ["webhook": "nope", "failed_since_ms": 0], .notFound),
                ("webhook.replay", ["webhook": "main", "failed_since_ms": -1], .badRequest),
                ("webhook.test", ["webhook": "nope"], .notFound),
                ("webhook.test", ["webhook": "integrations.onesignal"], .badRequest),
                ("webhook.test", [:], .badRequest),
            ]
            let cursor = try await o.store.feedCursor()
            for (op, parameters, code) in cases {
                let answer = try await o.backend.call(op, parameters)
                #expect(answer.errorCode == code, "\(op) \(parameters): \(answer)")
            }
            #expect(try await o.store.feedCursor() == cursor)
            for op in ["webhook.status", "webhook.deliveries", "webhook.replay", "webhook.test"] {
                let answer = try await o.store.sdk.call(op, ["webhook": "main"])
                #expect(answer.errorCode == .forbidden, "\(op): \(answer)")
            }
        }
    }

    @Test func withoutTheFlagAWebhookMustBeHTTPS() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let o = try await O.make(server)
            let answer = try await o.backend.call("config.put", [
                "config": O.config(webhooks: [O.webhook("main", "http://127.0.0.1:9/hook")]),
            ])
            #expect(answer.errorCode == .badRequest, "\(answer)")
            #expect(answer.object("error")?.string("message")?.contains("webhooks[0].url") == true)
            let config = try await o.backend.call("config.get")
            #expect(config.object("config")?["webhooks"]?.arrayValue?.isEmpty ?? true)
        }
    }
}
