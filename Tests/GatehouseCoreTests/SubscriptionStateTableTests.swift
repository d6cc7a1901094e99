@testable import GatehouseCore
import Testing

// DESIGN.md, "Subscription life and entitlements", as a table: every store event applied to a
// subscription in every status. The fixtures are built by applying events, never by hand.

// MARK: Fixtures

enum SubscriptionFixture {
    static let gracePeriodMs: Int64 = 5_000
    static let firstTerm = SubscriptionTerm(transactionID: "t1", purchasedMs: 1_000, expiresMs: 10_000, price: 9.99)
    static let nextTerm = SubscriptionTerm(transactionID: "t2", purchasedMs: 10_000, expiresMs: 20_000, price: 9.99)

    /// Active until 10 000, bought (and dated by the store) at 1 000.
    static func purchased(periodType: SubscriptionPeriodType = .normal) -> Subscription {
        Subscription.purchased(
            store: "test", originalTransactionID: "t1", productID: "pro_monthly", term: firstTerm,
            periodType: periodType, environment: .sandbox, atMs: 1_000
        ).subscription
    }

    /// A subscription in `status`, reached by store events dated 2 000 (auto-renew turned off
    /// at 1 500 when `renewing` is false).
    static func subscription(_ status: SubscriptionStatus, renewing: Bool = true) -> Subscription {
        var subscription = purchased()
        if !renewing { subscription = subscription.applying(.cancel, atMs: 1_500) }
        switch status {
        case .active: break
        case .grace: subscription = subscription.applying(.billingIssue(graceExpiresMs: 15_000), atMs: 2_000)
        case .billingRetry: subscription = subscription.applying(.billingIssue(graceExpiresMs: nil), atMs: 2_000, gracePeriodMs: 0)
        case .expired: subscription = subscription.applying(.expire, atMs: 2_000)
        case .refunded: subscription = subscription.applying(.refund(transactionID: "t1", fraction: 1), atMs: 2_000)
        case .revoked: subscription = subscription.applying(.revoke, atMs: 2_000)
        }
        precondition(subscription.status == status)
        return subscription
    }
}

extension Subscription {
    func applying(_ event: SubscriptionEvent, atMs: Int64, gracePeriodMs: Int64 = SubscriptionFixture.gracePeriodMs) -> Subscription {
        apply(event, atMs: atMs, gracePeriodMs: gracePeriodMs).subscription
    }
}

// MARK: The table

struct SubscriptionTableRow: CustomTestStringConvertible, Sendable {
    let from: SubscriptionStatus
    let renewing: Bool
    let event: SubscriptionEvent
    let to: SubscriptionStatus
    let willRenew: Bool
    let feed: [EventType]

    var testDescription: String { "\(from.rawValue) + \(event) → \(to.rawValue)" }
}

private func rows(
    _ event: SubscriptionEvent, renewing: Bool = true, willRenew: Bool = true,
    _ cells: [(SubscriptionStatus, SubscriptionStatus, [EventType])]
) -> [SubscriptionTableRow] {
    cells.map { SubscriptionTableRow(from: $0.0, renewing: renewing, event: event, to: $0.1, willRenew: willRenew, feed: $0.2) }
}

private let t2 = SubscriptionFixture.nextTerm

