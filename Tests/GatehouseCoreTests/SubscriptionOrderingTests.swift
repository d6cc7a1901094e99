@testable import GatehouseCore
import Testing

// DESIGN.md: "Notifications may arrive twice, late or out of order: a repeated notification id
// is applied once, and an older state never overwrites a newer one (compare the store's own
// dates)." Deduplication by notification id is the runtime's; these tests check that the
// subscription itself also applies a repeat once and never rolls back.

/// A store notification: the event and the store's own date of it.
struct SubscriptionDelivery: Equatable {
    let event: SubscriptionEvent
    let atMs: Int64
}

extension Subscription {
    func delivering(_ deliveries: [SubscriptionDelivery], gracePeriodMs: Int64 = SubscriptionFixture.gracePeriodMs) -> Subscription {
        deliveries.reduce(self) { $0.applying($1.event, atMs: $1.atMs, gracePeriodMs: gracePeriodMs) }
    }
}

private func term(_ k: Int64, price: Double = 9.99) -> SubscriptionTerm {
    SubscriptionTerm(transactionID: "t\(k)", purchasedMs: k * 10_000, expiresMs: (k + 1) * 10_000, price: price)
}

@Suite struct SubscriptionOrderingTests {
    @Test func aRepeatedRenewalIsAppliedOnce() {
        let once = SubscriptionFixture.purchased().apply(.renewal(term(2)), atMs: 20_000, gracePeriodMs: 0)
        let twice = once.subscription.apply(.renewal(term(2)), atMs: 20_000, gracePeriodMs: 0)
        #expect(once.eventTypes == [.renewal])
        #expect(twice.eventTypes.isEmpty)
        #expect(twice.subscription == once.subscription)
        #expect(twice.subscription.terms.count == 2)
    }

    @Test(arguments: [
        SubscriptionEvent.cancel, .uncancel, .billingIssue(graceExpiresMs: nil), .recover(nil), .expire,
        .refund(transactionID: "t1", fraction: 1), .refundReversed(transactionID: "t1"), .revoke,
        .productChange(newProductID: "pro_yearly"), .purchase(term(2), periodType: .normal),
    ])
    func everyEventRepeatedChangesNothingTheSecondTime(_ event: SubscriptionEvent) {
        let once = SubscriptionFixture.purchased().applying(event, atMs: 3_000)
        let twice = once.apply(event, atMs: 3_000, gracePeriodMs: SubscriptionFixture.gracePeriodMs)
        #expect(twice.subscription == once)
        #expect(twice.effects.isEmpty)
    }

    @Test func aCancelDatedBeforeAnUncancelButDeliveredAfterItIsIgnored() {
        let cancelled = SubscriptionFixture.purchased().applying(.cancel, atMs: 2_000)
        let uncancelled = cancelled.applying(.uncancel, atMs: 4_000)
        let late = uncancelled.apply(.cancel, atMs: 3_000, gracePeriodMs: 0)
        #expect(late.subscription.willRenew)
        #expect(late.effects.isEmpty)
    }

    @Test func anOldRenewalAfterANewerOneOnlyCompletesTheHistory() {
        let newer = SubscriptionFixture.purchased().applying(.renewal(term(3)), atMs: 30_000)
        let late = newer.apply(.renewal(term(2)), atMs: 20_000, gracePeriodMs: 0)
        #expect(late.effects.isEmpty)
        #expect(late.subscription.expiresMs == 40_000)
        #expect(late.subscription.currentTerm?.transactionID == "t3")
        #expect(late.subscription.terms.map(\.transactionID) == ["t1", "t2", "t3"])
        #expect(late.subscription.lastEventMs == 30_000)
    }

    @Test func aLateBillingIssueDoesNotUndoANewerRecovery() {
        let recovered = SubscriptionFixture.purchased().applying(.recover(term(2)), atMs: 12_000)
        let late = recovered.apply(.billingIssue(graceExpiresMs: nil), atMs: 10_500, gracePeriodMs: 5_000)
        #expect(late.subscription.status == .active)
        #expect(late.effects.isEmpty)
    }

    @Test func aLateRenewalDatedBeforeAnExpiryDoesNotRevive() {
        let expired = SubscriptionFixture.purchased().applying(.expire, atMs: 25_000)
        let late = expired.applying(.renewal(term(2)), atMs: 20_000)
        #expect(late.status == .expired)
        #expect(late.expiresMs == 30_000)
    }

    @Test func aRefundReversalDeliveredBeforeItsRefundWins() {
        let reversedFirst = SubscriptionFixture.purchased()
            .applying(.refundReversed(transactionID: "t1"), atMs: 5_000)
            .applying(.refund(transactionID: "t1", fraction: 1), atMs: 4_000)
        #expect(reversedFirst.status == .active)
        #expect(reversedFirst.term(id: "t1")?.refundedFraction == 0)
    }

