// The purchase rules of DESIGN.md, "Who owns a purchase" and "Subscription life and
// entitlements". Like the identity rules, each reads the state and decides a batch of changes
// (the purchase as the rule leaves it, with its owner, and the feed's events); the caller logs
// and applies it, so replay never re-runs a rule.

extension ProjectState {
    /// What a purchase rule decided, and what the answer reports.
    public struct PurchaseDecision: Sendable, Equatable {
        public var batch: ChangeBatch
        /// The profile the answer is about: the reporter, or a notification's owner (`nil`: none).
        public var profileID: ProfileID?
        /// `purchase.restore`: profiles that lost purchases to this one.
        public var transferredFrom: [ProfileID] = []
        /// `purchase.restore`: original transaction ids that stay with another profile.
        public var keptByOther: [String] = []
        /// `store.notify`: false for a notification id already applied.
        public var applied = true

        public init(batch: ChangeBatch, profileID: ProfileID?) {
            self.batch = batch
            self.profileID = profileID
        }
    }

    /// The purchases and entitlements of one profile, as its document shows them at `nowMs`.
    public struct Holdings: Sendable, Equatable {
        public var subscriptions: [Subscription]
        public var purchases: [OneTimePurchase]
        public var entitlements: [EntitlementView]
        /// Every currency of the config with its balance, in config order.
        public var balances: [CurrencyBalance]
    }

    /// The entitlements a profile's document shows at `nowMs` (what `sync` compares after each
    /// batch): only the entitlements, without the document's lists and balances.
    func entitlementViews(of id: ProfileID, nowMs: Int64) -> [EntitlementView] {
        let id = profiles.canonicalID(id) ?? id
        return entitlementViews(of: id, subscriptions: purchases.subscriptions(ownedBy: id),
                                oneTime: purchases.oneTimePurchases(ownedBy: id), nowMs: nowMs)
    }

    /// `id` may be an alias: the holdings are the canonical profile's.
    public func holdings(of id: ProfileID, nowMs: Int64) -> Holdings {
        let id = profiles.canonicalID(id) ?? id
        let subscriptions = purchases.subscriptions(ownedBy: id)
        let oneTime = purchases.oneTimePurchases(ownedBy: id)
        return Holdings(subscriptions: subscriptions, purchases: oneTime,
                        entitlements: entitlementViews(of: id, subscriptions: subscriptions, oneTime: oneTime, nowMs: nowMs),
                        balances: balances(of: id))
    }

    /// What the canonical profile `id` owns gives, and, inactive, what it lost to transfers
    /// while nothing it owns gives the same entitlement; ordered by entitlement.
    private func entitlementViews(of id: ProfileID, subscriptions: [Subscription], oneTime: [OneTimePurchase], nowMs: Int64)
        -> [EntitlementView]
    {
        var entitlements = Entitlements.compute(
            catalog: catalog, subscriptions: subscriptions, purchases: oneTime, grants: purchases.grants(of: id), nowMs: nowMs)
        let former = purchases.formerHoldings(of: id)
        if !former.subscriptions.isEmpty || !former.purchases.isEmpty {
            let lost = Entitlements.compute(catalog: catalog, subscriptions: former.subscriptions, purchases: former.purchases,
                                            grants: [], nowMs: nowMs)
            for (entitlementID, var view) in lost where entitlements[entitlementID] == nil {
                view.isActive = false
                entitlements[entitlementID] = view
            }
        }
        return entitlements.values.sorted { $0.entitlementID < $1.entitlementID }
    }

    // MARK: purchase.report and purchase.restore

    /// A profile reports a purchase: it becomes the owner unless the transaction's token names
    /// another profile (new purchases) or the restore setting keeps it with its owner
    /// (`owned_by_other`, and nothing changes).
    public func reportPurchase(profile id: ProfileID, transaction: StoreTransaction, nowMs: Int64) throws(GatehouseError)
        -> PurchaseDecision
    {
        let reporter = try resolveProfile(id).id
        var draft = PurchaseDraft(state: self, nowMs: nowMs)
        if try draft.take(transaction, reportedBy: reporter) == .keptByOther {
            throw GatehouseError(.ownedByOther, "the purchase belongs to another profile and the project's restore setting keeps it there")
        }
        return draft.decision(for: reporter)
    }

