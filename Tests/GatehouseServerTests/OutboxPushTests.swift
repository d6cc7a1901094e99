import GatehouseCore
import GatehouseHTTP
import GatehouseRuntime
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

// Pushes through OneSignal (DESIGN.md, "Outbound delivery"): the create-message call for the
// event types the config lists, to profiles with a customer user id, through the same outbox,
// against a fake of OneSignal's API that checks the body and the `Authorization: Key` header.
// Also the outbox's safety on the connected address, and its metrics.

private typealias O = OutboxFixture

private let appID = "5eb5a37e-b458-11e3-ac11-000c2940e62c"
private let apiKey = "os_v2_app_testkey"

private func oneSignal(_ url: String, key: String = apiKey) -> JSONValue {
    ["onesignal": [
        "app_id": .string(appID), "api_key": .string(key), "url": .string(url),
        "notifications": [
            "VIRTUAL_CURRENCY_TRANSACTION": ["title": "Coins", "message": "Your coins arrived"],
            "INITIAL_PURCHASE": ["title": "Welcome to Premium", "message": "Thank you for subscribing."],
        ],
    ]]
}

@Suite(.serialized) struct OutboxPushTests {
    @Test func aListedEventOfACustomerIsPushedWithItsTitleAndMessage() async throws {
        try await withTestServer({ $0.testClock = true; $0.outboundAllowPrivate = true }) { server in
            let o = try await O.make(server)
            let fake = try FakeOneSignal(appID: appID, apiKey: apiKey)
            defer { fake.stop() }
            try await o.configure([], integrations: oneSignal(fake.url))
            let anonymous = try await o.store.create()
            _ = try await o.transact(anonymous.id, 5, key: "anon")
            let alice = try await o.store.create("alice")
            _ = try await o.transact(alice.id, 5, key: "alice")
            #expect(try await o.store.report(alice.id, StoreFixture.subscription("t1", purchasedMs: o.store.startMs,
                                                                                  expiresMs: o.store.startMs + 86_400_000)).isSuccess)
            try await o.status(OutboxTarget.oneSignalName) { $0.int("pending") == 0 && $0.int("last_success_ms") != nil }
            let seen = fake.seen
            #expect(seen.count == 2, "the anonymous profile's event is not pushed: \(seen.map { $0.dataType })")
            #expect(seen.allSatisfy { $0.passed }, "\(seen.compactMap { $0.refusal })")
            #expect(seen.allSatisfy { $0.authorization == "Key \(apiKey)" && $0.externalIDs == ["alice"] })
            #expect(Set(seen.compactMap { $0.dataType }) == ["VIRTUAL_CURRENCY_TRANSACTION", "INITIAL_PURCHASE"])
            #expect(seen.first { $0.dataType == "INITIAL_PURCHASE" }?.heading == "Welcome to Premium")
        }
    }

    @Test func anAnswerOf200WithErrorsIsAFailureAndIsRetried() async throws {
        try await withTestServer({ $0.testClock = true; $0.outboundAllowPrivate = true }) { server in
            let o = try await O.make(server)
            let fake = try FakeOneSignal(appID: appID, apiKey: apiKey)
            defer { fake.stop() }
            fake.script(answers: [.notSubscribed], default: .created)
            try await o.configure([], integrations: oneSignal(fake.url))
            let alice = try await o.store.create("alice")
            _ = try await o.transact(alice.id, 5, key: "alice")
            let failing = try await o.status(OutboxTarget.oneSignalName) { $0.int("failing") == 1 }
            #expect(failing.string("last_error")?.hasPrefix("onesignal errors: All included players") == true, "\(failing)")
            let attempt = try #require(try await o.attempts(OutboxTarget.oneSignalName).first)
            #expect(attempt.int("status") == 200)
            o.clock.advance(byMs: 6_001)
            try await o.status(OutboxTarget.oneSignalName) { $0.int("pending") == 0 }
            #expect(fake.seen.map { $0.status } == [200, 200])
        }
    }

    @Test func aWrongKeyIsAFailureNeverASuccess() async throws {
        try await withTestServer({ $0.testClock = true; $0.outboundAllowPrivate = true }) { server in
            let o = try await O.make(server)
            let fake = try FakeOneSignal(appID: appID, apiKey: apiKey)
            defer { fake.stop() }
            try await o.configure([], integrations: oneSignal(fake.url, key: "wrong"))
            let alice = try await o.store.create("alice")
            _ = try await o.transact(alice.id, 5, key: "alice")
            let failing = try await o.status(OutboxTarget.oneSignalName) { $0.int("failing") == 1 }
            #expect(failing.string("last_error") == "HTTP 403")
        }
    }
}

@Suite struct OutboxSafetyTests {
    @Test func withoutTheFlagALoopbackTargetIsRefusedOnTheAddressConnected() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let o = try await O.make(server)
            // `localhost` resolves to loopback: an https name passes config.put, the connection does not.
            try await o.configure([O.webhook("main", "https://localhost:9/hook")])
            let alice = try await o.store.create("alice")
            _ = try await o.transact(alice.id, 1, key: "k1")
            let failing = try await o.status("main") { $0.int("failing") == 1 }
            #expect(failing.string("last_error") == "address_refused", "\(failing)")
        }
    }

    @Test func theOutboxIsCountedInTheMetrics() async throws {
        try await withTestServer({ $0.testClock = true; $0.outboundAllowPrivate = true; $0.metricsPublic = true }) { server in
            let o = try await O.make(server)
            try await o.configure([O.webhook("dead", "http://127.0.0.1:9/nothing")])
            let alice = try await o.store.create("alice")
            _ = try await o.transact(alice.id, 1, key: "k1")
            try await o.status("dead") { $0.int("failing") == 1 }
            let client = try TestHTTPClient(connectingTo: server.httpAddress)
            let page = try await client.request("GET", "/metrics")
            let text = String(decoding: page.body, as: UTF8.self)
            #expect(text.contains(#"gatehouse_outbox_pending{kind="webhook"} 1"#), "\(text)")
            #expect(text.contains(#"gatehouse_outbox_failing{kind="webhook"} 1"#))
            #expect(text.contains(#"gatehouse_outbox_attempts_total{kind="webhook",result="retry"} 1"#))
            #expect(text.contains(#"gatehouse_outbox_attempt_duration_seconds_count{kind="webhook"} 1"#))
            await client.close()
        }
    }
}
