import GatehouseBase
@testable import GatehouseCore
import Testing

// PROTOCOL.md, `store.notify`, and DESIGN.md's table of what the store says: every event reaches
// the purchase it names and records its event for the owner (or for nobody while unowned); a
// repeated notification id is applied once; an event for an unknown purchase is `not_found`; a
// one-time purchase takes only refund, refund_reversed and revoke.

private typealias C = PurchaseCatalogue

/// One row of the table: events that set the subscription up, the event under test, and what
/// the feed records for it.
struct NotificationRow: CustomTestStringConvertible, Sendable {
    let name: String
    let setUp: [SubscriptionEvent]
    let event: SubscriptionEvent
    let type: EventType
    let status: SubscriptionStatus
    var reason: String?

    var testDescription: String { name }

    static let renewal = C.term("s1b", purchasedMs: 100_000, expiresMs: 200_000)

    static let all: [NotificationRow] = [
        NotificationRow(name: "renewal", setUp: [], event: .renewal(renewal), type: .renewal, status: .active),
        NotificationRow(name: "resubscribe", setUp: [.expire], event: .purchase(renewal, periodType: .normal),
                        type: .initialPurchase, status: .active),
        NotificationRow(name: "cancel", setUp: [], event: .cancel, type: .cancellation, status: .active),
        NotificationRow(name: "uncancel", setUp: [.cancel], event: .uncancel, type: .uncancellation, status: .active),
        NotificationRow(name: "billing issue", setUp: [], event: .billingIssue(graceExpiresMs: 150_000),
                        type: .billingIssue, status: .grace),
        NotificationRow(name: "recover with a term", setUp: [.billingIssue(graceExpiresMs: nil)], event: .recover(renewal),
                        type: .renewal, status: .active),
        NotificationRow(name: "recover without a term", setUp: [.billingIssue(graceExpiresMs: nil)], event: .recover(nil),
                        type: .renewal, status: .active),
        NotificationRow(name: "expire", setUp: [], event: .expire, type: .expiration, status: .expired),
        NotificationRow(name: "refund", setUp: [], event: .refund(transactionID: "s1", fraction: 0.5), type: .refund,
                        status: .refunded),
        NotificationRow(name: "refund reversed", setUp: [.refund(transactionID: "s1", fraction: 1)],
                        event: .refundReversed(transactionID: "s1"), type: .refundReversed, status: .active),
        NotificationRow(name: "revoke", setUp: [], event: .revoke, type: .expiration, status: .revoked, reason: "revoked"),
        NotificationRow(name: "product change", setUp: [], event: .productChange(newProductID: "pro_yearly"),
                        type: .productChange, status: .active),
    ]
}

@Suite("Every store event reaches its subscription and records its event for the owner")
struct SubscriptionNotifications {
    /// A subscription s1 (active until 100 000) owned by a profile, or unowned under a token;
    /// `row.setUp` applied as notifications dated 2 000, 2 001, ….
    static func world(_ row: NotificationRow, owned: Bool) throws -> (PurchaseWorld, ProfileID?) {
        var world = PurchaseWorld(gracePeriodMs: 10_000)
        let owner = try world.create()
        let token = owned ? world.token(of: owner) : fixedToken(1)
        try world.notify(C.purchaseNotification("n0", C.subscription("s1", expiresMs: 100_000, token: token)))
        for (index, event) in row.setUp.enumerated() {
            try world.notify(C.notification("setup\(index)", "s1", atMs: 2_000 + Int64(index), event))
        }
        return (world, owned ? owner : nil)
    }

