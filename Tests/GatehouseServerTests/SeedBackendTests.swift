import GatehouseBase
import GatehouseCore
import GatehouseRuntime
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

// The app backend of the seed (/work/shared/seeds, "Webhook Handler"): it keeps a subscriptions
// table from RevenueCat's webhooks, skips an `event.id` it already processed, and here also keeps
// per customer and subscription the state of the event with the highest `cursor`, so retries,
// replays and any arrival order give the table the server's own profiles show.

private typealias O = OutboxFixture
private typealias F = StoreFixture

/// One row of the backend's table: a customer's subscription as its newest event said it.
private struct SubscriptionRow: Equatable, CustomStringConvertible {
    var cursor: Int64
    var productID: String
    var expirationAtMs: Int64?
    var active: Bool

    var description: String { "\(productID) until \(expirationAtMs.map(String.init) ?? "-") \(active ? "active" : "inactive")" }
}

/// The seed's backend, made order-independent: `processed` is its `processed_webhook_events`.
private struct SeedBackend {
    /// The seed's table of event types (CANCELLATION and BILLING_ISSUE keep access to the period's end).
    static let activeTypes: Set<String> = [
        "INITIAL_PURCHASE", "RENEWAL", "PRODUCT_CHANGE", "CANCELLATION", "UNCANCELLATION", "BILLING_ISSUE",
    ]

    private(set) var processed: Set<String> = []
    private(set) var skipped = 0
    /// By app user id, then original transaction id.
    private(set) var subscriptions: [String: [String: SubscriptionRow]] = [:]

    mutating func handle(_ event: JSONObject) {
        guard let id = event.string("id"), !processed.contains(id) else {
            skipped += 1
            return
        }
        processed.insert(id)
        guard let customer = event.string("app_user_id"), let original = event.string("original_transaction_id"),
            let cursor = event.int("cursor"), let type = event.string("type"), let product = event.string("product_id")
        else { return }
        if let known = subscriptions[customer]?[original], known.cursor > cursor { return }
        subscriptions[customer, default: [:]][original] = SubscriptionRow(
            cursor: cursor, productID: product, expirationAtMs: event.int("expiration_at_ms"), active: Self.activeTypes.contains(type))
    }
}

/// A seeded Fisher–Yates shuffle, so a failing order replays exactly.
private func shuffled<T>(_ items: [T], seed: UInt64) -> [T] {
    var items = items
    let random = SeededRandomSource(seed: seed)
    for index in stride(from: items.count - 1, to: 0, by: -1) {
        items.swapAt(index, Int(random.randomUInt64() % UInt64(index + 1)))
    }
    return items
}

@Suite(.serialized) struct SeedBackendTests {
    static let day: Int64 = 86_400_000

    @Test func aBackendThatDedupesOnEventIDAndKeepsTheHighestCursorMatchesTheProfilesInAnyArrivalOrder() async throws {
        try await withOutboxServer { server in
            let o = try await O.make(server)
            let receiver = try await WebhookReceiver.start(secrets: [O.secret])
            defer { Task { await receiver.stop() } }
            // The first requests fail now and then, so their retries arrive after later events.
            try await receiver.script(answers: [
                .init(status: 500), .ok, .init(status: 503), .init(status: 500), .ok, .ok, .init(status: 500), .ok,
                .init(status: 502), .ok, .init(status: 500),
            ], default: .ok)
            try await o.configure([O.webhook("main", receiver.url)])
            let customers = try await Self.drive(o, receiver)
            try await Self.settle(o, receiver)
            let replayed = try await Self.replay(o, events: try await o.store.events())
            #expect(replayed > 0)
            try await Self.settle(o, receiver)

            let received = try await receiver.deliveries()
            #expect(received.allSatisfy { $0.verified == [true] })
            #expect(received.contains { $0.status >= 500 }, "some attempts failed and were retried")
            let applied = received.filter { (200..<300).contains($0.status) }.compactMap(\.event)
            let cursors = applied.compactMap { $0.int("cursor") }
            #expect(cursors != cursors.sorted(), "some deliveries arrived after newer ones")
            for seed: UInt64 in [0, 1, 2, 3, 0x5EED] {
                var backend = SeedBackend()
                for event in seed == 0 ? applied : shuffled(applied, seed: seed) { backend.handle(event) }
                #expect(backend.skipped > 0, "retries and replays delivered some events twice")
                try await Self.compare(backend, customers, o, order: seed)
            }
        }
    }

