import GatehouseCore
import GatehouseRuntime
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// A project with webhooks to real receivers on loopback (Python's `standardwebhooks` checks
/// every signature), on a server whose clock the test moves.
struct OutboxFixture {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let otherSecret = "whsec_" + String(repeating: "QUJD", count: 8)

    let store: StoreFixture
    let clock: ManualServerClock
    var server: TestServer { store.server }
    var backend: TestClient { store.backend }

    static func make(_ server: TestServer, project: String = "acme") async throws -> OutboxFixture {
        let store = try await StoreFixture.make(server, project: project)
        let clock = try #require(server.server.engine.registry.clock as? ManualServerClock)
        return OutboxFixture(store: store, clock: clock)
    }

    /// The store fixture's config with these webhooks (and integrations) in it.
    static func config(webhooks: [JSONValue], integrations: JSONValue? = nil) -> JSONValue {
        guard case .object(var config) = StoreFixture.config() else { preconditionFailure("the config is an object") }
        config.append("currencies", [["code": "COINS", "name": "Coins"]])
        config.append("webhooks", .array(webhooks))
        if let integrations { config.append("integrations", integrations) }
        return .object(config)
    }

    static func webhook(_ id: String, _ url: String, secret: String = OutboxFixture.secret, previousSecret: String? = nil,
                        authorization: String? = nil, events: [String]? = nil) -> JSONValue
    {
        var object: JSONObject = ["id": .string(id), "url": .string(url), "secret": .string(secret)]
        if let previousSecret { object.append("previous_secret", .string(previousSecret)) }
        if let authorization { object.append("authorization", .string(authorization)) }
        if let events { object.append("events", .array(events.map { .string($0) })) }
        return .object(object)
    }

    func configure(_ webhooks: [JSONValue], integrations: JSONValue? = nil) async throws {
        try await store.putConfig(Self.config(webhooks: webhooks, integrations: integrations))
    }

    func transact(_ profileID: String, _ amount: Int64, key: String) async throws -> JSONObject {
        let answer = try await backend.call("currency.transact", [
            "profile_id": .string(profileID), "currency": "COINS", "amount": .int(amount), "idempotency_key": .string(key),
        ])
        #expect(answer.isSuccess, "\(answer)")
        return answer
    }

    /// Waits for the receiver to have at least `count` deliveries (real sockets: they take real time).
    func deliveries(_ receiver: WebhookReceiver, count: Int, timeout: Duration = .seconds(20)) async throws
        -> [WebhookReceiver.ReceivedDelivery]
    {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let received = try await receiver.deliveries()
            if received.count >= count || clock.now >= deadline { return received }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits until `webhook.status` of `id` satisfies `condition`; answers its last reading.
    @discardableResult
    func status(_ id: String, timeout: Duration = .seconds(20), until condition: (JSONObject) -> Bool = { _ in true })
        async throws -> JSONObject
    {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let answer = try await backend.call("webhook.status")
            let entry = answer["webhooks"]?.arrayValue?.compactMap(\.objectValue).first { $0.string("id") == id } ?? [:]
            if condition(entry) || clock.now >= deadline { return entry }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    func attempts(_ id: String) async throws -> [JSONObject] {
        let answer = try await backend.call("webhook.deliveries", ["webhook": .string(id)])
        return answer["deliveries"]?.arrayValue?.compactMap(\.objectValue) ?? []
    }
}