    /// A profile restores its purchases: each follows the restore setting; those that stay
    /// with another profile are listed, not refused.
    public func restorePurchases(profile id: ProfileID, transactions: [StoreTransaction], nowMs: Int64)
        throws(GatehouseError) -> PurchaseDecision
    {
        let reporter = try resolveProfile(id).id
        var draft = PurchaseDraft(state: self, nowMs: nowMs)
        draft.isRestoring = true
        var kept: [String] = []
        for transaction in transactions where try draft.take(transaction, reportedBy: reporter) == .keptByOther {
            if !kept.contains(transaction.key.id) { kept.append(transaction.key.id) }
        }
        var decision = draft.decision(for: reporter)
        decision.keptByOther = kept
        return decision
    }

    // MARK: store.notify

    /// Applies a store notification. A repeated id changes nothing (`applied: false`); an event
    /// other than a purchase for an unknown purchase is `not_found`, unless the notification
    /// carries the purchase's whole transaction (the App Store's do): then the purchase is first
    /// created from it as a purchase notification creates one. Never moves an owned purchase; a
    /// new purchase goes to the profile holding its token, else is held unowned. A `recordOnly`
    /// notification is only recorded as seen.
    public func notify(_ notification: StoreNotification, nowMs: Int64) throws(GatehouseError) -> PurchaseDecision {
        var key = PurchaseKey(store: notification.store, id: notification.originalTransactionID)
        if case .purchase(let transaction) = notification.event { key = transaction.key }
        if purchases.hasSeen(notification: notification.notificationID, store: notification.store) {
            var decision = PurchaseDecision(batch: ChangeBatch([], atMs: nowMs), profileID: owner(of: key))
            decision.applied = false
            return decision
        }
        var draft = PurchaseDraft(state: self, nowMs: nowMs)
        switch notification.event {
        case .purchase(let transaction):
            _ = try draft.take(transaction, reportedBy: nil, atMs: notification.atMs)
        case .change(let event):
            if let transaction = notification.transaction, transaction.key == key, !draft.knows(key) {
                _ = try draft.take(transaction, reportedBy: nil, atMs: notification.atMs)
            }
            try draft.apply(event, to: key, atMs: notification.atMs)
        case .recordOnly:
            break
        }
        var decision = draft.decision(for: nil)
        decision.batch.changes.insert(.notificationSeen(store: notification.store, id: notification.notificationID), at: 0)
        decision.profileID = draft.owner(of: key)
        return decision
    }

    /// The owner of a subscription or one-time purchase, if the purchase is known and owned.
    public func owner(of key: PurchaseKey) -> ProfileID? {
        purchases.subscription(key)?.owner ?? purchases.oneTimePurchase(key)?.owner
    }

    // MARK: entitlement.grant and entitlement.revoke

    /// Gives a profile an entitlement until `expiresMs` (`nil`: for life), replacing an earlier
    /// grant of it. The entitlement must be in the config (`not_found`); an end in the past is
    /// `bad_request`.
    public func grantEntitlement(profile id: ProfileID, entitlement: String, expiresMs: Int64?, nowMs: Int64)
        throws(GatehouseError) -> PurchaseDecision
    {
        let profile = try resolveProfile(id).id
        try requireEntitlement(entitlement)
        if let expiresMs, expiresMs <= nowMs { throw .badField("expires_ms", "must be after the server's clock (\(nowMs)) or null") }
        let grant = PromotionalGrant(entitlementID: entitlement, grantedMs: nowMs, expiresMs: expiresMs)
        var details = [EventDetail("entitlement", .string(entitlement))]
        if let expiresMs { details.append(EventDetail("expires_ms", .int(expiresMs))) }
        let changes: [Change] = [.grantStored(profile, grant), .eventRecorded(.promotionalGrant, profile, details)]
        return PurchaseDecision(batch: ChangeBatch(changes, atMs: nowMs), profileID: profile)
    }

