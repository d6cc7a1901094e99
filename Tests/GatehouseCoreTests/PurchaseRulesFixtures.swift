import GatehouseBase
@testable import GatehouseCore
import Testing

// Fixtures for the purchase rules of DESIGN.md ("Who owns a purchase", "Subscription life and
// entitlements") as ProjectState applies them: a project with a small catalogue, a world that
// decides and applies like the project's actor, and store transactions and notifications.

typealias PurchaseDecision = ProjectState.PurchaseDecision

/// The catalogue: `pro` comes from two subscriptions, a non-consumable or a grant; `premium` from
/// its own subscription; `extra` only from grants; a consumable grants nothing.
enum PurchaseCatalogue {
    static let store = "test"

    static func config(restore: RestoreMode = .transfer, login: LoginMode = .alias, gracePeriodMs: Int64 = 0) -> ProjectConfig {
        ProjectConfig(
            entitlements: [EntitlementDefinition(id: "pro"), EntitlementDefinition(id: "premium"), EntitlementDefinition(id: "extra")],
            products: [
                ProductDefinition(id: "pro_monthly", type: .subscription, entitlements: ["pro"]),
                ProductDefinition(id: "pro_yearly", type: .subscription, entitlements: ["pro"]),
                ProductDefinition(id: "premium_monthly", type: .subscription, entitlements: ["premium"]),
                ProductDefinition(id: "lifetime", type: .nonConsumable, entitlements: ["pro"]),
                ProductDefinition(id: "coins", type: .consumable),
            ],
            login: login, restore: restore, gracePeriodMs: gracePeriodMs, stores: StoreSettings(test: true))
    }

    /// A subscription transaction (its first term when `id` is the original id).
    static func subscription(
        _ original: String, id: String? = nil, product: String = "pro_monthly", purchasedMs: Int64 = 1_000,
        expiresMs: Int64 = 100_000, token: AppAccountToken? = nil, periodType: SubscriptionPeriodType = .normal
    ) -> StoreTransaction {
        StoreTransaction(
            store: store, kind: .subscription, transactionID: id ?? original, originalTransactionID: original,
            productID: product, purchasedMs: purchasedMs, expiresMs: expiresMs, token: token, price: 9.99, currency: "USD",
            periodType: periodType, environment: .sandbox)
    }

    /// A one-time purchase (a non-consumable unless `product` says otherwise).
    static func oneTime(_ id: String, product: String = "lifetime", purchasedMs: Int64 = 1_000, token: AppAccountToken? = nil)
        -> StoreTransaction
    {
        StoreTransaction(
            store: store, kind: .oneTime, transactionID: id, originalTransactionID: id, productID: product,
            purchasedMs: purchasedMs, expiresMs: 0, token: token, price: 29.99, currency: "USD", periodType: .normal,
            environment: .production)
    }

    static func notification(_ id: String, _ original: String, atMs: Int64, _ event: SubscriptionEvent) -> StoreNotification {
        StoreNotification(store: store, notificationID: id, originalTransactionID: original, atMs: atMs, event: .change(event))
    }

    static func purchaseNotification(_ id: String, _ transaction: StoreTransaction, atMs: Int64? = nil) -> StoreNotification {
        StoreNotification(store: store, notificationID: id, originalTransactionID: transaction.originalTransactionID,
                          atMs: atMs ?? transaction.purchasedMs, event: .purchase(transaction))
    }

    static func term(_ id: String, purchasedMs: Int64, expiresMs: Int64, price: Double = 9.99) -> SubscriptionTerm {
        SubscriptionTerm(transactionID: id, purchasedMs: purchasedMs, expiresMs: expiresMs, price: price)
    }

    static func key(_ id: String) -> PurchaseKey { PurchaseKey(store: store, id: id) }
}

/// A project as its actor holds it: a rule decides on the current state at `nowMs`, a non-empty
/// batch is applied and kept (for replay). The clock moves only when a test moves it.
struct PurchaseWorld {
    private(set) var state: ProjectState
    /// The state right after the configuration: replaying `batches` on it rebuilds `state`.
    let start: ProjectState
    let random: SeededRandomSource
    var nowMs: Int64 = 1_000
    private(set) var batches: [ProjectState.ChangeBatch] = []

    init(restore: RestoreMode = .transfer, login: LoginMode = .alias, gracePeriodMs: Int64 = 0, seed: UInt64 = 11,
         retention: Retention = .standard)
    {
        var state = IdentityWorld.emptyState
        state.retention = retention
        state.apply(ProjectState.ChangeBatch(
            [.configReplaced(PurchaseCatalogue.config(restore: restore, login: login, gracePeriodMs: gracePeriodMs))], atMs: 0))
        self.state = state
        self.start = state
        random = SeededRandomSource(seed: seed)
    }

