import GatehouseBase
@testable import GatehouseCore
import Testing

// The outbox's rules (DESIGN.md, "Outbound delivery"): who is owed an event, what each logged
// outcome does, how the feed keeps what is owed, and that replaying the log rebuilds it all.

private let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

extension PurchaseWorld {
    /// The currency world with these webhooks (and OneSignal) configured now.
    mutating func configureOutbound(_ webhooks: [WebhookSettings], oneSignal: OneSignalSettings? = nil) {
        var config = CurrencyCatalogue.config()
        config.webhooks = webhooks
        config.integrations.oneSignal = oneSignal
        apply(ProjectState.ChangeBatch([.configReplaced(config)], atMs: nowMs))
    }

    mutating func settle(_ target: OutboxTarget, _ key: EventKey, attempt: UInt16, _ result: DeliveryOutcome.Result,
                         status: Int? = 500)
    {
        let attempt = DeliveryAttempt(event: key, attempt: attempt, atMs: nowMs, status: result == .delivered ? 200 : status,
                                      latencyMs: 3, error: result == .delivered ? nil : "HTTP \(status ?? 0)")
        apply(ProjectState.ChangeBatch([.deliveriesSettled([DeliveryOutcome(target: target, attempt: attempt, result: result)])],
                                       atMs: nowMs))
    }

    func endpoint(_ id: String) -> OutboxEndpoint {
        guard let endpoint = state.outbox.endpoints[.webhook(id)] else { preconditionFailure("no endpoint \(id)") }
        return endpoint
    }

    var lastEventKey: EventKey {
        guard let event = state.events.last else { preconditionFailure("no event") }
        return EventKey(event)
    }
}

private func webhook(_ id: String, events: [String]? = nil) -> WebhookSettings {
    WebhookSettings(id: id, url: "https://example.com/\(id)", secret: secret, events: events)
}

@Suite struct OutboxOwingTests {
    @Test func anEventIsOwedToEveryWebhookThatWantsItInTheChangeThatRecordsIt() throws {
        var world = PurchaseWorld.withCurrencies()
        world.configureOutbound([webhook("all"), webhook("purchases", events: ["INITIAL_PURCHASE"])])
        let id = try world.create("alice")
        let decision = try world.transact(id, 50, key: "k1")
        let key = world.lastEventKey
        #expect(world.endpoint("all").pending[key] == PendingDelivery(attempts: 0, nextAttemptMs: world.nowMs))
        #expect(world.endpoint("purchases").pending.isEmpty)
        #expect(world.state.outbox.owed[key]?.pending == 1)
        #expect(world.state.outbox.owed[key]?.identity.appUserID == "alice")
        #expect(world.state.outbox.owed[key]?.identity.currencyName == "COINS")
        // The runtime hears of the delivery in the same batch's effects.
        var replayed = world.state
        let effects = replayed.apply(ProjectState.ChangeBatch([], atMs: world.nowMs))
        #expect(effects.scheduled.isEmpty)
        _ = decision
    }

    @Test func theEffectsOfTheRecordingChangeScheduleTheDelivery() throws {
        var world = PurchaseWorld.withCurrencies()
        world.configureOutbound([webhook("a"), webhook("b")])
        let id = try world.create("alice")
        let decision = try world.state.transact(profile: id, currency: "COINS", amount: 5, key: "k", reason: nil, nowMs: world.nowMs)
        var state = world.state
        let effects = state.apply(decision.batch)
        let key = EventKey(try #require(state.events.last))
        #expect(effects.scheduled == [ScheduledDelivery(target: .webhook("a"), event: key, dueMs: world.nowMs),
                                      ScheduledDelivery(target: .webhook("b"), event: key, dueMs: world.nowMs)])
    }

    @Test func aWebhookAddedLaterIsOwedOnlyWhatComesAfterIt() throws {
        var world = PurchaseWorld.withCurrencies()
        let id = try world.create("alice")
        try world.transact(id, 50, key: "before")
        world.configureOutbound([webhook("late")])
        #expect(world.endpoint("late").pending.isEmpty)
        try world.transact(id, 5, key: "after")
        #expect(Array(world.endpoint("late").pending.keys) == [world.lastEventKey])
    }

    @Test func theIdentityIsTakenWhenTheEventHappensAndKeptThroughLaterChanges() throws {
        var world = PurchaseWorld.withCurrencies()
        world.configureOutbound([webhook("a")])
        let id = try world.create()
        try world.transact(id, 50, key: "k")
        let key = world.lastEventKey
        let before = try #require(world.state.outbox.owed[key]?.identity)
        #expect(before.appUserID == id.description)
        try world.identify(id, "alice")
        #expect(world.state.outbox.owed[key]?.identity == before)
        #expect(world.state.outbox.owed[world.lastEventKey] == nil || world.lastEventKey == key)
    }

    @Test func oneSignalIsOwedTheListedTypesOfProfilesWithACustomerUserIDOnly() throws {
        var world = PurchaseWorld.withCurrencies()
        let push = OneSignalSettings(appID: "app", apiKey: "key", notifications: [
            OneSignalNotification(type: .virtualCurrencyTransaction, title: "Coins", message: "You got coins"),
        ])
        world.configureOutbound([], oneSignal: push)
        let anonymous = try world.create()
        try world.transact(anonymous, 5, key: "anon")
        #expect(world.state.outbox.endpoints[.oneSignal]?.pending.isEmpty == true)
        let alice = try world.create("alice")
        try world.transact(alice, 5, key: "alice")
        let key = world.lastEventKey
        #expect(world.state.outbox.endpoints[.oneSignal]?.pending[key] != nil)
        #expect(world.state.outbox.owed[key]?.identity.pushTo == ["alice"])
    }

    @Test func aTestEventIsOwedOnlyToTheWebhookItNames() throws {
        var world = PurchaseWorld.withCurrencies()
        world.configureOutbound([webhook("a", events: ["RENEWAL"]), webhook("b")])
        world.apply(ProjectState.ChangeBatch([.eventRecorded(.test, nil, [EventDetail(ProjectState.testWebhookDetail, .string("a"))])],
                                             atMs: world.nowMs))
        let key = world.lastEventKey
        #expect(world.endpoint("a").pending[key] != nil)
        #expect(world.endpoint("b").pending[key] == nil)
    }
}

