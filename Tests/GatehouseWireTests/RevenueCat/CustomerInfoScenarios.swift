import GatehouseBase
import GatehouseCore
import GatehouseWire
import Testing

// States with much in them, made by hand (`RichWorld`) or by a seeded walk of random store
// events (`RandomRun`), and the checks every subscriber object of them must pass.

private typealias C = RCCatalogue

enum RichWorld {
    /// Two profiles holding, between them, every kind of purchase and state the body shows: a
    /// renewed and cancelled subscription, one in grace, a refunded one, one lost to a transfer,
    /// consumables, a refunded non-consumable, and grants named, custom, for life and revoked.
    static func make() throws -> (RCWorld, [ProfileID]) {
        var world = RCWorld()
        let first = try world.create("customer-1")
        let second = try world.create()
        try world.report(first, C.subscription("s1", expiresMs: C.startMs + 30 * C.dayMs, periodType: .intro))
        try world.notify("s1", .renewal(C.term("s1b", purchasedMs: C.startMs + 30 * C.dayMs, expiresMs: C.startMs + 60 * C.dayMs)))
        try world.notify("s1", .cancel)
        try world.report(first, C.subscription("p1", product: "premium_monthly", store: "test", expiresMs: C.startMs + C.dayMs))
        try world.notify("p1", store: "test", .billingIssue(graceExpiresMs: C.startMs + 5 * C.dayMs))
        try world.report(first, C.subscription("y1", product: "pro_yearly", expiresMs: C.startMs + 365 * C.dayMs))
        try world.notify("y1", .refund(transactionID: "y1", fraction: 0.5))
        try world.report(first, C.oneTime("c1", product: "coins"))
        try world.report(first, C.oneTime("l1"))
        try world.notify("l1", .refund(transactionID: "l1", fraction: 1))
        try world.grant(first, "extra", expiresMs: PromotionalDuration.threeDay.end(fromMs: world.nowMs))
        try world.grant(second, "extra", expiresMs: nil)
        try world.grant(second, "premium", expiresMs: world.nowMs + 12_345)
        try world.revoke(second, "premium")
        world.nowMs += 2 * C.dayMs
        try world.restore(second, [C.subscription("s1", expiresMs: C.startMs + 30 * C.dayMs)])
        return (world, [first, second])
    }

    /// Calls `visit` with every date member (`…_date`, `…_at`, `first_seen`, `last_seen`) at any
    /// depth.
    static func forEachDate(in value: JSONValue, _ visit: (String, JSONValue) throws -> Void) throws {
        switch value {
        case .object(let object):
            for member in object.members {
                let key = member.key
                if key.hasSuffix("_date") || key.hasSuffix("_at") || key == "first_seen" || key == "last_seen" {
                    try visit(key, member.value)
                } else {
                    try forEachDate(in: member.value, visit)
                }
            }
        case .array(let elements):
            for element in elements { try forEachDate(in: element, visit) }
        default:
            break
        }
    }

    /// Both SDKs decode the body and keep every entitlement; each names a purchase of the body;
    /// the SDKs' reading of each `expires_date` against `request_date` says active exactly when
    /// the holdings do, and so does each purchase's.
    static func checkEntitlements(_ world: RCWorld, _ id: ProfileID) throws {
        let body = world.body(id)
        let ios = try IOSDecoders.decode(IOSCustomerInfo.self, JSONWriter.serialize(.object(body)))
        ios.checkNothingIsDropped()
        let keptOnAndroid = try AndroidDecoders.customerInfo(body)
        let holdings = world.holdings(id)
        let subscriber = try body.object("subscriber")
        let entitlements = try subscriber.object("entitlements")
        let subscriptions = try subscriber.object("subscriptions")
        let nonSubscriptions = try subscriber.object("non_subscriptions")
        #expect(Set(entitlements.keys) == Set(holdings.entitlements.map(\.entitlementID)))
        #expect(keptOnAndroid == Set(holdings.entitlements.map(\.entitlementID)))
        func activeToTheSDK(_ expiresMs: Int64?) -> Bool { expiresMs.map { $0 > world.nowMs } ?? true }
        for view in holdings.entitlements {
            let entitlement = try entitlements.object(view.entitlementID)
            let product = try #require(entitlement["product_identifier"]?.stringValue)
            #expect(subscriptions[product] != nil || nonSubscriptions[product] != nil, "\(view.entitlementID) → \(product)")
            #expect(activeToTheSDK(try entitlement.dateMs("expires_date")) == view.isActive, "\(view.entitlementID)")
        }
        let grants = CustomerInfoPurchases(state: world.state, profileID: id, nowMs: world.nowMs).grants
        for member in subscriptions.members {
            let entry = try subscriptions.object(member.key)
            let live: Bool
            if let grant = grants.first(where: { PromotionalDuration.productIdentifier(of: $0) == member.key }) {
                live = grant.isLive(nowMs: world.nowMs)
            } else {
                live = holdings.subscriptions.contains { $0.productID == member.key && $0.isEntitling(nowMs: world.nowMs) }
            }
            #expect(activeToTheSDK(try entry.dateMs("expires_date")) == live, "subscriptions.\(member.key)")
        }
    }
}

