// How the outbox follows the state's changes (DESIGN.md, "Outbound delivery"): the config says
// who is owed an event, the event's own change owes it, and each logged outcome settles or
// reschedules one delivery. Everything here runs inside `apply`, so replay rebuilds it exactly.

/// What an event's change knows of it that its deliveries need, without unpacking its details.
struct EventFacts {
    var productID: String?
    var entitlement: String?
    var currency: String?
    var transferredFrom: [ProfileID] = []
    var transferredTo: [ProfileID] = []
    /// A `TEST` event's webhook.
    var webhook: String?

    init(productID: String? = nil, entitlement: String? = nil, currency: String? = nil) {
        self.productID = productID
        self.entitlement = entitlement
        self.currency = currency
    }

    init(_ details: [EventDetail]) {
        for detail in details {
            switch (detail.name, detail.value) {
            case ("product_id", .string(let value)): productID = value
            case ("entitlement", .string(let value)): entitlement = value
            case ("currency", .string(let value)): currency = value
            case ("transferred_from", .profiles(let ids)): transferredFrom = ids
            case ("transferred_to", .profiles(let ids)): transferredTo = ids
            case ("webhook", .string(let value)): webhook = value
            default: break
            }
        }
    }
}

/// A delivery the runtime should schedule: it became due at `dueMs` in this batch.
public struct ScheduledDelivery: Sendable, Equatable {
    public var target: OutboxTarget
    public var event: EventKey
    public var dueMs: Int64

    public init(target: OutboxTarget, event: EventKey, dueMs: Int64) {
        self.target = target
        self.event = event
        self.dueMs = dueMs
    }
}

extension ProjectState {
    /// The detail that names a `TEST` event's webhook.
    public static let testWebhookDetail = "webhook"

    // MARK: Who is owed

    /// The config was replaced at `sequence`: a target it names for the first time is owed the
    /// events from now on, one it names again is enabled, one it no longer names is dropped with
    /// what it was owed.
    mutating func followOutboundConfig() {
        var targets: [OutboxTarget] = config.webhooks.map { .webhook($0.id) }
        if config.integrations.oneSignal != nil { targets.append(.oneSignal) }
        for target in targets {
            if var endpoint = outbox.endpoints[target] {
                if endpoint.disabled != nil {
                    endpoint.disabled = nil
                    endpoint.failingSinceMs = nil
                    outbox.endpoints[target] = endpoint
                }
            } else {
                outbox.endpoints[target] = OutboxEndpoint(startCursor: sequence)
            }
        }
        let named = Set(targets)
        for (target, endpoint) in outbox.endpoints where !named.contains(target) {
            for key in endpoint.pending.keys { releaseOwed(key) }
            outbox.endpoints[target] = nil
        }
    }

    /// Owes the event just recorded at `key` to every target that wants it, in the same apply.
    mutating func oweDeliveries(of key: EventKey, type: EventType, profile: ProfileID?, customerUserID: String?, atMs: Int64,
                                facts: @autoclosure () -> EventFacts, scheduled: inout [ScheduledDelivery])
    {
        guard !outbox.isIdle else { return }
        let facts = facts()
        var targets: [OutboxTarget] = []
        if type == .test {
            if let webhook = facts.webhook, outbox.endpoints[.webhook(webhook)]?.disabled == nil { targets.append(.webhook(webhook)) }
        } else if profile != nil {
            for webhook in config.webhooks where webhook.wants(type) && isOwing(.webhook(webhook.id), key) {
                targets.append(.webhook(webhook.id))
            }
        }
        var identity: EventIdentity?
        if type != .test, profile != nil, config.integrations.oneSignal?.notification(for: type) != nil, isOwing(.oneSignal, key) {
            let found = self.identity(profile: profile, customerUserID: customerUserID, facts: facts)
            identity = found
            if !found.pushTo.isEmpty { targets.append(.oneSignal) }
        }
        guard !targets.isEmpty else { return }
        let owedIdentity = identity ?? self.identity(profile: profile, customerUserID: customerUserID, facts: facts)
        for target in targets {
            outbox.endpoints[target]?.setPending(key, PendingDelivery(attempts: 0, nextAttemptMs: atMs))
            scheduled.append(ScheduledDelivery(target: target, event: key, dueMs: atMs))
        }
        outbox.owed[key] = OwedEvent(identity: owedIdentity, pending: targets.count)
    }