    /// Revokes the profile's grant of an entitlement (store purchases are untouched); nothing to
    /// revoke changes nothing.
    public func revokeEntitlement(profile id: ProfileID, entitlement: String, nowMs: Int64) throws(GatehouseError)
        -> PurchaseDecision
    {
        let profile = try resolveProfile(id).id
        try requireEntitlement(entitlement)
        guard var grant = purchases.grant(of: profile, entitlement: entitlement), !grant.revoked else {
            return PurchaseDecision(batch: ChangeBatch([], atMs: nowMs), profileID: profile)
        }
        grant.revoked = true
        let changes: [Change] = [
            .grantStored(profile, grant),
            .eventRecorded(.promotionalRevoke, profile, [EventDetail("entitlement", .string(entitlement))]),
        ]
        return PurchaseDecision(batch: ChangeBatch(changes, atMs: nowMs), profileID: profile)
    }

    private func requireEntitlement(_ entitlement: String) throws(GatehouseError) {
        guard config.entitlements.contains(where: { $0.id == entitlement }) else {
            throw .notFound("entitlement \(entitlement) in the project's config")
        }
    }

    // MARK: Time

    /// What the passing of time ends at `nowMs`: subscriptions past their expiry (or grace)
    /// with no renewal, and grants past their end, each with an `EXPIRATION` event. Empty when
    /// nothing is due.
    public func expireDue(nowMs: Int64) -> ChangeBatch {
        ChangeBatch(expiryChanges(purchases.due(nowMs: nowMs), nowMs: nowMs), atMs: nowMs)
    }

    /// ``expireDue(nowMs:)`` cut into batches of at most `deadlinesPerBatch` deadlines, to log and
    /// apply one after another (after a long stop, everything that fell due would otherwise be
    /// one huge record). Each batch touches other items than the others, so deciding them all
    /// against this state is the same as deciding each after the one before.
    public func expiryBatches(nowMs: Int64, deadlinesPerBatch: Int = 1000) -> [ChangeBatch] {
        let due = purchases.due(nowMs: nowMs)
        return stride(from: 0, to: due.count, by: max(1, deadlinesPerBatch)).map { start in
            let slice = Array(due[start..<min(due.count, start + deadlinesPerBatch)])
            return ChangeBatch(expiryChanges(slice, nowMs: nowMs), atMs: nowMs)
        }.filter { !$0.changes.isEmpty }
    }

    private func expiryChanges(_ due: [Deadline], nowMs: Int64) -> [Change] {
        var changes: [Change] = []
        for deadline in due {
            switch deadline {
            case .subscription(let key):
                guard var held = purchases.subscription(key), let transition = held.subscription.expireIfDue(nowMs: nowMs)
                else { continue }
                held.subscription = transition.subscription
                changes.append(.subscriptionStored(held))
                for effect in transition.effects {
                    changes.append(.eventRecorded(effect.type, held.owner, PurchaseDraft.details(of: held.subscription, effect)))
                }
            case .grant(let profile, let entitlement):
                guard var grant = purchases.grant(of: profile, entitlement: entitlement), grant.nextDeadlineMs != nil else {
                    continue
                }
                grant.lapsed = true
                changes.append(.grantStored(profile, grant))
                changes.append(.eventRecorded(.expiration, profile, [
                    EventDetail("store", .string(Entitlements.promotionalStore)),
                    EventDetail("entitlement", .string(entitlement)),
                ]))
            }
        }
        return changes
    }
}

/// The working copy of one purchase request: the purchases it touched as it leaves them, the
/// changes and events in order, and the transfers to report.
struct PurchaseDraft {
    enum Outcome: Equatable {
        case taken
        case keptByOther
    }

