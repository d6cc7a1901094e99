/// The project's durable outbox (DESIGN.md, "Outbound delivery"): for each place events go, the
/// deliveries still owed, those given up on, and how the endpoint fares; and for each event
/// owed anywhere, what its body says about the profile as it was (``EventIdentity``).
///
/// It is part of the state, so it is changed only by `ProjectState.apply`: an event and the
/// deliveries it owes come from the same applied change (the config says who is owed what),
/// and each attempt's outcome is a logged change of its own. Replaying the log rebuilds it
/// exactly; which deliveries are handed out now, and which are in flight, is the runtime's
/// business, not the state's.
public struct Outbox: Sendable, Equatable {
    /// Every target the config names, enabled or not.
    public internal(set) var endpoints: [OutboxTarget: OutboxEndpoint]
    /// The events some delivery still owes, with the identity their bodies show.
    public internal(set) var owed: [EventKey: OwedEvent]

    public init(endpoints: [OutboxTarget: OutboxEndpoint] = [:], owed: [EventKey: OwedEvent] = [:]) {
        self.endpoints = endpoints
        self.owed = owed
    }

    /// No target: recording an event costs one check.
    public var isIdle: Bool { endpoints.isEmpty }
}

/// One target's deliveries and health.
public struct OutboxEndpoint: Sendable, Equatable {
    /// Events after this sequence number are owed here: a target added later starts from the
    /// newest event, never from the feed's past.
    public var startCursor: UInt64
    /// Why it is disabled (`gone`: it answered 410; `failing`: every attempt failed for 5 days);
    /// `nil`: enabled. A disabled endpoint is owed nothing until a `config.put` names it again.
    public var disabled: String?
    /// Changed only through ``setPending(_:_:)`` and ``removePending(_:)``, which keep
    /// ``failingCount`` with it.
    public private(set) var pending: [EventKey: PendingDelivery]
    /// Pending deliveries that have failed at least once (kept with `pending`, so that a status
    /// or a metric never walks millions of deliveries).
    public private(set) var failingCount: Int
    /// Oldest first.
    public var failed: [FailedDelivery]
    public var lastSuccessMs: Int64?
    public var lastError: String?
    /// Since when every attempt has failed; `nil` after a success.
    public var failingSinceMs: Int64?
    /// The newest attempts, oldest first, at most ``DeliverySchedule/recentAttemptsKept``.
    public var recent: [DeliveryAttempt]

    public init(startCursor: UInt64, disabled: String? = nil, pending: [EventKey: PendingDelivery] = [:],
                failed: [FailedDelivery] = [], lastSuccessMs: Int64? = nil, lastError: String? = nil,
                failingSinceMs: Int64? = nil, recent: [DeliveryAttempt] = [])
    {
        self.startCursor = startCursor
        self.disabled = disabled
        self.pending = pending
        self.failingCount = pending.values.reduce(0) { $0 + ($1.attempts > 0 ? 1 : 0) }
        self.failed = failed
        self.lastSuccessMs = lastSuccessMs
        self.lastError = lastError
        self.failingSinceMs = failingSinceMs
        self.recent = recent
    }

    mutating func setPending(_ key: EventKey, _ delivery: PendingDelivery) {
        let before = pending.updateValue(delivery, forKey: key)
        failingCount += (delivery.attempts > 0 ? 1 : 0) - (before.map { $0.attempts > 0 ? 1 : 0 } ?? 0)
    }

    @discardableResult
    mutating func removePending(_ key: EventKey) -> PendingDelivery? {
        guard let removed = pending.removeValue(forKey: key) else { return nil }
        if removed.attempts > 0 { failingCount -= 1 }
        return removed
    }

    mutating func removeAllPending() {
        pending = [:]
        failingCount = 0
    }
}

/// An event some delivery still owes.
public struct OwedEvent: Sendable, Equatable {
    public var identity: EventIdentity
    /// Pending deliveries of it, over every target.
    public var pending: Int

    public init(identity: EventIdentity, pending: Int) {
        self.identity = identity
        self.pending = pending
    }
}
