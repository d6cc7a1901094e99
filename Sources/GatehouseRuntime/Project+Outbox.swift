public import GatehouseCore
public import GatehouseStorage
import Synchronization

/// Who delivers a project's outbox: the server installs it, and each project hands it itself
/// when it first has something to deliver (DESIGN.md: attempts run off the project's actor).
public final class OutboxHook: Sendable {
    private let wake = Mutex<(@Sendable (Project) -> Void)?>(nil)

    public init() {}

    /// `body` is called with a project whose outbox (or mail) has work and no deliverer listening yet.
    public func install(_ body: (@Sendable (Project) -> Void)?) {
        wake.withLock { $0 = body }
    }

    func start(_ project: Project) {
        wake.withLock { $0 }?(project)
    }
}

/// One target's figures for `webhook.status`.
public struct OutboxEndpointStatus: Sendable, Equatable {
    public var target: OutboxTarget
    public var disabled: String?
    public var pending: Int
    public var failing: Int
    public var failed: Int
    public var inFlight: Int
    public var lastSuccessMs: Int64?
    public var lastError: String?
    public var nextAttemptMs: Int64?
}

extension Project {
    /// The deliverer's listener: called (off the actor) whenever deliveries or emails may have
    /// become due.
    /// Installing one also runs it once, for what was pending when the project loaded.
    public func listenForDeliveries(_ listener: @escaping @Sendable () -> Void) {
        outboxListener = listener
        listener()
    }

    /// Hands out the deliveries due by the project's clock now (at most 16 in flight a target),
    /// and when the next falls due.
    public func takeDueDeliveries() -> (due: [DueDelivery], nextDueMs: Int64?) {
        guard !published.isDeleted else { return ([], nil) }
        let now = nowMs
        let durable = log.durableLSN
        return withOutboxQueue { queue, state in queue.take(from: state, nowMs: now, durableLSN: durable) }
    }

    /// Logs how attempts ended, in one change; what the log refuses is due again as it was.
    public func settleDeliveries(_ outcomes: [DeliveryOutcome]) -> LSN? {
        guard !outcomes.isEmpty else { return nil }
        outboxQueue.release(outcomes)
        do throws(GatehouseError) {
            return try commit(ProjectState.ChangeBatch([.deliveriesSettled(outcomes)], atMs: nowMs))
        } catch {
            withOutboxQueue { queue, state in queue.returnUnsettled(outcomes, in: state) }
            return nil
        }
    }

    /// `webhook.replay` of one event (`eventID`) or of every failed delivery since `failedSinceMs`.
    public func replayDeliveries(to target: OutboxTarget, eventID: String?, failedSinceMs: Int64?) throws(GatehouseError)
        -> Committed<Int>
    {
        let keys = try reading { state throws(GatehouseError) in
            try Self.replayKeys(state, target: target, eventID: eventID, failedSinceMs: failedSinceMs)
        }
        guard !keys.isEmpty else { return Committed(0, lsn: lastCommittedLSN) }
        let lsn = try commit(ProjectState.ChangeBatch([.deliveriesQueued(target, keys)], atMs: nowMs))
        return Committed(keys.count, lsn: lsn)
    }

    private static func replayKeys(_ state: borrowing ProjectState, target: OutboxTarget, eventID: String?, failedSinceMs: Int64?)
        throws(GatehouseError) -> [EventKey]
    {
        let endpoint = try enabledEndpoint(state, target)
        if let eventID {
            guard let key = EventKey(eventID: eventID), state.events.event(at: key) != nil
            else { throw GatehouseError(.notFound, "no event \(eventID) in the feed") }
            return endpoint.pending[key] == nil ? [key] : []
        }
        let since = failedSinceMs ?? 0
        var seen = Set<EventKey>()
        return endpoint.failed.filter { $0.atMs >= since && state.events.event(at: $0.event) != nil && seen.insert($0.event).inserted }
            .map(\.event)
    }

    private static func enabledEndpoint(_ state: borrowing ProjectState, _ target: OutboxTarget) throws(GatehouseError)
        -> OutboxEndpoint
    {
        guard let endpoint = state.outbox.endpoints[target] else {
            throw GatehouseError(.notFound, "no webhook \(target.name) in the config")
        }
        guard endpoint.disabled == nil else {
            throw GatehouseError(.conflict, "webhook \(target.name) is disabled (\(endpoint.disabled ?? "")); a config.put that names it enables it")
        }
        return endpoint
    }