    @Test(arguments: NotificationRow.all, [true, false])
    func theEventReachesTheSubscriptionAndTheFeed(_ row: NotificationRow, owned: Bool) throws {
        var (world, owner) = try Self.world(row, owned: owned)
        let before = try #require(world.subscription("s1"))
        world.nowMs = 3_000
        let decision = try world.notify(C.notification("n1", "s1", atMs: 2_500, row.event))
        #expect(decision.applied)
        #expect(decision.profileID == owner)
        // The rule hands the event to the subscription's own state machine, dated by the store.
        let expected = before.subscription.apply(row.event, atMs: 2_500, gracePeriodMs: 10_000).subscription
        let after = try #require(world.subscription("s1"))
        #expect(after.subscription == expected)
        #expect(after.subscription.status == row.status)
        #expect(after.owner == owner)
        #expect(after.token == before.token)
        #expect(decision.batch.recordedTypes == [row.type])
        let event = try #require(world.feed.last)
        #expect(event.type == row.type)
        #expect(event.profileID == owner)
        #expect(event.atMs == 3_000)
        #expect(event.detail("original_transaction_id") == .string("s1"))
        #expect(event.detail("store") == .string("test"))
        #expect(event.detail("product_id") == .string(after.subscription.productID))
        #expect(event.detail("reason") == row.reason.map { .string($0) })
        if let owner { #expect(world.profile(owner).cursor == world.state.sequence) }
    }

    @Test(arguments: NotificationRow.all)
    func aRepeatedNotificationIDIsAppliedOnce(_ row: NotificationRow) throws {
        var (world, owner) = try Self.world(row, owned: true)
        try world.notify(C.notification("n1", "s1", atMs: 2_500, row.event))
        let before = world.state
        // The same id again, even with another body or date: answered, not applied.
        for repeatEvent in [row.event, .cancel, .revoke] {
            let decision = try world.state.notify(C.notification("n1", "s1", atMs: 9_000, repeatEvent), nowMs: world.nowMs)
            #expect(!decision.applied)
            #expect(decision.batch.changes.isEmpty)
            #expect(decision.profileID == owner)
        }
        #expect(world.state == before)
    }

    @Test func aRepeatedPurchaseNotificationIsAppliedOnce() throws {
        var world = PurchaseWorld()
        let purchase = C.purchaseNotification("n1", C.subscription("s1", token: fixedToken(1)))
        try world.notify(purchase)
        let before = world.state
        let again = try world.state.notify(purchase, nowMs: world.nowMs)
        #expect(!again.applied)
        #expect(again.batch.changes.isEmpty)
        #expect(again.profileID == nil)
        #expect(world.state == before)
        #expect(world.feed.count == 1)
    }

    @Test func aNotificationIDIsPerStore() throws {
        var world = PurchaseWorld()
        let owner = try world.create()
        try world.report(owner, C.subscription("s1"))
        try world.report(owner, C.subscription("s1", id: nil, product: "pro_monthly").with(store: "app_store"))
        try world.notify(C.notification("n1", "s1", atMs: 2_000, .cancel))
        var other = C.notification("n1", "s1", atMs: 2_000, .cancel)
        other.store = "app_store"
        let decision = try world.notify(other)
        #expect(decision.applied)
        #expect(world.state.purchases.subscription(PurchaseKey(store: "app_store", id: "s1"))?.subscription.willRenew == false)
    }

    @Test(arguments: NotificationRow.all.map(\.event))
    func anEventForAnUnknownPurchaseIsNotFoundAndCanComeAgain(_ event: SubscriptionEvent) throws {
        var world = PurchaseWorld()
        let before = world.state
        let early = C.notification("n1", "s1", atMs: 2_000, event)
        #expect(rejectionCode { () throws(GatehouseError) in try world.notify(early) } == .notFound)
        #expect(world.state == before)
        // The store sends it again once the purchase is known: it is applied then.
        try world.notify(C.purchaseNotification("n0", C.subscription("s1")))
        let decision = try world.notify(early)
        #expect(decision.applied)
    }
}

@Suite("A one-time purchase takes refund, refund_reversed and revoke, and refuses other events")
struct OneTimePurchaseNotifications {
    static func world() throws -> (PurchaseWorld, ProfileID) {
        var world = PurchaseWorld()
        let owner = try world.create()
        try world.report(owner, C.oneTime("p1"))
        return (world, owner)
    }