    mutating func apply(_ batch: ProjectState.ChangeBatch) {
        guard !batch.changes.isEmpty else { return }
        state.apply(batch)
        batches.append(batch)
    }

    @discardableResult
    mutating func commit(_ decision: PurchaseDecision) -> PurchaseDecision {
        #expect(decision.batch.atMs == nowMs)
        apply(decision.batch)
        return decision
    }

    @discardableResult
    mutating func commit(_ decision: ProfileDecision) -> ProfileDecision {
        apply(decision.batch)
        return decision
    }

    // MARK: Profiles

    /// A new profile, optionally identified and with a given token.
    mutating func create(_ customerUserID: String? = nil, token: AppAccountToken? = nil) throws(GatehouseError) -> ProfileID {
        commit(try state.createProfile(customerUserID: customerUserID, token: token, nowMs: nowMs, random: random)).profileID
    }

    @discardableResult
    mutating func identify(_ id: ProfileID, _ customerUserID: String, token: AppAccountToken? = nil) throws(GatehouseError)
        -> ProfileDecision
    {
        commit(try state.identify(profile: id, customerUserID: customerUserID, token: token, nowMs: nowMs, random: random))
    }

    mutating func delete(_ id: ProfileID) throws(GatehouseError) {
        commit(try state.deleteProfile(id, nowMs: nowMs))
    }

    func profile(_ id: ProfileID) -> Profile {
        guard let profile = state.profiles.profile(id) else { preconditionFailure("no profile \(id)") }
        return profile
    }

    func token(of id: ProfileID) -> AppAccountToken { profile(id).token }

    // MARK: Purchases

    @discardableResult
    mutating func report(_ id: ProfileID, _ transaction: StoreTransaction) throws(GatehouseError) -> PurchaseDecision {
        commit(try state.reportPurchase(profile: id, transaction: transaction, nowMs: nowMs))
    }

    @discardableResult
    mutating func restore(_ id: ProfileID, _ transactions: [StoreTransaction]) throws(GatehouseError) -> PurchaseDecision {
        commit(try state.restorePurchases(profile: id, transactions: transactions, nowMs: nowMs))
    }

    @discardableResult
    mutating func notify(_ notification: StoreNotification) throws(GatehouseError) -> PurchaseDecision {
        commit(try state.notify(notification, nowMs: nowMs))
    }

    @discardableResult
    mutating func grant(_ id: ProfileID, _ entitlement: String, expiresMs: Int64?) throws(GatehouseError) -> PurchaseDecision {
        commit(try state.grantEntitlement(profile: id, entitlement: entitlement, expiresMs: expiresMs, nowMs: nowMs))
    }

    @discardableResult
    mutating func revoke(_ id: ProfileID, _ entitlement: String) throws(GatehouseError) -> PurchaseDecision {
        commit(try state.revokeEntitlement(profile: id, entitlement: entitlement, nowMs: nowMs))
    }

    /// The timer at `atMs`: what is due expires, and the clock moves there.
    @discardableResult
    mutating func expire(atMs: Int64) -> ProjectState.ChangeBatch {
        nowMs = atMs
        let batch = state.expireDue(nowMs: atMs)
        apply(batch)
        return batch
    }

    // MARK: Reading

    func owner(_ id: String) -> ProfileID? { state.owner(of: PurchaseCatalogue.key(id)) }

    func subscription(_ id: String) -> HeldSubscription? { state.purchases.subscription(PurchaseCatalogue.key(id)) }

    func oneTime(_ id: String) -> HeldPurchase? { state.purchases.oneTimePurchase(PurchaseCatalogue.key(id)) }

    func holdings(_ id: ProfileID) -> ProjectState.Holdings { state.holdings(of: id, nowMs: nowMs) }

    func entitlement(_ entitlement: String, of id: ProfileID) -> EntitlementView? {
        holdings(id).entitlements.first { $0.entitlementID == entitlement }
    }

    var feed: [Event] { state.events.events }

    /// The events the last `count` feed entries hold, oldest first.
    func lastEvents(_ count: Int) -> [Event] { Array(feed.suffix(count)) }

    func events(_ type: EventType) -> [Event] { feed.filter { $0.type == type } }
}

extension Event {
    func detail(_ name: String) -> EventDetail.Value? { details.first { $0.name == name }?.value }
}

extension ProjectState.ChangeBatch {
    /// The feed events the batch records.
    var recordedEvents: [(EventType, ProfileID?)] {
        changes.compactMap { change in
            if case .eventRecorded(let type, let id, _) = change { return (type, id) }
            return nil
        }
    }

    var recordedTypes: [EventType] { recordedEvents.map(\.0) }
}