@Suite struct OutboxOutcomeTests {
    private func worldOwingOne() throws -> (PurchaseWorld, EventKey) {
        var world = PurchaseWorld.withCurrencies()
        world.configureOutbound([webhook("a")])
        let id = try world.create("alice")
        try world.transact(id, 50, key: "k")
        return (world, world.lastEventKey)
    }

    @Test func aDeliveredOutcomeSettlesTheDeliveryAndTheEvent() throws {
        var (world, key) = try worldOwingOne()
        world.settle(.webhook("a"), key, attempt: 1, .delivered)
        #expect(world.endpoint("a").pending.isEmpty)
        #expect(world.state.outbox.owed.isEmpty)
        #expect(world.endpoint("a").lastSuccessMs == world.nowMs)
        #expect(world.endpoint("a").recent.map(\.status) == [200])
    }

    @Test func aRetryCountsTheAttemptAndAStaleOutcomeChangesNothing() throws {
        var (world, key) = try worldOwingOne()
        world.settle(.webhook("a"), key, attempt: 1, .retry(atMs: world.nowMs + 5_000))
        #expect(world.endpoint("a").pending[key] == PendingDelivery(attempts: 1, nextAttemptMs: world.nowMs + 5_000))
        #expect(world.endpoint("a").failingSinceMs == world.nowMs)
        #expect(world.endpoint("a").failingCount == 1)
        let before = world.state
        world.settle(.webhook("a"), key, attempt: 1, .delivered)
        #expect(world.state.outbox == before.outbox)
    }

    @Test func theLastFailureKeepsTheDeliveryWithItsBodyForReplay() throws {
        var (world, key) = try worldOwingOne()
        let identity = try #require(world.state.outbox.owed[key]?.identity)
        world.settle(.webhook("a"), key, attempt: 1, .failed)
        #expect(world.endpoint("a").pending.isEmpty)
        #expect(world.endpoint("a").failed == [FailedDelivery(event: key, atMs: world.nowMs, reason: "attempts_exhausted",
                                                              identity: identity)])
        #expect(world.state.outbox.owed.isEmpty)
        world.apply(ProjectState.ChangeBatch([.deliveriesQueued(.webhook("a"), [key])], atMs: world.nowMs))
        #expect(world.endpoint("a").failed.isEmpty)
        #expect(world.endpoint("a").pending[key] == PendingDelivery(attempts: 0, nextAttemptMs: world.nowMs))
        #expect(world.state.outbox.owed[key]?.identity == identity)
    }

    @Test func goneDisablesTheWebhookUntilTheConfigNamesItAgain() throws {
        var (world, key) = try worldOwingOne()
        let id = try world.create("bob")
        try world.transact(id, 5, key: "k2")
        world.settle(.webhook("a"), key, attempt: 1, .gone, status: 410)
        #expect(world.endpoint("a").disabled == "gone")
        #expect(world.endpoint("a").pending.isEmpty)
        #expect(world.endpoint("a").failed.map(\.reason) == ["disabled", "disabled"])
        try world.transact(id, 5, key: "k3")
        #expect(world.endpoint("a").pending.isEmpty)
        world.configureOutbound([webhook("a")])
        #expect(world.endpoint("a").disabled == nil)
        try world.transact(id, 5, key: "k4")
        #expect(world.endpoint("a").pending.count == 1)
    }

    @Test func fiveDaysOfNothingButFailuresDisablesTheWebhook() throws {
        var (world, key) = try worldOwingOne()
        world.settle(.webhook("a"), key, attempt: 1, .retry(atMs: world.nowMs + 1))
        world.nowMs += DeliverySchedule.disableAfterFailingMs - 1
        world.settle(.webhook("a"), key, attempt: 2, .retry(atMs: world.nowMs + 1))
        #expect(world.endpoint("a").disabled == nil)
        world.nowMs += 1
        world.settle(.webhook("a"), key, attempt: 3, .retry(atMs: world.nowMs + 1))
        #expect(world.endpoint("a").disabled == "failing")
    }

    @Test func aSuccessEndsTheFailingStretch() throws {
        var (world, key) = try worldOwingOne()
        world.settle(.webhook("a"), key, attempt: 1, .retry(atMs: world.nowMs + 1))
        world.settle(.webhook("a"), key, attempt: 2, .delivered)
        #expect(world.endpoint("a").failingSinceMs == nil)
    }

    @Test func aWebhookTheConfigDropsTakesItsDeliveriesWithIt() throws {
        var (world, _) = try worldOwingOne()
        world.configureOutbound([])
        #expect(world.state.outbox.endpoints.isEmpty)
        #expect(world.state.outbox.owed.isEmpty)
    }

    @Test func replayingTheLogRebuildsTheOutbox() throws {
        var (world, key) = try worldOwingOne()
        world.settle(.webhook("a"), key, attempt: 1, .retry(atMs: world.nowMs + 5_000))
        let id = try world.create("carol")
        try world.transact(id, 7, key: "k9")
        world.settle(.webhook("a"), world.lastEventKey, attempt: 1, .delivered)
        var replayed = world.start
        for batch in world.batches { replayed.apply(batch) }
        #expect(replayed.outbox == world.state.outbox)
        #expect(replayed == world.state)
    }
}