/// Two profiles buying, being refunded, renewing, lapsing, restoring each other's purchases and
/// being granted entitlements, at random; a step a rule refuses changes nothing.
struct RandomRun {
    private(set) var world = RCWorld()
    private(set) var profiles: [ProfileID] = []
    private var generator: RandomSourceGenerator
    private var transactions: [StoreTransaction] = []
    private var made = 0

    init(seed: UInt64) {
        generator = RandomSourceGenerator(SeededRandomSource(seed: seed))
        profiles = [try! world.create(), try! world.create("customer-\(seed)")]
    }

    mutating func step() throws {
        let profile = profiles[Int.random(in: 0..<profiles.count, using: &generator)]
        do {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0, 1: try buy(profile)
            case 2, 3, 4: try notifyAtRandom()
            case 5: try grantAtRandom(profile)
            case 6: try world.revoke(profile, ["pro", "premium", "extra"].randomElement(using: &generator)!)
            case 7: if let transaction = transactions.randomElement(using: &generator) { try world.restore(profile, [transaction]) }
            default: world.advance(to: world.nowMs + Int64.random(in: 0...(12 * C.dayMs), using: &generator))
            }
        } catch is GatehouseError {
            // A refused step (an unknown purchase, a stale event) is part of the walk.
        }
    }

    private mutating func buy(_ profile: ProfileID) throws {
        made += 1
        let store = ["app_store", "test", "google_play"].randomElement(using: &generator)!
        if Bool.random(using: &generator) {
            let product = ["lifetime", "coins"].randomElement(using: &generator)!
            let transaction = C.oneTime("o\(made)", product: product, store: store, purchasedMs: world.nowMs)
            transactions.append(transaction)
            try world.report(profile, transaction)
            return
        }
        let transaction = C.subscription(
            "s\(made)", product: ["pro_monthly", "pro_yearly", "premium_monthly"].randomElement(using: &generator)!, store: store,
            purchasedMs: world.nowMs, expiresMs: world.nowMs + Int64.random(in: 1...(40 * C.dayMs), using: &generator),
            periodType: SubscriptionPeriodType.allCases.randomElement(using: &generator)!,
            environment: StoreEnvironment.allCases.randomElement(using: &generator)!, familyShared: Bool.random(using: &generator))
        transactions.append(transaction)
        try world.report(profile, transaction)
    }

    private mutating func notifyAtRandom() throws {
        guard let transaction = transactions.randomElement(using: &generator) else { return }
        let original = transaction.kind == .subscription ? transaction.originalTransactionID : transaction.transactionID
        let current = world.state.purchases.subscription(PurchaseKey(store: transaction.store, id: original))?.subscription
        let termID = current?.currentTerm?.transactionID ?? original
        made += 1
        let renewalEnd = (current?.expiresMs ?? world.nowMs) + Int64.random(in: 1...(30 * C.dayMs), using: &generator)
        let events: [SubscriptionEvent] = [
            .cancel, .uncancel, .expire, .revoke, .recover(nil),
            .billingIssue(graceExpiresMs: Bool.random(using: &generator) ? nil : world.nowMs + 3 * C.dayMs),
            .refund(transactionID: termID, fraction: [0.25, 1].randomElement(using: &generator)!),
            .refundReversed(transactionID: termID),
            .renewal(C.term("r\(made)", purchasedMs: world.nowMs, expiresMs: renewalEnd)),
        ]
        let event = transaction.kind == .subscription
            ? events.randomElement(using: &generator)! : [events[3], events[6], events[7]].randomElement(using: &generator)!
        try world.notify(original, store: transaction.store, event)
    }

    private mutating func grantAtRandom(_ profile: ProfileID) throws {
        let entitlement = ["pro", "premium", "extra"].randomElement(using: &generator)!
        let expiresMs: Int64? =
            if Bool.random(using: &generator) {
                PromotionalDuration.allCases.randomElement(using: &generator)!.end(fromMs: world.nowMs)
            } else {
                world.nowMs + Int64.random(in: 1...(20 * C.dayMs), using: &generator)
            }
        try world.grant(profile, entitlement, expiresMs: expiresMs)
    }
}