    let state: ProjectState
    let nowMs: Int64
    private var subscriptions: [PurchaseKey: HeldSubscription] = [:]
    private var oneTime: [PurchaseKey: HeldPurchase] = [:]
    private var changes: [ProjectState.Change] = []
    /// Per previous owner, in order of first transfer: the purchase ids moved to the reporter.
    private var transfers: [(from: ProfileID, ids: [String])] = []
    /// Purchases this request made known: their first owner stands for the rest of the request
    /// (a restore may carry several terms of one subscription, or one transaction twice).
    private var madeKnown: Set<PurchaseKey> = []

    init(state: ProjectState, nowMs: Int64) {
        self.state = state
        self.nowMs = nowMs
    }

    /// Whether the purchase exists, in this request or before it.
    func knows(_ key: PurchaseKey) -> Bool {
        subscriptions[key] != nil || state.purchases.subscription(key) != nil || oneTime[key] != nil
            || state.purchases.oneTimePurchase(key) != nil
    }

    func owner(of key: PurchaseKey) -> ProfileID? {
        if let held = subscriptions[key] ?? state.purchases.subscription(key) { return held.owner }
        return (oneTime[key] ?? state.purchases.oneTimePurchase(key))?.owner
    }

    /// Takes in one transaction: creates the purchase or adds its term, and settles its owner.
    /// `reporter` `nil`: a store notification, which never moves an owned purchase. `atMs`: the
    /// store's date (a report's is the transaction's purchase time).
    mutating func take(_ transaction: StoreTransaction, reportedBy reporter: ProfileID?, atMs: Int64? = nil)
        throws(GatehouseError) -> Outcome
    {
        let atMs = atMs ?? transaction.purchasedMs
        switch transaction.kind {
        case .subscription:
            return try takeSubscription(transaction, reportedBy: reporter, atMs: atMs)
        case .oneTime:
            return takeOneTime(transaction, reportedBy: reporter)
        }
    }

    private mutating func takeSubscription(_ transaction: StoreTransaction, reportedBy reporter: ProfileID?, atMs: Int64)
        throws(GatehouseError) -> Outcome
    {
        let key = transaction.key
        guard var held = subscriptions[key] ?? state.purchases.subscription(key) else {
            let transition = Subscription.purchased(
                store: transaction.store, originalTransactionID: transaction.originalTransactionID,
                productID: transaction.productID, term: transaction.term, periodType: transaction.periodType,
                environment: transaction.environment, atMs: atMs, familyShared: transaction.familyShared)
            let held = HeldSubscription(transition.subscription, owner: firstOwner(transaction, reporter), token: transaction.token)
            store(held, effects: transition.effects)
            madeKnown.insert(key)
            return .taken
        }
        let outcome = madeKnown.contains(key) ? .taken : settleOwner(of: key.id, owner: &held.owner, reporter: reporter)
        // A report the restore setting refuses changes nothing; a restore still takes the term in.
        if outcome == .keptByOther, !isRestoring { return .keptByOther }
        var effects: [SubscriptionEffect] = []
        // A store's purchase notification of a known subscription is a resubscribe.
        let resubscribe = reporter == nil
        if held.subscription.term(id: transaction.transactionID) == nil {
            let event: SubscriptionEvent =
                resubscribe || transaction.transactionID == transaction.originalTransactionID
                ? .purchase(transaction.term, periodType: transaction.periodType) : .renewal(transaction.term)
            let transition = held.subscription.apply(event, atMs: atMs, gracePeriodMs: state.config.gracePeriodMs)
            held.subscription = transition.subscription
            effects = transition.effects
        }
        if held != (subscriptions[key] ?? state.purchases.subscription(key)) {
            store(held, effects: effects, resubscribe: resubscribe)
        }
        return outcome
    }