/// Every event dated 3 000, after the fixture's own events; grace period 5 000.
let subscriptionStateTable: [SubscriptionTableRow] =
    rows(.purchase(t2, periodType: .normal), [
        (.active, .active, [.initialPurchase]),
        (.grace, .active, [.initialPurchase]),
        (.billingRetry, .active, [.initialPurchase]),
        (.expired, .active, [.initialPurchase]),
        (.refunded, .active, [.initialPurchase]),
        (.revoked, .revoked, []),
    ])
    + rows(.renewal(t2), [
        (.active, .active, [.renewal]),
        (.grace, .active, [.renewal]),
        (.billingRetry, .active, [.renewal]),
        (.expired, .active, [.renewal]),
        (.refunded, .active, [.renewal]),
        (.revoked, .revoked, []),
    ])
    + rows(.recover(t2), [
        (.active, .active, [.renewal]),
        (.grace, .active, [.renewal]),
        (.billingRetry, .active, [.renewal]),
        (.expired, .active, [.renewal]),
        (.refunded, .active, [.renewal]),
        (.revoked, .revoked, []),
    ])
    + rows(.recover(nil), [
        (.active, .active, []),
        (.grace, .active, [.renewal]),
        (.billingRetry, .active, [.renewal]),
        (.expired, .expired, []),
        (.refunded, .refunded, []),
        (.revoked, .revoked, []),
    ])
    + rows(.cancel, willRenew: false, [
        (.active, .active, [.cancellation]),
        (.grace, .grace, [.cancellation]),
        (.billingRetry, .billingRetry, [.cancellation]),
        (.expired, .expired, [.cancellation]),
        (.refunded, .refunded, [.cancellation]),
        (.revoked, .revoked, [.cancellation]),
    ])
    + rows(.uncancel, renewing: false, willRenew: true, [
        (.active, .active, [.uncancellation]),
        (.grace, .grace, [.uncancellation]),
        (.billingRetry, .billingRetry, [.uncancellation]),
        (.expired, .expired, [.uncancellation]),
        (.refunded, .refunded, [.uncancellation]),
        (.revoked, .revoked, [.uncancellation]),
    ])
    + rows(.billingIssue(graceExpiresMs: nil), [
        (.active, .grace, [.billingIssue]),
        (.grace, .grace, []),  // already in grace until 15 000, which expiry + grace also gives
        (.billingRetry, .grace, [.billingIssue]),
        (.expired, .expired, []),
        (.refunded, .refunded, []),
        (.revoked, .revoked, []),
    ])
    + rows(.expire, [
        (.active, .expired, [.expiration]),
        (.grace, .expired, [.expiration]),
        (.billingRetry, .expired, [.expiration]),
        (.expired, .expired, []),
        (.refunded, .refunded, []),
        (.revoked, .revoked, []),
    ])
    + rows(.refund(transactionID: "t1", fraction: 1), [
        (.active, .refunded, [.refund]),
        (.grace, .refunded, [.refund]),
        (.billingRetry, .refunded, [.refund]),
        (.expired, .refunded, [.refund]),
        (.refunded, .refunded, []),
        (.revoked, .revoked, [.refund]),
    ])
    + rows(.refundReversed(transactionID: "t1"), [
        (.active, .active, []),
        (.grace, .grace, []),
        (.billingRetry, .billingRetry, []),
        (.expired, .expired, []),
        (.refunded, .active, [.refundReversed]),
        (.revoked, .revoked, []),
    ])
    + rows(.revoke, [
        (.active, .revoked, [.expiration]),
        (.grace, .revoked, [.expiration]),
        (.billingRetry, .revoked, [.expiration]),
        (.expired, .revoked, [.expiration]),
        (.refunded, .revoked, [.expiration]),
        (.revoked, .revoked, []),
    ])
    + rows(.productChange(newProductID: "pro_yearly"), [
        (.active, .active, [.productChange]),
        (.grace, .grace, [.productChange]),
        (.billingRetry, .billingRetry, [.productChange]),
        (.expired, .expired, [.productChange]),
        (.refunded, .refunded, [.productChange]),
        (.revoked, .revoked, [.productChange]),
    ])

@Suite struct SubscriptionStateTableTests {
    @Test func tableCoversEveryStatusForEveryEvent() {
        #expect(subscriptionStateTable.count == 12 * SubscriptionStatus.allCases.count)
        for status in SubscriptionStatus.allCases {
            #expect(subscriptionStateTable.filter { $0.from == status }.count == 12)
        }
    }

    @Test(arguments: subscriptionStateTable)
    func eventFromStatus(_ row: SubscriptionTableRow) {
        let before = SubscriptionFixture.subscription(row.from, renewing: row.renewing)
        let transition = before.apply(row.event, atMs: 3_000, gracePeriodMs: SubscriptionFixture.gracePeriodMs)
        #expect(transition.subscription.status == row.to)
        #expect(transition.subscription.willRenew == row.willRenew)
        #expect(transition.eventTypes == row.feed)
    }

