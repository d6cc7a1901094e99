public import GatehouseBase

// Stripe's events as purchases (DESIGN.md, "Web purchases and redemption links"): a Stripe
// subscription then goes through the same ownership, lifecycle, entitlement, currency and event
// rules as every store's. The server verifies and parses the event and turns it into a
// ``StripeNotice`` against the config; this decides what it changes.

extension ProjectState {
    /// The store name of Stripe's purchases.
    public static let stripeStore = "stripe"

    /// Applies one Stripe event. A repeated event id changes nothing (`applied: false`), nor does
    /// an event the server does not use (`recordOnly`, also `applied: false`: it is only taken
    /// as seen); a subscription update for a subscription not yet known is `not_found`, so Stripe
    /// sends it again once its invoice has made it known (a refused event does not use up its id).
    public func applyStripe(_ notice: StripeNotice, nowMs: Int64, random: some RandomSource) throws(GatehouseError)
        -> PurchaseDecision
    {
        if purchases.hasSeen(notification: notice.eventID, store: Self.stripeStore) {
            var decision = PurchaseDecision(batch: ChangeBatch([], atMs: nowMs), profileID: notice.key.flatMap(owner(of:)))
            decision.applied = false
            return decision
        }
        var draft = PurchaseDraft(state: self, nowMs: nowMs)
        var before: [Change] = [.notificationSeen(store: Self.stripeStore, id: notice.eventID)]
        var after: [Change] = []
        var buyer: ProfileID?
        switch notice.action {
        case .recordOnly:
            break
        case .checkout(let key, let named, let oneTime):
            let (id, made) = buyerProfile(named, nowMs: nowMs, random: random)
            buyer = id
            before += made
            if let oneTime {
                draft.buyers[key] = id
                _ = try draft.take(oneTime, reportedBy: nil, atMs: notice.atMs)
            }
            if draft.knows(key) {
                draft.claim(key, for: id)
            } else {
                before.append(.pendingOwnerRecorded(key, id))
            }
            if let session = named.sessionID { before.append(.checkoutSessionRecorded(session, key)) }
            // A buyer the app did not name gets a link to take the purchase into the app.
            if !made.isEmpty, (draft.owner(of: key) ?? id) == id {
                after += issueLink(for: key, buyer: id, email: named.email, nowMs: nowMs, random: random)
            }
        case .term(let transaction, let initial):
            if initial || !draft.knows(transaction.key) {
                _ = try draft.take(transaction, reportedBy: nil, atMs: notice.atMs)
            }
            if !initial { try draft.apply(.renewal(transaction.term), to: transaction.key, atMs: notice.atMs) }
        case .subscription(let key, let update):
            guard let current = draft.subscription(key) else {
                throw .notFound("Stripe subscription \(key.id): its first invoice has not arrived yet")
            }
            for event in stripeEvents(update, current: current) { try draft.apply(event, to: key, atMs: notice.atMs) }
        }
        var decision = draft.decision(for: nil)
        decision.batch.changes.insert(contentsOf: before, at: 0)
        decision.batch.changes += after
        if case .recordOnly = notice.action { decision.applied = false }
        decision.profileID = notice.key.flatMap { draft.owner(of: $0) } ?? buyer
        return decision
    }

    /// The profile a Checkout's reference names (a customer user id, a profile id or an install
    /// id of this project), else a new web profile holding the buyer's email.
    private func buyerProfile(_ buyer: WebBuyer, nowMs: Int64, random: some RandomSource) -> (ProfileID, [Change]) {
        if let reference = buyer.reference, let id = profileNamed(reference) { return (id, []) }
        return webProfile(email: buyer.email, nowMs: nowMs, random: random)
    }

    private func profileNamed(_ reference: String) -> ProfileID? {
        if let profile = profiles.profile(customerUserID: reference) { return profile.id }
        if let id = ProfileID(parsing: reference), let canonical = profiles.canonicalID(id) { return canonical }
        if let install = InstallID(parsing: reference), let profile = profiles.profile(installID: install) { return profile.id }
        return nil
    }

    /// A subscription update as the store events it amounts to. The period end moves the current
    /// term's end later (Stripe moves a renewing subscription into its new period about an hour
    /// before the invoice for it is paid, and it stays entitled meanwhile); the paid invoice
    /// then adds the new term. A billing issue's grace runs from the period's start, not its end.
    private func stripeEvents(_ update: StripeSubscriptionState, current: Subscription) -> [SubscriptionEvent] {
        var events: [SubscriptionEvent] = []
        switch update.status {
        case .incomplete:
            return []
        case .ended:
            return [.expire]
        case .active:
            if [.grace, .billingRetry].contains(current.baseStatus) { events.append(.recover(nil)) }
            if let term = current.currentTerm, update.periodEndMs > current.expiresMs {
                events.append(.extend(SubscriptionTerm(transactionID: term.transactionID, purchasedMs: term.purchasedMs,
                                                       expiresMs: update.periodEndMs, price: term.price)))
            }
        case .pastDue:
            let grace = config.gracePeriodMs > 0 ? update.periodStartMs + config.gracePeriodMs : nil
            events.append(.billingIssue(graceExpiresMs: grace))
        }
        events.append(update.cancelAtPeriodEnd ? .cancel : .uncancel)
        if let product = update.productID, product != current.productID { events.append(.productChange(newProductID: product)) }
        return events
    }
}

extension StripeNotice {
    /// The purchase the event is about, if any.
    var key: PurchaseKey? {
        switch action {
        case .checkout(let key, _, _): key
        case .term(let transaction, _): transaction.key
        case .subscription(let key, _): key
        case .recordOnly: nil
        }
    }
}