    private mutating func takeOneTime(_ transaction: StoreTransaction, reportedBy reporter: ProfileID?) -> Outcome {
        let key = transaction.key
        guard var held = oneTime[key] ?? state.purchases.oneTimePurchase(key) else {
            let held = HeldPurchase(transaction.oneTimePurchase, owner: firstOwner(transaction, reporter), token: transaction.token)
            store(held, effects: [SubscriptionEffect(.nonRenewingPurchase)])
            madeKnown.insert(key)
            return .taken
        }
        let outcome = madeKnown.contains(key) ? .taken : settleOwner(of: key.id, owner: &held.owner, reporter: reporter)
        if held != (oneTime[key] ?? state.purchases.oneTimePurchase(key)) { store(held, effects: []) }
        return outcome
    }

    /// Set by `purchase.restore`: a purchase kept by its owner is listed, and its store data is
    /// still taken in.
    var isRestoring = false

    /// Rule 1, then 2, then 3: the profile holding the transaction's token, else the reporter,
    /// else nobody yet. A web purchase goes to the buyer its Checkout named (in this request,
    /// or before the purchase was known).
    private func firstOwner(_ transaction: StoreTransaction, _ reporter: ProfileID?) -> ProfileID? {
        if let buyer = buyers[transaction.key] { return buyer }
        if let pending = state.web.pendingOwners[transaction.key], let buyer = state.profiles.canonicalID(pending) { return buyer }
        if let token = transaction.token, let holder = state.profiles.profile(token: token) { return holder.id }
        return reporter
    }

    /// Web purchases this request names the buyer of, before they are made (``firstOwner(_:_:)``).
    var buyers: [PurchaseKey: ProfileID] = [:]

    /// A known purchase nobody owns yet becomes `owner`'s (a Checkout naming the buyer of a
    /// subscription whose invoice came first); an owned one stays where it is, as a store's
    /// notification never moves a purchase.
    mutating func claim(_ key: PurchaseKey, for owner: ProfileID) {
        if var held = subscriptions[key] ?? state.purchases.subscription(key) {
            guard held.owner == nil else { return }
            held.owner = owner
            store(held, effects: [])
        } else if var held = oneTime[key] ?? state.purchases.oneTimePurchase(key) {
            guard held.owner == nil else { return }
            held.owner = owner
            store(held, effects: [])
        }
    }

    /// The subscription as this request leaves it, if it is known.
    func subscription(_ key: PurchaseKey) -> Subscription? {
        (subscriptions[key] ?? state.purchases.subscription(key))?.subscription
    }

    /// A report or restore by `reporter` of a purchase already known: an unowned one is claimed;
    /// one owned by another profile follows the project's restore setting.
    private mutating func settleOwner(of id: String, owner: inout ProfileID?, reporter: ProfileID?) -> Outcome {
        guard let reporter, owner != reporter else { return .taken }
        guard let current = owner else {
            owner = reporter
            return .taken
        }
        let moves: Bool
        switch state.config.restore {
        case .transfer: moves = true
        case .transferIfNoActive: moves = !state.purchases.hasActiveSubscription(current, nowMs: nowMs)
        case .keep: moves = false
        }
        guard moves else { return .keptByOther }
        owner = reporter
        if let index = transfers.firstIndex(where: { $0.from == current }) {
            transfers[index].ids.append(id)
        } else {
            transfers.append((current, [id]))
        }
        return .taken
    }

