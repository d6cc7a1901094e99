public import GatehouseCore
import GatehouseStorage

/// A delivery handed to the deliverer: the event, what its body says of the profile, where it
/// goes, and which attempt this is. The deliverer owns it until it hands back the outcome.
public struct DueDelivery: Sendable {
    public let target: OutboxTarget
    public let event: Event
    public let identity: EventIdentity
    /// 1 for the first attempt.
    public let attempt: UInt16
    /// The webhook's settings, for a webhook.
    public let webhook: WebhookSettings?
    /// The project's OneSignal settings and the push this event type sends, for OneSignal.
    public let oneSignal: (settings: OneSignalSettings, notification: OneSignalNotification)?
}

/// Which of a project's pending deliveries are due when, and which are in flight: the runtime's
/// side of the outbox, never logged. Rebuilt from the state's pending deliveries when a project
/// loads, so after a restart every pending delivery is due again at the time the log says (one
/// in flight when the server stopped is sent again: at least once).
///
/// Each target has a heap by due time. An entry may be stale (its delivery settled or was
/// rescheduled since): it is dropped when it comes to the top and no longer matches the state.
/// An entry made by a change the log has not yet made durable waits for it: nothing is sent
/// about a change a crash could still undo.
struct OutboxQueue {
    private struct Entry: Comparable {
        var dueMs: Int64
        var event: EventKey
        var lsn: LSN

        static func < (a: Entry, b: Entry) -> Bool { (a.dueMs, a.event) < (b.dueMs, b.event) }
    }

    private var heaps: [OutboxTarget: MinHeap<Entry>] = [:]
    private var leased: [OutboxTarget: Set<EventKey>] = [:]

    init(_ outbox: Outbox) {
        for (target, endpoint) in outbox.endpoints {
            for (key, delivery) in endpoint.pending {
                heaps[target, default: MinHeap()].push(Entry(dueMs: delivery.nextAttemptMs, event: key, lsn: 0))
            }
        }
    }

    mutating func schedule(_ deliveries: [ScheduledDelivery], lsn: LSN) {
        for delivery in deliveries {
            heaps[delivery.target, default: MinHeap()].push(Entry(dueMs: delivery.dueMs, event: delivery.event, lsn: lsn))
        }
    }

    /// Hands out what is due by `nowMs` and durable, up to each target's room in flight, and
    /// answers when the next one not handed out falls due.
    mutating func take(from state: borrowing ProjectState, nowMs: Int64, durableLSN: LSN) -> (due: [DueDelivery], nextDueMs: Int64?) {
        var due: [DueDelivery] = []
        var nextDueMs: Int64?
        for target in heaps.keys.sorted() {
            guard let endpoint = state.outbox.endpoints[target], endpoint.disabled == nil else {
                heaps[target] = nil
                continue
            }
            var heap = heaps[target] ?? MinHeap()
            var inFlight = leased[target] ?? []
            while inFlight.count < DeliverySchedule.inFlightPerEndpointMax, let top = heap.top {
                guard let pending = endpoint.pending[top.event], pending.nextAttemptMs == top.dueMs,
                    !inFlight.contains(top.event)
                else {
                    heap.pop()
                    continue
                }
                guard top.dueMs <= nowMs, top.lsn <= durableLSN else { break }
                heap.pop()
                guard let delivery = Self.delivery(target, top.event, attempt: pending.attempts + 1, in: state) else { continue }
                inFlight.insert(top.event)
                due.append(delivery)
            }
            if inFlight.count < DeliverySchedule.inFlightPerEndpointMax, let top = heap.top {
                nextDueMs = min(nextDueMs ?? top.dueMs, top.dueMs)
            }
            heaps[target] = heap.isEmpty ? nil : heap
            leased[target] = inFlight.isEmpty ? nil : inFlight
        }
        return (due, nextDueMs)
    }

    /// The outcomes of these deliveries came back: they are no longer in flight.
    mutating func release(_ outcomes: [DeliveryOutcome]) {
        for outcome in outcomes {
            leased[outcome.target]?.remove(outcome.attempt.event)
            if leased[outcome.target]?.isEmpty == true { leased[outcome.target] = nil }
        }
    }

    /// Outcomes that could not be logged: their deliveries are due again as the state has them.
    mutating func returnUnsettled(_ outcomes: [DeliveryOutcome], in state: borrowing ProjectState) {
        release(outcomes)
        for outcome in outcomes {
            guard let pending = state.outbox.endpoints[outcome.target]?.pending[outcome.attempt.event] else { continue }
            heaps[outcome.target, default: MinHeap()].push(Entry(dueMs: pending.nextAttemptMs, event: outcome.attempt.event, lsn: 0))
        }
    }

    /// Deliveries in flight to `target`.
    func inFlight(_ target: OutboxTarget) -> Int { leased[target]?.count ?? 0 }

    private static func delivery(_ target: OutboxTarget, _ key: EventKey, attempt: UInt16, in state: borrowing ProjectState)
        -> DueDelivery?
    {
        guard let event = state.events.event(at: key), let owed = state.outbox.owed[key] else { return nil }
        switch target {
        case .webhook(let id):
            guard let settings = state.config.webhooks.first(where: { $0.id == id }) else { return nil }
            return DueDelivery(target: target, event: event, identity: owed.identity, attempt: attempt, webhook: settings,
                               oneSignal: nil)
        case .oneSignal:
            guard let settings = state.config.integrations.oneSignal, let notification = settings.notification(for: event.type)
            else { return nil }
            return DueDelivery(target: target, event: event, identity: owed.identity, attempt: attempt, webhook: nil,
                               oneSignal: (settings, notification))
        }
    }
}

/// A binary min-heap.
struct MinHeap<Element: Comparable> {
    private var elements: [Element] = []

    var top: Element? { elements.first }
    var isEmpty: Bool { elements.isEmpty }
    var count: Int { elements.count }

    mutating func push(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child] < elements[parent] else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func pop() -> Element? {
        guard !elements.isEmpty else { return nil }
        elements.swapAt(0, elements.count - 1)
        let popped = elements.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < elements.count, elements[left] < elements[smallest] { smallest = left }
            if right < elements.count, elements[right] < elements[smallest] { smallest = right }
            guard smallest != parent else { break }
            elements.swapAt(parent, smallest)
            parent = smallest
        }
        return popped
    }
}
