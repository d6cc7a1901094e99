import GatehouseBase
@testable import GatehouseCore
import Testing

// DESIGN.md: "Notifications may arrive twice, late or out of order: a repeated notification id
// is applied once, and an older state never overwrites a newer one (compare the store's own
// dates)." Seeded random subscription lives, as the store's notifications with increasing store
// dates, are delivered in order and then shuffled with duplicates; a notification answered
// `not_found` (a renewal before its purchase) is sent again later, as a store retries. Whatever
// the order, the subscription ends the same, and no notification is applied twice.

private typealias C = PurchaseCatalogue

/// A subscription's life as the store tells it, and the events each notification records when
/// delivered in order.
private struct NotifiedLife {
    var notifications: [StoreNotification] = []
    var expected: [String: [EventType]] = [:]
}

/// Draws a plausible life: a purchase (a trial), 3–6 terms, each with a few of cancel / uncancel,
/// plan change, refund of the current term (a fraction) and its reversal, and between terms a
/// renewal or a billing issue followed by a recovery; optionally an expiry at the end.
private struct NotifiedLifeBuilder {
    static let periodMs: Int64 = 10_000
    var generator: RandomSourceGenerator
    var life = NotifiedLife()
    var willRenew = true
    var productID = "pro_monthly"
    var currentRefunded = false

    mutating func int(_ range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &generator) }
    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &generator) < percent }

    mutating func add(_ atMs: Int64, _ event: StoreNotification.Event, _ types: [EventType]) {
        let id = "n\(life.notifications.count)"
        life.notifications.append(StoreNotification(store: C.store, notificationID: id, originalTransactionID: "s1", atMs: atMs,
                                                    event: event))
        life.expected[id] = types
    }

    mutating func change(_ atMs: Int64, _ event: SubscriptionEvent, _ type: EventType) {
        add(atMs, .change(event), [type])
    }

    static func build(seed: UInt64, token: AppAccountToken?, endsExpired: Bool) -> NotifiedLife {
        var builder = NotifiedLifeBuilder(generator: RandomSourceGenerator(SeededRandomSource(seed: seed)))
        let period = periodMs
        let first = C.subscription("s1", purchasedMs: period, expiresMs: 2 * period, token: token, periodType: .trial)
        builder.add(period, .purchase(first), [.initialPurchase])
        let termCount = builder.int(3...6)
        for k in 1...termCount {
            let startMs = k * period
            let termID = k == 1 ? "s1" : "s1.\(k)"
            var atMs = startMs + 1_000
            for _ in 0..<builder.int(0...3) {
                builder.eventWithinTerm(atMs: atMs, termID: termID)
                atMs += builder.int(200...1_500)
            }
            if k == termCount {
                builder.end(atMs: atMs, termID: termID, expiresAtMs: endsExpired ? startMs + period + 100 : nil)
            } else {
                builder.nextTerm(k + 1, startMs: startMs + period)
            }
        }
        return builder.life
    }

    mutating func eventWithinTerm(atMs: Int64, termID: String) {
        switch int(0...2) {
        case 0:
            change(atMs, willRenew ? .cancel : .uncancel, willRenew ? .cancellation : .uncancellation)
            willRenew.toggle()
        case 1:
            productID = productID == "pro_monthly" ? "pro_yearly" : "pro_monthly"
            change(atMs, .productChange(newProductID: productID), .productChange)
        default:
            if currentRefunded {
                change(atMs, .refundReversed(transactionID: termID), .refundReversed)
            } else {
                change(atMs, .refund(transactionID: termID, fraction: Double(int(1...10)) / 10), .refund)
            }
            currentRefunded.toggle()
        }
    }

    /// The store renews just before the term ends, or reports a billing issue just after it and
    /// a recovery (with the new term, or without it and then a renewal).
    mutating func nextTerm(_ k: Int64, startMs: Int64) {
        let term = C.term("s1.\(k)", purchasedMs: startMs, expiresMs: startMs + Self.periodMs)
        if !currentRefunded, chance(40) {
            let grace: Int64? = chance(50) ? startMs + 3_000 : nil
            change(startMs + 10, .billingIssue(graceExpiresMs: grace), .billingIssue)
            if chance(50) {
                change(startMs + 500, .recover(term), .renewal)
            } else {
                change(startMs + 300, .recover(nil), .renewal)
                change(startMs + 600, .renewal(term), .renewal)
            }
        } else {
            change(startMs - 500, .renewal(term), .renewal)
        }
        currentRefunded = false
    }

    /// A refund still standing is reversed before the end (a refunded subscription's expiry
    /// records nothing, which would make the in-order expectations murky).
    mutating func end(atMs: Int64, termID: String, expiresAtMs: Int64?) {
        if currentRefunded { change(atMs, .refundReversed(transactionID: termID), .refundReversed) }
        if let expiresAtMs { change(expiresAtMs, .expire, .expiration) }
    }
}

/// What a delivery run saw.
private struct NotifyDeliveryLog {
    /// Per notification id, how many deliveries were answered `applied: true`.
    var applied: [String: Int] = [:]
    /// The sequence number each applied notification took.
    var notificationAt: [UInt64: String] = [:]
    /// Deliveries answered `not_found` and sent again, and repeats answered `applied: false`.
    var retries = 0
    var repeats = 0
    var problems: [String] = []
}

@Suite("Shuffled, repeated and retried store notifications end in the state in-order delivery reaches")
struct ShuffledDeliveryProperties {
    static let shufflesPerLife = 8