    /// Applies a store event to a known purchase (`not_found` for an unknown one).
    mutating func apply(_ event: SubscriptionEvent, to key: PurchaseKey, atMs: Int64) throws(GatehouseError) {
        if let current = subscriptions[key] ?? state.purchases.subscription(key) {
            var held = current
            let transition = held.subscription.apply(event, atMs: atMs, gracePeriodMs: state.config.gracePeriodMs)
            held.subscription = transition.subscription
            if held != current || !transition.effects.isEmpty { store(held, effects: transition.effects) }
            return
        }
        guard var held = oneTime[key] ?? state.purchases.oneTimePurchase(key) else {
            throw .notFound("purchase with original_transaction_id \(key.id) in store \(key.store)")
        }
        var effects: [SubscriptionEffect] = []
        switch event {
        case .refund(_, let fraction) where fraction > 0:
            if !held.purchase.refunded { effects = [SubscriptionEffect(.refund)] }
            held.purchase.refunded = true
            held.purchase.refundedFraction = min(fraction, 1)
        case .refund, .refundReversed:
            if held.purchase.refunded { effects = [SubscriptionEffect(.refundReversed)] }
            held.purchase.refunded = false
            held.purchase.refundedFraction = 0
        case .revoke:
            if !held.purchase.revoked { effects = [SubscriptionEffect.revokedPurchase] }
            held.purchase.revoked = true
        default:
            throw .badField("event.type", "a one-time purchase only takes purchase, refund, refund_reversed and revoke")
        }
        if held != (oneTime[key] ?? state.purchases.oneTimePurchase(key)) || !effects.isEmpty { store(held, effects: effects) }
    }

    private mutating func store(_ held: HeldSubscription, effects: [SubscriptionEffect], resubscribe: Bool = false) {
        let before = (subscriptions[held.key] ?? state.purchases.subscription(held.key))?.subscription
        subscriptions[held.key] = held
        changes.append(.subscriptionStored(held))
        for effect in effects {
            changes.append(.eventRecorded(effect.type, held.owner, Self.details(of: held.subscription, effect)))
        }
        settleCurrencies(of: held, before: before, resubscribe: resubscribe)
    }

    private mutating func store(_ held: HeldPurchase, effects: [SubscriptionEffect]) {
        let isNew = (oneTime[held.key] ?? state.purchases.oneTimePurchase(held.key)) == nil
        oneTime[held.key] = held
        changes.append(.purchaseStored(held))
        for effect in effects {
            changes.append(.eventRecorded(effect.type, held.owner, Self.details(of: held.purchase, effect)))
        }
        settleCurrencies(of: held, isNew: isNew)
    }

    // MARK: Currency grants of paid terms (DESIGN.md, "Virtual currencies")

    private var termGrants: [String: TermGrant] = [:]
    /// Balances as this request leaves them.
    private var balances: [ProfileID: [String: Int64]] = [:]

    private func termGrant(_ key: String) -> TermGrant? { termGrants[key] ?? state.currencies.termGrant(key) }

    private func balance(of profile: ProfileID, _ currency: String) -> Int64 {
        balances[profile]?[currency] ?? state.currencies.balance(of: profile, currency)
    }

    /// Moves a balance by what fits (0 … max) and answers what moved.
    private mutating func move(_ profile: ProfileID, _ currency: String, by amount: Int64, _ source: CurrencySource,
                               ref: String) -> Int64
    {
        let before = balance(of: profile, currency)
        let after = min(max(before + amount, 0), CurrencyLedger.balanceMax)
        guard after != before else { return 0 }
        balances[profile, default: [:]][currency] = after
        changes.append(.balanceChanged(profile, CurrencyMovement(currency: currency, amount: after - before, source: source, ref: ref)))
        return after - before
    }

    private mutating func storeGrant(_ grant: TermGrant) {
        termGrants[grant.term] = grant
        changes.append(.termGrantStored(grant))
    }

    /// New paid terms grant; refunds, reversals and revokes settle what the terms granted.
    private mutating func settleCurrencies(of held: HeldSubscription, before: Subscription?, resubscribe: Bool) {
        let subscription = held.subscription
        let known = Set(before?.terms.map(\.transactionID) ?? [])
        var hadPaidTerm = before?.terms.contains(where: \.isPaid) ?? false
        let product = state.config.products.first { $0.id == subscription.productID }
        for term in subscription.terms where !known.contains(term.transactionID) && term.isPaid {
            let kind: TermKind = resubscribe ? .resubscribe : (hadPaidTerm ? .renewal : .purchase)
            hadPaidTerm = true
            guard !subscription.familyShared, let product else { continue }
            grant(store: subscription.store, transactionID: term.transactionID, purchase: held.key,
                  grants: kind.grants(of: product), source: kind.source, owner: held.owner)
        }
        for term in subscription.terms { settleRefund(of: term, in: subscription) }
    }

