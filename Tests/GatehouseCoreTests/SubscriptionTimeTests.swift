@testable import GatehouseCore
import Testing

// DESIGN.md: "when `expires_ms` passes for an `active` or `billing_retry` subscription, or
// `grace_expires_ms` for one in `grace`, with no renewal, the server itself marks it `expired`
// and emits `EXPIRATION`". The clock is injected as `nowMs`.

@Suite struct SubscriptionTimeTests {
    @Test func activeExpiresWhenItsTermEnds() {
        let active = SubscriptionFixture.purchased()
        #expect(active.nextDeadlineMs == 10_000)
        #expect(active.expireIfDue(nowMs: 9_999) == nil)
        #expect(active.isEntitling(nowMs: 9_999))
        #expect(active.isEntitling(nowMs: 10_000) == false)
        let transition = active.expireIfDue(nowMs: 10_000)
        #expect(transition?.subscription.status == .expired)
        #expect(transition?.eventTypes == [.expiration])
        #expect(transition?.subscription.nextDeadlineMs == nil)
        #expect(transition?.subscription.expireIfDue(nowMs: 50_000) == nil)
    }

    @Test func graceExpiresAtItsOwnDeadlineNotTheTerms() {
        let grace = SubscriptionFixture.purchased().applying(.billingIssue(graceExpiresMs: nil), atMs: 10_000, gracePeriodMs: 3_000)
        #expect(grace.graceExpiresMs == 13_000)
        #expect(grace.nextDeadlineMs == 13_000)
        #expect(grace.isEntitling(nowMs: 12_999))
        #expect(grace.expireIfDue(nowMs: 12_999) == nil)
        let transition = grace.expireIfDue(nowMs: 13_000)
        #expect(transition?.subscription.status == .expired)
        #expect(transition?.subscription.graceExpiresMs == nil)
        #expect(transition?.eventTypes == [.expiration])
        #expect(transition?.subscription.isEntitling(nowMs: 13_000) == false)
    }

    @Test func billingRetryHasNoAccessAndExpiresWithItsTerm() {
        let retry = SubscriptionFixture.purchased().applying(.billingIssue(graceExpiresMs: nil), atMs: 9_000, gracePeriodMs: 0)
        #expect(retry.status == .billingRetry)
        #expect(retry.isEntitling(nowMs: 9_500) == false)
        #expect(retry.nextDeadlineMs == 10_000)
        #expect(retry.expireIfDue(nowMs: 10_000)?.subscription.status == .expired)
    }

    @Test(arguments: [SubscriptionStatus.expired, .refunded, .revoked])
    func statusesWithoutAccessHaveNoDeadline(_ status: SubscriptionStatus) {
        let subscription = SubscriptionFixture.subscription(status)
        #expect(subscription.nextDeadlineMs == nil)
        #expect(subscription.expireIfDue(nowMs: .max) == nil)
        #expect(subscription.isEntitling(nowMs: 3_000) == false)
    }

    @Test func aRenewalMovesTheDeadline() {
        let renewed = SubscriptionFixture.purchased().applying(.renewal(SubscriptionFixture.nextTerm), atMs: 10_000)
        #expect(renewed.nextDeadlineMs == 20_000)
        #expect(renewed.expireIfDue(nowMs: 15_000) == nil)
    }

    @Test func aRenewalDatedBeforeATimedExpiryStillRevives() {
        // The server expired it by its own clock; the store's renewal was only late.
        let expired = SubscriptionFixture.purchased().expireIfDue(nowMs: 10_500)!.subscription
        let transition = expired.apply(.renewal(SubscriptionFixture.nextTerm), atMs: 10_000, gracePeriodMs: 0)
        #expect(transition.subscription.status == .active)
        #expect(transition.eventTypes == [.renewal])
        #expect(transition.subscription.isEntitling(nowMs: 11_000))
    }

    @Test func whatFellDueWhileDownExpiresOnceAtStartUp() {
        let grace = SubscriptionFixture.subscription(.grace)
        let transition = grace.expireIfDue(nowMs: 1_000_000)
        #expect(transition?.eventTypes == [.expiration])
        #expect(transition?.subscription.expireIfDue(nowMs: 1_000_000) == nil)
    }

    @Test func cancellingKeepsAccessUntilTheTermEnds() {
        let cancelled = SubscriptionFixture.purchased().applying(.cancel, atMs: 2_000)
        #expect(cancelled.isEntitling(nowMs: 9_999))
        #expect(cancelled.nextDeadlineMs == 10_000)
        #expect(cancelled.expireIfDue(nowMs: 10_000)?.subscription.status == .expired)
    }
}