    /// Six customers through the test store; answers each one's profile id by app user id.
    private static func drive(_ o: O, _ receiver: WebhookReceiver) async throws -> [String: String] {
        let s = o.store.startMs
        var customers: [String: String] = [:]
        for name in ["alice", "bob", "carol", "dave", "erin", "frank"] { customers[name] = try await o.store.create(name).id }
        func buy(_ name: String, _ original: String, product: String = "pro_monthly", expiresMs: Int64 = s + 30 * day) async throws {
            let transaction = F.subscription(original, product: product, purchasedMs: s, expiresMs: expiresMs)
            let answer = try await o.store.report(try #require(customers[name]), transaction)
            #expect(answer.isSuccess, "\(original): \(answer)")
        }
        func notify(_ id: String, _ type: String, _ original: String, _ more: JSONObject = [:]) async throws {
            let answer = try await o.store.notify(F.event(id, type, original, more))
            #expect(answer["applied"] == true, "\(id): \(answer)")
        }
        try await buy("alice", "a1")
        try await buy("alice", "a2", product: "extra_monthly")
        try await buy("bob", "b1")
        try await buy("carol", "c1")
        try await buy("dave", "d1")
        try await buy("erin", "e1")
        try await notify("a1-r2", "renewal", "a1", ["transaction_id": "a1-2", "expires_ms": .int(s + 60 * day)])
        try await notify("b1-c", "cancel", "b1")
        try await notify("c1-b", "billing_issue", "c1", ["grace_expires_ms": .int(s + 40 * day)])
        try await notify("d1-r2", "renewal", "d1", ["transaction_id": "d1-2", "expires_ms": .int(s + 60 * day)])
        try await notify("e1-p", "product_change", "e1", ["new_product_id": "pro_yearly"])
        try await notify("a1-r3", "renewal", "a1", ["transaction_id": "a1-3", "expires_ms": .int(s + 90 * day)])
        try await notify("b1-x", "expire", "b1")
        try await notify("d1-f", "refund", "d1", ["transaction_id": "d1-2"])
        try await notify("a2-c", "cancel", "a2")
        try await notify("e1-c", "cancel", "e1")
        try await notify("e1-u", "uncancel", "e1")
        // Frank's term runs out by the clock: the server's own EXPIRATION.
        try await buy("frank", "f1", expiresMs: s + 60_000)
        try await receiver.checkTimestamps(asOf: (o.clock.nowMs() + 120_000) / 1000)
        try await o.store.advance(120_000)
        return customers
    }

    /// Moves the test clock through the retry schedule until nothing is pending.
    private static func settle(_ o: O, _ receiver: WebhookReceiver) async throws {
        for _ in 0..<DeliverySchedule.attemptsMax * 4 {
            let status = try await o.status("main") {
                $0.int("in_flight") == 0 && ($0.int("pending") == 0 || ($0.int("next_attempt_ms") ?? 0) > o.clock.nowMs())
            }
            guard status.int("pending") != 0 else { return }
            let move = max((status.int("next_attempt_ms") ?? 0) - o.clock.nowMs(), 1)
            try await receiver.checkTimestamps(asOf: (o.clock.nowMs() + move) / 1000)
            try await o.store.advance(move)
        }
        Issue.record("deliveries still pending: \(try await o.status("main"))")
    }

    /// Sends every third event of the feed again, oldest first (so after newer ones); answers how many.
    private static func replay(_ o: O, events: [JSONObject]) async throws -> Int {
        var queued = 0
        for (index, event) in events.enumerated() where index % 3 == 0 {
            let answer = try await o.backend.call("webhook.replay", ["webhook": "main", "event_id": .string(event.string("id") ?? "")])
            #expect(answer.int("queued") == 1, "\(answer)")
            queued += Int(answer.int("queued") ?? 0)
        }
        return queued
    }

    /// Each customer's table rows are their profile's subscriptions: the product, the end, and
    /// active (`active` or `grace`) or not (`expired`, `refunded`).
    private static func compare(_ backend: SeedBackend, _ customers: [String: String], _ o: O, order: UInt64) async throws {
        #expect(Set(backend.subscriptions.keys) == Set(customers.keys), "order \(order)")
        for (customer, profileID) in customers {
            let document = try await o.store.get(profileID)
            let subscriptions = try #require(document.object("subscriptions"))
            let rows = backend.subscriptions[customer] ?? [:]
            #expect(Set(rows.keys) == Set(subscriptions.keys), "order \(order), \(customer)")
            for (original, row) in rows {
                let subscription = subscriptions[original]?.objectValue
                let status = subscription?.string("status") ?? "?"
                #expect(["active", "grace", "expired", "refunded"].contains(status), "\(customer) \(original): \(status)")
                let server = SubscriptionRow(cursor: row.cursor, productID: subscription?.string("product_id") ?? "?",
                                             expirationAtMs: subscription?.int("expires_ms"), active: ["active", "grace"].contains(status))
                #expect(row == server, "order \(order), \(customer) \(original): table \(row), server \(server) (\(status))")
            }
        }
    }
}