    /// `webhook.test`: a `TEST` event owed to that webhook alone; answers its id.
    public func testWebhook(_ id: String) throws(GatehouseError) -> Committed<String> {
        _ = try reading { state throws(GatehouseError) in try Self.enabledEndpoint(state, .webhook(id)) }
        let lsn = try commit(ProjectState.ChangeBatch(
            [.eventRecorded(.test, nil, [EventDetail(ProjectState.testWebhookDetail, .string(id))])], atMs: nowMs))
        let key = peek { state in state.events.last.map(EventKey.init) }
        guard let key else { throw GatehouseError(.internal, "the TEST event is not in the feed") }
        return Committed(key.eventID, lsn: lsn)
    }

    /// `webhook.status`: every target, in the config's order (OneSignal last).
    public func outboxStatus() -> Committed<[OutboxEndpointStatus]> {
        let queue = outboxQueue
        let statuses = peek { state in
            var targets: [OutboxTarget] = state.config.webhooks.map { .webhook($0.id) }
            if state.config.integrations.oneSignal != nil { targets.append(.oneSignal) }
            return targets.compactMap { target -> OutboxEndpointStatus? in
                guard let endpoint = state.outbox.endpoints[target] else { return nil }
                return OutboxEndpointStatus(
                    target: target, disabled: endpoint.disabled, pending: endpoint.pending.count, failing: endpoint.failingCount,
                    failed: endpoint.failed.count, inFlight: queue.inFlight(target), lastSuccessMs: endpoint.lastSuccessMs,
                    lastError: endpoint.lastError, nextAttemptMs: endpoint.pending.values.lazy.map(\.nextAttemptMs).min())
            }
        }
        return Committed(statuses, lsn: lastCommittedLSN)
    }

    /// `webhook.deliveries`: the newest attempts at `target`, newest first.
    public func recentDeliveries(to target: OutboxTarget, limit: Int) throws(GatehouseError) -> Committed<[DeliveryAttempt]> {
        let attempts = try reading { state throws(GatehouseError) in
            guard let endpoint = state.outbox.endpoints[target] else {
                throw GatehouseError(.notFound, "no webhook \(target.name) in the config")
            }
            return Array(endpoint.recent.suffix(limit).reversed())
        }
        return Committed(attempts, lsn: lastCommittedLSN)
    }

    /// After a change: the schedules learn what it made due (deliveries and emails), the
    /// deliverer hears of it once the change is durable, and the figures `/metrics` reads are
    /// published.
    func noteOutbox(_ effects: ProjectState.BatchEffects, lsn: LSN, outboxIdle: Bool) {
        if !effects.scheduled.isEmpty || !effects.scheduledMail.isEmpty {
            if !effects.scheduled.isEmpty { outboxQueue.schedule(effects.scheduled, lsn: lsn) }
            if !effects.scheduledMail.isEmpty { mailQueue.schedule(effects.scheduledMail, lsn: lsn) }
            if let listener = outboxListener {
                wakeDeliverer(afterDurable: lsn, listener)
            } else {
                outboxHook.start(self)
            }
        } else if effects.configChanged, !outboxIdle, outboxListener == nil {
            outboxHook.start(self)
        }
        if !outboxIdle || effects.configChanged { publishOutboxFigures() }
    }

    /// Runs at load: a project with deliveries or emails owed asks for its deliverer.
    public func startOutbox() {
        let idle = peek { $0.outbox.isIdle }
        publishOutboxFigures()
        if !idle || !mailQueue.isEmpty, outboxListener == nil { outboxHook.start(self) }
    }

    private func publishOutboxFigures() {
        let figures = peek { state in
            var figures = OutboxFigures()
            for (target, endpoint) in state.outbox.endpoints {
                figures.add(target, pending: endpoint.pending.count, failing: endpoint.failingCount, failed: endpoint.failed.count)
            }
            return figures
        }
        published.noteOutbox(figures)
    }
}

/// A project's outbox counts by kind, for `/metrics`: webhooks and pushes (fixed fields, so
/// publishing them after a write allocates nothing).
public struct OutboxFigures: Sendable, Equatable {
    public struct Counts: Sendable, Equatable {
        public var pending = 0
        public var failing = 0
        public var failed = 0

        public init() {}
    }

    public var webhook = Counts()
    public var push = Counts()

    public init() {}

    /// The counts of `kind` (``OutboxTarget/kind``: `webhook` or `push`).
    public func counts(of kind: String) -> Counts { kind == "push" ? push : webhook }

    mutating func add(_ target: OutboxTarget, pending: Int, failing: Int, failed: Int) {
        switch target {
        case .webhook:
            webhook.pending += pending
            webhook.failing += failing
            webhook.failed += failed
        case .oneSignal:
            push.pending += pending
            push.failing += failing
            push.failed += failed
        }
    }
}