    @Test func aRefundOfATermNotYetKnownAppliesWhenTheTermArrives() {
        let subscription = SubscriptionFixture.purchased()
            .applying(.refund(transactionID: "t2", fraction: 1), atMs: 12_000)
            .applying(.renewal(term(2)), atMs: 10_000)
        #expect(subscription.status == .refunded)
        #expect(subscription.statusBeforeRefund == .active)
        #expect(subscription.term(id: "t2")?.refundedFraction == 1)
    }

    @Test func aLateTermMovesADerivedGraceButNotOneTheStoreNamed() {
        let derived = SubscriptionFixture.purchased()
            .applying(.billingIssue(graceExpiresMs: nil), atMs: 20_500, gracePeriodMs: 5_000)
            .applying(.renewal(term(2)), atMs: 10_000, gracePeriodMs: 5_000)
        #expect(derived.status == .grace && derived.graceExpiresMs == 35_000)
        let named = SubscriptionFixture.purchased()
            .applying(.billingIssue(graceExpiresMs: 26_000), atMs: 20_500)
            .applying(.renewal(term(2)), atMs: 10_000)
        #expect(named.status == .grace && named.graceExpiresMs == 26_000)
    }

    @Test func revokeIsFinalWhateverTheDates() {
        let revoked = SubscriptionFixture.purchased().applying(.revoke, atMs: 5_000)
        let later = revoked.delivering([
            SubscriptionDelivery(event: .renewal(term(2)), atMs: 10_000),
            SubscriptionDelivery(event: .recover(nil), atMs: 11_000),
            SubscriptionDelivery(event: .refundReversed(transactionID: "t1"), atMs: 12_000),
        ])
        #expect(later.status == .revoked)
    }

    // MARK: Shuffled and repeated delivery

    @Test(arguments: 0..<200)
    func shuffledAndRepeatedDeliveryEndsAsInOrderDelivery(seed: Int) {
        var random = SubscriptionSplitMix(seed: UInt64(seed))
        let life = SubscriptionLife.random(using: &random)
        let inOrder = life.start.delivering(life.deliveries)
        for _ in 0..<5 {
            var deliveries = life.deliveries
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                deliveries.append(deliveries.randomElement(using: &random)!)
            }
            deliveries.shuffle(using: &random)
            let shuffled = life.start.delivering(deliveries)
            #expect(shuffled == inOrder, "seed \(seed): \(deliveries)")
        }
    }
}

/// A subscription's life as the store would tell it, with strictly increasing store dates:
/// the first purchase (the start, since anything else for an unknown subscription is
/// `not_found`), then renewals, billing issues and recoveries, auto-renew toggles, plan changes,
/// refunds of the current or an older term and their reversals, and an ending.
struct SubscriptionLife {
    let start: Subscription
    let deliveries: [SubscriptionDelivery]

    static func random(using random: inout SubscriptionSplitMix) -> SubscriptionLife {
        let periodMs: Int64 = 10_000
        let first = SubscriptionTerm(transactionID: "t0", purchasedMs: 0, expiresMs: periodMs, price: 0)
        let start = Subscription.purchased(
            store: "test", originalTransactionID: "t0", productID: "p0", term: first,
            periodType: .trial, environment: .sandbox, atMs: 0
        ).subscription
        var deliveries: [SubscriptionDelivery] = []
        var clockMs: Int64 = 0
        func say(_ event: SubscriptionEvent) {
            clockMs += Int64.random(in: 1...500, using: &random)
            deliveries.append(SubscriptionDelivery(event: event, atMs: clockMs))
        }
        let periods = Int64.random(in: 1...6, using: &random)
        for k in 1...periods {
            let term = SubscriptionTerm(
                transactionID: "t\(k)", purchasedMs: k * periodMs, expiresMs: (k + 1) * periodMs, price: 9.99)
            clockMs = max(clockMs, k * periodMs)
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                say(.billingIssue(graceExpiresMs: Bool.random(using: &random) ? nil : k * periodMs + 3_000))
                say(.recover(term))
            case 1:
                say(.billingIssue(graceExpiresMs: nil))
                say(.recover(nil))
                say(.renewal(term))
            default:
                say(.renewal(term))
            }
            if Int.random(in: 0..<3, using: &random) == 0 { say(Bool.random(using: &random) ? .cancel : .uncancel) }
            if Int.random(in: 0..<5, using: &random) == 0 { say(.productChange(newProductID: "p\(k)")) }
            if Int.random(in: 0..<4, using: &random) == 0 {
                let refunded = Bool.random(using: &random) ? "t\(k)" : "t\(Int64.random(in: 0...k, using: &random))"
                say(.refund(transactionID: refunded, fraction: Bool.random(using: &random) ? 1 : 0.5))
                if Bool.random(using: &random) { say(.refundReversed(transactionID: refunded)) }
            }
        }
        clockMs = max(clockMs, (periods + 1) * periodMs)
        switch Int.random(in: 0..<4, using: &random) {
        case 0: say(.expire)
        case 1: say(.billingIssue(graceExpiresMs: nil))
        case 2: say(.revoke)
        default: break  // still running
        }
        return SubscriptionLife(start: start, deliveries: deliveries)
    }
}

/// SplitMix64: a small seeded generator, so a failing seed replays exactly.
struct SubscriptionSplitMix: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