    /// Whether `target` is enabled and was configured before the event at `key`.
    private func isOwing(_ target: OutboxTarget, _ key: EventKey) -> Bool {
        guard let endpoint = outbox.endpoints[target] else { return false }
        return endpoint.disabled == nil && key.cursor > endpoint.startCursor
    }

    /// What a body says of `profile` now, and of the config now.
    func identity(profile id: ProfileID?, customerUserID: String?, facts: EventFacts) -> EventIdentity {
        guard let id else { return .nobody }
        let profile = profiles.profile(id)
        var identity = EventIdentity(appUserID: appUserID(of: id, profile), originalAppUserID: profile?.installID?.description ?? id.description,
                                     aliases: aliases(of: id, profile))
        if let customerUserID { identity.pushTo = [customerUserID] }
        if let productID = facts.productID {
            identity.entitlementIDs = config.product(id: productID)?.entitlements ?? []
        } else if let entitlement = facts.entitlement {
            identity.entitlementIDs = [entitlement]
        }
        if let currency = facts.currency { identity.currencyName = config.currency(code: currency)?.name }
        if !facts.transferredFrom.isEmpty || !facts.transferredTo.isEmpty {
            identity.transferredFrom = facts.transferredFrom.map { appUserID(of: $0, profiles.profile($0)) }
            identity.transferredTo = facts.transferredTo.map { appUserID(of: $0, profiles.profile($0)) }
            let sides = facts.transferredFrom + facts.transferredTo
            identity.pushTo = sides.compactMap { profiles.profile($0)?.customerUserID }
        }
        return identity
    }

    /// RevenueCat's `app_user_id` for a profile: its customer user id, else its install id, else its id.
    private func appUserID(of id: ProfileID, _ profile: Profile?) -> String {
        profile?.customerUserID ?? profile?.installID?.description ?? id.description
    }

    /// Every id of a profile: its own, its install id, its customer user id, and those of the
    /// profiles merged into it.
    private func aliases(of id: ProfileID, _ profile: Profile?) -> [String] {
        var aliases = [id.description]
        guard let profile else { return aliases }
        if let installID = profile.installID { aliases.append(installID.description) }
        if let customerUserID = profile.customerUserID { aliases.append(customerUserID) }
        aliases += profile.aliases.map(\.description)
        aliases += profile.mergedInstallIDs.map(\.description)
        return aliases
    }

    // MARK: Outcomes

    /// Applies attempts' outcomes; one that no longer matches a pending delivery (its target was
    /// dropped, the delivery settled or queued again meanwhile) is ignored.
    mutating func settle(_ outcomes: [DeliveryOutcome], scheduled: inout [ScheduledDelivery]) {
        for outcome in outcomes {
            let key = outcome.attempt.event
            guard var endpoint = outbox.endpoints[outcome.target], endpoint.disabled == nil,
                var pending = endpoint.pending[key], Int(pending.attempts) + 1 == Int(outcome.attempt.attempt)
            else { continue }
            let attempt = outcome.attempt
            endpoint.recent.append(attempt)
            if endpoint.recent.count > DeliverySchedule.recentAttemptsKept {
                endpoint.recent.removeFirst(endpoint.recent.count - DeliverySchedule.recentAttemptsKept)
            }
            if outcome.result == .delivered {
                endpoint.removePending(key)
                endpoint.lastSuccessMs = attempt.atMs
                endpoint.failingSinceMs = nil
                outbox.endpoints[outcome.target] = endpoint
                releaseOwed(key)
                continue
            }
            endpoint.lastError = attempt.error ?? attempt.status.map { "HTTP \($0)" } ?? "failed"
            endpoint.failingSinceMs = endpoint.failingSinceMs ?? attempt.atMs
            switch outcome.result {
            case .delivered:
                preconditionFailure("handled above")
            case .retry(let atMs):
                pending.attempts += 1
                pending.nextAttemptMs = atMs
                endpoint.setPending(key, pending)
                scheduled.append(ScheduledDelivery(target: outcome.target, event: key, dueMs: atMs))
            case .failed:
                endpoint.removePending(key)
                endpoint.failed.append(FailedDelivery(event: key, atMs: attempt.atMs, reason: "attempts_exhausted",
                                                      identity: outbox.owed[key]?.identity ?? .nobody))
                releaseOwed(key)
            case .gone:
                outbox.endpoints[outcome.target] = endpoint
                disable(outcome.target, reason: "gone", atMs: attempt.atMs)
                continue
            }
            outbox.endpoints[outcome.target] = endpoint
            if let since = endpoint.failingSinceMs, attempt.atMs - since >= DeliverySchedule.disableAfterFailingMs {
                disable(outcome.target, reason: "failing", atMs: attempt.atMs)
            }
        }
    }