    private mutating func settleCurrencies(of held: HeldPurchase, isNew: Bool) {
        let purchase = held.purchase
        if isNew, purchase.isPaid, !purchase.familyShared, let product = state.config.products.first(where: { $0.id == purchase.productID }) {
            grant(store: purchase.store, transactionID: purchase.transactionID, purchase: held.key,
                  grants: TermKind.purchase.grants(of: product), source: .purchase, owner: held.owner)
        }
        settleRefund(of: purchase)
    }

    private mutating func settleRefund(of term: SubscriptionTerm, in subscription: Subscription) {
        let revoked = subscription.status == .revoked
        let fraction = revoked ? 1 : max(term.refundedFraction, webRefundedFraction(subscription.store, term.transactionID))
        settleRefund(TermGrant.key(store: subscription.store, transactionID: term.transactionID), fraction: fraction, revoked: revoked)
    }

    private mutating func settleRefund(of purchase: OneTimePurchase) {
        let refunded = purchase.refunded ? purchase.refundedFraction : 0
        let fraction = purchase.revoked ? 1 : max(refunded, webRefundedFraction(purchase.store, purchase.transactionID))
        settleRefund(TermGrant.key(store: purchase.store, transactionID: purchase.transactionID), fraction: fraction,
                     revoked: purchase.revoked)
    }

    // MARK: Stripe's refunds that leave the purchase as it is (DESIGN.md, "Web purchases and redemption links")

    /// ``WebPurchases/refundedFractions`` as this request leaves them.
    private var webRefunds: [String: Double] = [:]

    /// The share of a term Stripe refunded without changing the purchase (0: none, or another store).
    private func webRefundedFraction(_ store: String, _ transactionID: String) -> Double {
        guard store == ProjectState.stripeStore else { return 0 }
        return webRefunds[transactionID] ?? state.web.refundedFractions[transactionID] ?? 0
    }

    /// Stripe refunded `fraction` of the term `transactionID` of the subscription or one-time
    /// purchase `key`, and its state stays as it is: only the term's currency grant owes back its
    /// share (`floor(granted × fraction)`), which a larger refund of the same charge raises and a
    /// smaller one, or a repeat, leaves (Stripe's `amount_refunded` only grows). `not_found` for
    /// an unknown purchase or term.
    mutating func refundCurrency(of key: PurchaseKey, transactionID: String, fraction: Double) throws(GatehouseError) {
        let fraction = min(max(fraction, 0), 1)
        let subscription = subscription(key)
        let term = subscription?.term(id: transactionID)
        let purchase = (oneTime[key] ?? state.purchases.oneTimePurchase(key))?.purchase
        guard term != nil || purchase?.transactionID == transactionID else {
            throw .notFound("term \(transactionID) of purchase \(key.id) in store \(key.store)")
        }
        guard fraction > webRefundedFraction(key.store, transactionID) else { return }
        webRefunds[transactionID] = fraction
        changes.append(.stripeRefundRecorded(transactionID: transactionID, fraction: fraction))
        if let subscription, let term {
            settleRefund(of: term, in: subscription)
        } else if let purchase {
            settleRefund(of: purchase)
        }
    }

    /// Rule 2: a term grants once per currency, project-wide; unowned, it waits for its owner.
    private mutating func grant(store: String, transactionID: String, purchase: PurchaseKey, grants: [CurrencyGrant],
                                source: CurrencySource, owner: ProfileID?)
    {
        let key = TermGrant.key(store: store, transactionID: transactionID)
        guard termGrant(key) == nil, !grants.isEmpty else { return }
        let lines = grants.map { grant in
            let granted = owner.map { move($0, grant.currency, by: grant.amount, source, ref: transactionID) } ?? grant.amount
            return TermGrant.Line(currency: grant.currency, granted: granted)
        }
        storeGrant(TermGrant(term: key, purchase: purchase, profile: owner, lines: lines))
    }