@Suite struct OutboxFeedTests {
    @Test func anOwedEventOutlivesTheFeedsAgeButNotItsCap() throws {
        var retention = Retention.standard
        retention.feedEventsMax = 3
        var world = PurchaseWorld.withCurrencies(retention: retention)
        world.configureOutbound([webhook("a")])
        let id = try world.create("alice")
        try world.transact(id, 5, key: "k1")
        let owed = world.lastEventKey
        world.nowMs += retention.feedAgeMs + 1
        try world.transact(id, 5, key: "k2")
        world.settle(.webhook("a"), world.lastEventKey, attempt: 1, .delivered)
        #expect(world.state.events.first.map(EventKey.init) == owed)
        try world.transact(id, 5, key: "k3")
        try world.transact(id, 5, key: "k4")
        #expect(world.state.events.first.map(EventKey.init) != owed)
        #expect(world.endpoint("a").pending[owed] == nil)
        #expect(world.endpoint("a").failed.first?.reason == "feed_overflow")
        #expect(world.state.outbox.owed[owed] == nil)
    }
}

@Suite struct DeliveryScheduleTests {
    @Test func failuresWaitTheDesignsScheduleWithinTwentyPercent() {
        let expected: [Int64] = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]
        for (index, base) in expected.enumerated() {
            for fraction in [0.0, 0.5, 0.999] {
                let result = DeliverySchedule.result(afterAttempt: index + 1, answer: .failure(retryAfterMs: nil), nowMs: 0,
                                                     randomFraction: fraction)
                guard case .retry(let atMs) = result else {
                    Issue.record("attempt \(index + 1): \(result)")
                    continue
                }
                #expect(Double(atMs) >= Double(base) * 0.8 && Double(atMs) <= Double(base) * 1.2)
            }
        }
        #expect(DeliverySchedule.result(afterAttempt: 8, answer: .failure(retryAfterMs: nil), nowMs: 0, randomFraction: 0.5) == .failed)
    }

    @Test func aLongerRetryAfterIsHonouredAndAShorterOneIsNot() {
        #expect(DeliverySchedule.result(afterAttempt: 1, answer: .failure(retryAfterMs: 60_000), nowMs: 10, randomFraction: 0.5)
            == .retry(atMs: 60_010))
        #expect(DeliverySchedule.result(afterAttempt: 1, answer: .failure(retryAfterMs: 1_000), nowMs: 10, randomFraction: 0.5)
            == .retry(atMs: 5_010))
    }

    @Test func successAndGoneEndTheDelivery() {
        #expect(DeliverySchedule.result(afterAttempt: 3, answer: .success, nowMs: 0, randomFraction: 0) == .delivered)
        #expect(DeliverySchedule.result(afterAttempt: 3, answer: .gone, nowMs: 0, randomFraction: 0) == .gone)
    }

    @Test func eventKeysReadTheIDsEventsHave() {
        #expect(EventKey(eventID: "evt_12_3") == EventKey(cursor: 12, index: 3))
        #expect(EventKey(eventID: "evt_012_3") == nil)
        #expect(EventKey(eventID: "evt_12") == nil)
        #expect(EventKey(eventID: "nope") == nil)
    }
}