    /// Disables `target`: everything it was owed fails, and it is owed nothing more until a
    /// `config.put` names it again.
    private mutating func disable(_ target: OutboxTarget, reason: String, atMs: Int64) {
        guard var endpoint = outbox.endpoints[target] else { return }
        endpoint.disabled = reason
        for key in endpoint.pending.keys.sorted() {
            endpoint.failed.append(FailedDelivery(event: key, atMs: atMs, reason: "disabled",
                                                  identity: outbox.owed[key]?.identity ?? .nobody))
            releaseOwed(key)
        }
        endpoint.removeAllPending()
        outbox.endpoints[target] = endpoint
    }

    /// One delivery of the event at `key` is settled: the event is owed one fewer.
    private mutating func releaseOwed(_ key: EventKey) {
        guard var owed = outbox.owed[key] else { return }
        owed.pending -= 1
        outbox.owed[key] = owed.pending > 0 ? owed : nil
    }

    // MARK: Replay

    /// `webhook.replay`: the events at `keys` (in the feed) are owed to `target` again from a
    /// first attempt, with the body they had when they were first owed where that is known.
    mutating func queue(_ keys: [EventKey], for target: OutboxTarget, atMs: Int64, scheduled: inout [ScheduledDelivery]) {
        guard var endpoint = outbox.endpoints[target], endpoint.disabled == nil else { return }
        for key in keys where endpoint.pending[key] == nil {
            guard let event = events.event(at: key) else { continue }
            let failedAt = endpoint.failed.lastIndex { $0.event == key }
            let identity =
                outbox.owed[key]?.identity ?? failedAt.map { endpoint.failed[$0].identity }
                ?? self.identity(profile: event.profileID, customerUserID: event.customerUserID, facts: EventFacts(event.details))
            if let failedAt { endpoint.failed.remove(at: failedAt) }
            endpoint.setPending(key, PendingDelivery(attempts: 0, nextAttemptMs: atMs))
            scheduled.append(ScheduledDelivery(target: target, event: key, dueMs: atMs))
            var owed = outbox.owed[key] ?? OwedEvent(identity: identity, pending: 0)
            owed.pending += 1
            outbox.owed[key] = owed
        }
        outbox.endpoints[target] = endpoint
    }

    // MARK: The feed

    /// Prunes the feed as ``EventLog/prune(nowMs:keptAgeMs:keptCountMax:)`` does, but keeps, within
    /// the count cap, every event a delivery still owes; a delivery whose event the cap pushes out
    /// fails with `feed_overflow`. Failed deliveries are forgotten once as old as the feed's oldest
    /// events by age.
    mutating func pruneFeedKeepingOwed(atMs: Int64) {
        guard !outbox.isIdle else {
            events.prune(nowMs: atMs, keptAgeMs: retention.feedAgeMs, keptCountMax: retention.feedEventsMax)
            return
        }
        let owed = outbox.owed
        let pushedOut = events.prune(nowMs: atMs, keptAgeMs: retention.feedAgeMs, keptCountMax: retention.feedEventsMax) {
            owed[$0] != nil
        }
        for key in pushedOut { overflow(key, atMs: atMs) }
        let forgetBefore = atMs - retention.feedAgeMs
        for (target, endpoint) in outbox.endpoints {
            guard let first = endpoint.failed.first, first.atMs < forgetBefore else { continue }
            let kept = endpoint.failed.firstIndex { $0.atMs >= forgetBefore } ?? endpoint.failed.count
            outbox.endpoints[target]?.failed.removeFirst(kept)
        }
    }

    /// The event at `key` left the feed while owed: each of its deliveries fails.
    private mutating func overflow(_ key: EventKey, atMs: Int64) {
        guard let owed = outbox.owed[key] else { return }
        for (target, endpoint) in outbox.endpoints where endpoint.pending[key] != nil {
            outbox.endpoints[target]?.removePending(key)
            outbox.endpoints[target]?.failed.append(FailedDelivery(event: key, atMs: atMs, reason: "feed_overflow",
                                                                   identity: owed.identity))
        }
        outbox.owed[key] = nil
    }
}