    /// Rule 4: a term refunded by `fraction` owes back `floor(granted × fraction)` (all of it
    /// once revoked), taken from the profile it went to (after a merge, the profile it merged
    /// into) but never more than its balance; a reversal gives back exactly what was taken.
    private mutating func settleRefund(_ key: String, fraction: Double, revoked: Bool) {
        guard var grant = termGrant(key) else { return }
        let receiver = grant.profile.flatMap { state.profiles.canonicalID($0) }
        let ref = String(key.drop { $0 != ":" }.dropFirst())
        var changed = false
        for index in grant.lines.indices {
            let line = grant.lines[index]
            let owed = revoked ? line.granted : Int64((Double(line.granted) * min(max(fraction, 0), 1)).rounded(.down))
            guard owed != line.owedBack else { continue }
            changed = true
            if grant.profile != nil, let receiver {
                if owed > line.owedBack {
                    // Never past what the term granted: what a reversal could not give back (the
                    // balance was at the maximum) still counts as taken.
                    let due = min(owed - line.owedBack, owed - line.takenBack)
                    let taken = due > 0 ? -move(receiver, line.currency, by: -due, revoked ? .revoke : .refund, ref: ref) : 0
                    grant.lines[index].takenBack += taken
                } else {
                    let due = owed == 0 ? line.takenBack : min(line.takenBack, line.owedBack - owed)
                    grant.lines[index].takenBack -= move(receiver, line.currency, by: due, .refundReversed, ref: ref)
                }
            }
            grant.lines[index].owedBack = owed
        }
        if changed { storeGrant(grant) }
    }

    /// The batch, with one `TRANSFER` event per profile that lost purchases to `receiver`.
    func decision(for receiver: ProfileID?) -> ProjectState.PurchaseDecision {
        var changes = self.changes
        if let receiver {
            for transfer in transfers {
                changes.append(.eventRecorded(.transfer, receiver, [
                    EventDetail("transferred_from", .profiles([transfer.from])),
                    EventDetail("transferred_to", .profiles([receiver])),
                    EventDetail("original_transaction_ids", .strings(transfer.ids)),
                ]))
            }
        }
        var decision = ProjectState.PurchaseDecision(batch: ProjectState.ChangeBatch(changes, atMs: nowMs), profileID: receiver)
        decision.transferredFrom = transfers.map(\.from)
        return decision
    }

    // MARK: Event details

    static func details(of subscription: Subscription, _ effect: SubscriptionEffect) -> [EventDetail] {
        var details = [
            EventDetail("store", .string(subscription.store)),
            EventDetail("product_id", .string(subscription.productID)),
            EventDetail("original_transaction_id", .string(subscription.originalTransactionID)),
        ]
        if let term = subscription.currentTerm { details.append(EventDetail("transaction_id", .string(term.transactionID))) }
        details.append(EventDetail("expires_ms", .int(subscription.expiresMs)))
        details.append(EventDetail("period_type", .string(subscription.periodType.rawValue)))
        details.append(EventDetail("environment", .string(subscription.environment.rawValue)))
        return details + effect.details
    }

    static func details(of purchase: OneTimePurchase, _ effect: SubscriptionEffect) -> [EventDetail] {
        [
            EventDetail("store", .string(purchase.store)),
            EventDetail("product_id", .string(purchase.productID)),
            EventDetail("transaction_id", .string(purchase.transactionID)),
            EventDetail("environment", .string(purchase.environment.rawValue)),
        ] + effect.details
    }
}

extension SubscriptionEffect {
    /// A one-time purchase revoked (family sharing ended, chargeback).
    static let revokedPurchase = SubscriptionEffect(.expiration, details: [EventDetail("reason", .string("revoked"))])
}