    @Test(arguments: Array(UInt64(1)...10), [true, false])
    func aShuffledLifeEndsTheSame(seed: UInt64, endsExpired: Bool) throws {
        var base = PurchaseWorld(gracePeriodMs: 4_000)
        let owner: ProfileID? = seed.isMultiple(of: 2) ? nil : try base.create()
        let token = owner.map { base.token(of: $0) } ?? fixedToken(seed)
        let life = NotifiedLifeBuilder.build(seed: seed, token: token, endsExpired: endsExpired)

        var inOrder = base
        let inOrderLog = Self.deliverInOrder(life, owner: owner, &inOrder)
        #expect(inOrderLog.problems.isEmpty, "\(inOrderLog.problems)")
        let final = try #require(inOrder.subscription("s1"))
        #expect(final.owner == owner)
        #expect(final.subscription.status == (endsExpired ? .expired : .active))
        #expect(final.subscription.periodType == .normal)

        var generator = RandomSourceGenerator(SeededRandomSource(seed: seed &* 7_919))
        var retries = 0
        var repeats = 0
        for shuffle in 0..<Self.shufflesPerLife {
            var deliveries = life.notifications
            for notification in life.notifications where Int.random(in: 0..<100, using: &generator) < 30 {
                deliveries.append(notification)
            }
            deliveries.shuffle(using: &generator)
            var world = base
            let log = Self.deliverAsAStoreDoes(deliveries, &world)
            let context = "seed \(seed), shuffle \(shuffle)"
            #expect(log.problems.isEmpty, "\(context): \(log.problems)")
            let shuffled = try #require(world.subscription("s1"), "\(context)")
            Self.expectSame(shuffled, final, context)
            #expect(shuffled == final, "\(context)")
            #expect(world.state.purchases.nextDeadlineMs == inOrder.state.purchases.nextDeadlineMs, "\(context)")
            Self.expectAppliedOnce(life, log, world, context)
            retries += log.retries
            repeats += log.repeats
        }
        // The runs did reach what they are about: early deliveries retried, repeats dropped.
        #expect(retries > 0 && repeats > 0)
    }

    /// In order, each notification records exactly the events DESIGN.md's table names.
    private static func deliverInOrder(_ life: NotifiedLife, owner: ProfileID?, _ world: inout PurchaseWorld) -> NotifyDeliveryLog {
        var log = NotifyDeliveryLog()
        for notification in life.notifications {
            let id = notification.notificationID
            do {
                let decision = try world.state.notify(notification, nowMs: world.nowMs)
                let types = decision.batch.recordedTypes
                if types != life.expected[id] { log.problems.append("\(id) recorded \(types), not \(life.expected[id] ?? [])") }
                if decision.batch.recordedEvents.contains(where: { $0.1 != owner }) { log.problems.append("\(id): not the owner") }
                world.apply(decision.batch)
            } catch {
                log.problems.append("\(id): \(error)")
            }
            world.nowMs += 10
        }
        return log
    }

    /// Delivers in the given order; `not_found` goes back to the end of the queue (the store
    /// retries), a bounded number of times.
    private static func deliverAsAStoreDoes(_ deliveries: [StoreNotification], _ world: inout PurchaseWorld) -> NotifyDeliveryLog {
        var log = NotifyDeliveryLog()
        var pending = deliveries[...]
        var attempts = 0
        while let notification = pending.popFirst() {
            attempts += 1
            guard attempts <= deliveries.count * 3 else {
                log.problems.append("still pending after \(attempts) attempts")
                break
            }
            let id = notification.notificationID
            do {
                let decision = try world.state.notify(notification, nowMs: world.nowMs)
                if decision.applied {
                    log.applied[id, default: 0] += 1
                    world.apply(decision.batch)
                    log.notificationAt[world.state.sequence] = id
                } else {
                    log.repeats += 1
                    if !decision.batch.changes.isEmpty { log.problems.append("\(id): a repeat changed something") }
                }
            } catch where error.code == .notFound {
                log.retries += 1
                pending.append(notification)
            } catch {
                log.problems.append("\(id): \(error)")
            }
            world.nowMs += 10
        }
        return log
    }

    private static func expectSame(_ a: HeldSubscription, _ b: HeldSubscription, _ context: String) {
        let x = a.subscription
        let y = b.subscription
        #expect(x.status == y.status, "\(context): status")
        #expect(x.expiresMs == y.expiresMs, "\(context): expiresMs")
        #expect(x.graceExpiresMs == y.graceExpiresMs, "\(context): graceExpiresMs")
        #expect(x.willRenew == y.willRenew, "\(context): willRenew")
        #expect(x.productID == y.productID, "\(context): productID")
        #expect(x.periodType == y.periodType, "\(context): periodType")
        #expect(x.terms == y.terms, "\(context): terms")
        #expect(a.owner == b.owner && a.token == b.token, "\(context): owner")
    }

    /// Every notification applied exactly once, and the feed's events of one notification all
    /// come from that one application.
    private static func expectAppliedOnce(_ life: NotifiedLife, _ log: NotifyDeliveryLog, _ world: PurchaseWorld, _ context: String) {
        for notification in life.notifications {
            let id = notification.notificationID
            #expect(log.applied[id] == 1, "\(context): \(id) applied \(log.applied[id] ?? 0) times")
            #expect(world.state.purchases.hasSeen(notification: id, store: C.store), "\(context): \(id) not seen")
        }
        var cursorsByNotification: [String: Set<UInt64>] = [:]
        for event in world.feed {
            guard let id = log.notificationAt[event.cursor] else {
                Issue.record("\(context): event \(event.id) from no applied notification")
                continue
            }
            cursorsByNotification[id, default: []].insert(event.cursor)
        }
        #expect(cursorsByNotification.values.allSatisfy { $0.count == 1 }, "\(context)")
        #expect(Set(world.feed.map(\.id)).count == world.feed.count, "\(context): event ids repeat")
    }
}