    @Test func aRefundEndsItsEntitlementAndAReversalRestoresIt() throws {
        var (world, owner) = try Self.world()
        #expect(world.entitlement("pro", of: owner)?.isActive == true)
        let refund = try world.notify(C.notification("n1", "p1", atMs: 2_000, .refund(transactionID: "p1", fraction: 1)))
        #expect(refund.profileID == owner)
        #expect(world.oneTime("p1")?.purchase.refunded == true)
        #expect(world.feed.last?.type == .refund)
        #expect(world.feed.last?.profileID == owner)
        #expect(world.feed.last?.detail("transaction_id") == .string("p1"))
        #expect(world.entitlement("pro", of: owner)?.isActive == false)
        #expect(world.profile(owner).cursor == world.state.sequence)
        try world.notify(C.notification("n2", "p1", atMs: 3_000, .refundReversed(transactionID: "p1")))
        #expect(world.oneTime("p1")?.purchase.refunded == false)
        #expect(world.feed.last?.type == .refundReversed)
        #expect(world.entitlement("pro", of: owner)?.isActive == true)
    }

    @Test func aRevokeIsAnExpirationWithReasonRevoked() throws {
        var (world, owner) = try Self.world()
        try world.notify(C.notification("n1", "p1", atMs: 2_000, .revoke))
        #expect(world.oneTime("p1")?.purchase.revoked == true)
        let event = try #require(world.feed.last)
        #expect(event.type == .expiration)
        #expect(event.detail("reason") == .string("revoked"))
        #expect(event.profileID == owner)
        #expect(world.entitlement("pro", of: owner)?.isActive == false)
    }

    @Test func anUnownedOneTimePurchaseRecordsItsRefundForNobody() throws {
        var world = PurchaseWorld()
        try world.notify(C.purchaseNotification("n0", C.oneTime("p1", token: fixedToken(1))))
        let decision = try world.notify(C.notification("n1", "p1", atMs: 2_000, .refund(transactionID: "p1", fraction: 1)))
        #expect(decision.profileID == nil)
        #expect(world.feed.last?.type == .refund)
        #expect(world.feed.last?.profileID == nil)
    }

    @Test func aSecondRefundUnderAnotherIDRecordsNothingNew() throws {
        var (world, _) = try Self.world()
        try world.notify(C.notification("n1", "p1", atMs: 2_000, .refund(transactionID: "p1", fraction: 1)))
        let feed = world.feed.count
        let decision = try world.notify(C.notification("n2", "p1", atMs: 3_000, .refund(transactionID: "p1", fraction: 1)))
        #expect(decision.applied)
        #expect(decision.batch.recordedTypes.isEmpty)
        #expect(world.feed.count == feed)
    }

    @Test(arguments: [
        SubscriptionEvent.renewal(C.term("p2", purchasedMs: 2_000, expiresMs: 3_000)), .cancel, .uncancel,
        .billingIssue(graceExpiresMs: nil), .recover(nil), .expire, .productChange(newProductID: "pro_monthly"),
        .purchase(C.term("p2", purchasedMs: 2_000, expiresMs: 3_000), periodType: .normal),
    ])
    func otherEventsAreBadRequestsAndChangeNothing(_ event: SubscriptionEvent) throws {
        var (world, _) = try Self.world()
        let before = world.state
        let notification = C.notification("n1", "p1", atMs: 2_000, event)
        #expect(rejectionCode { () throws(GatehouseError) in try world.notify(notification) } == .badRequest)
        #expect(world.state == before)
        // Refused, not applied: the id stays free.
        #expect(!world.state.purchases.hasSeen(notification: "n1", store: C.store))
    }
}

extension StoreTransaction {
    func with(store: String) -> StoreTransaction {
        var copy = self
        copy.store = store
        return copy
    }
}