    @Test func statusRawValuesAreTheWireStrings() {
        #expect(SubscriptionStatus.allCases.map(\.rawValue) == ["active", "grace", "billing_retry", "expired", "refunded", "revoked"])
        #expect(SubscriptionPeriodType.allCases.map(\.rawValue) == ["normal", "trial", "intro"])
        #expect(StoreEnvironment.allCases.map(\.rawValue) == ["sandbox", "production"])
    }

    @Test func firstPurchaseIsActiveUntilItsTermEnds() {
        let transition = Subscription.purchased(
            store: "test", originalTransactionID: "t1", productID: "pro_monthly", term: SubscriptionFixture.firstTerm,
            periodType: .trial, environment: .production, atMs: 1_000)
        let subscription = transition.subscription
        #expect(transition.eventTypes == [.initialPurchase])
        #expect(subscription.status == .active)
        #expect(subscription.expiresMs == 10_000)
        #expect(subscription.willRenew)
        #expect(subscription.periodType == .trial)
        #expect(subscription.terms == [SubscriptionFixture.firstTerm])
        #expect(subscription.lastEventMs == 1_000)
    }

    @Test func renewalStartsANewTermAndClearsTheBillingIssue() {
        let renewed = SubscriptionFixture.subscription(.grace).applying(.renewal(t2), atMs: 10_000)
        #expect(renewed.status == .active)
        #expect(renewed.graceExpiresMs == nil)
        #expect(renewed.expiresMs == 20_000)
        #expect(renewed.terms.map(\.transactionID) == ["t1", "t2"])
        #expect(renewed.currentTerm == t2)
        #expect(renewed.periodType == .normal)
    }

    @Test func billingIssueGraceComesFromTheStoreThenTheProjectElseBillingRetry() {
        let active = SubscriptionFixture.purchased()
        let named = active.applying(.billingIssue(graceExpiresMs: 12_345), atMs: 2_000)
        #expect(named.status == .grace && named.graceExpiresMs == 12_345)
        let derived = active.applying(.billingIssue(graceExpiresMs: nil), atMs: 2_000, gracePeriodMs: 7_000)
        #expect(derived.status == .grace && derived.graceExpiresMs == 17_000)
        let retry = active.applying(.billingIssue(graceExpiresMs: nil), atMs: 2_000, gracePeriodMs: 0)
        #expect(retry.status == .billingRetry && retry.graceExpiresMs == nil)
    }

    @Test func refundOfAnOlderTermKeepsTheStatusButIsStillReported() {
        let renewed = SubscriptionFixture.purchased().applying(.renewal(t2), atMs: 10_000)
        let transition = renewed.apply(.refund(transactionID: "t1", fraction: 0.5), atMs: 11_000, gracePeriodMs: 0)
        #expect(transition.eventTypes == [.refund])
        #expect(transition.subscription.status == .active)
        #expect(transition.subscription.term(id: "t1")?.refundedFraction == 0.5)
        #expect(transition.subscription.term(id: "t2")?.refundedFraction == 0)
    }

    @Test func refundReversedReturnsToTheStatusBeforeTheRefund() {
        let grace = SubscriptionFixture.subscription(.grace)
        let refunded = grace.applying(.refund(transactionID: "t1", fraction: 1), atMs: 3_000)
        #expect(refunded.status == .refunded)
        #expect(refunded.statusBeforeRefund == .grace)
        let reversed = refunded.applying(.refundReversed(transactionID: "t1"), atMs: 4_000)
        #expect(reversed.status == .grace)
        #expect(reversed.graceExpiresMs == 15_000)
        #expect(reversed.statusBeforeRefund == nil)
    }

    @Test func revokeIsAnExpirationWithReasonRevoked() {
        let transition = SubscriptionFixture.purchased().apply(.revoke, atMs: 3_000, gracePeriodMs: 0)
        #expect(transition.effects == [SubscriptionEffect(.expiration, details: [EventDetail("reason", .string("revoked"))])])
        #expect(transition.subscription.isEntitling(nowMs: 3_000) == false)
    }

    @Test func termsKnowWhetherTheyWerePaid() {
        #expect(SubscriptionTerm(transactionID: "a", purchasedMs: 0, expiresMs: 1, price: 0).isPaid == false)
        #expect(SubscriptionTerm(transactionID: "a", purchasedMs: 0, expiresMs: 1, price: 0.99).isPaid)
    }
}
