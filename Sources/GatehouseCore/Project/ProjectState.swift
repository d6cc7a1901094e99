public import GatehouseBase

/// Everything a project holds, as a plain value. The project's actor owns one; rules are
/// methods on it that take time and randomness as inputs, so they run the same in tests.
public struct ProjectState: Sendable, Equatable {
    public let id: ProjectID
    public private(set) var name: String
    public let createdMs: Int64
    public private(set) var keys: KeyDigests
    /// How many times each key has been replaced; a session remembers the generation it
    /// authenticated with, so a rotated key stops working at once, even on open connections.
    public private(set) var keyGenerations: [KeyKind: UInt64]
    public private(set) var config: ProjectConfig {
        didSet { catalog = Entitlements.Catalog(config) }
    }
    /// The config's products and entitlements, looked up once (derived from `config`).
    public private(set) var catalog: Entitlements.Catalog
    /// The last number of the project's sequence: every change takes the next one.
    public private(set) var sequence: UInt64
    /// The sequence number of the last configuration change (`offerings` in `sync`).
    public private(set) var configCursor: UInt64
    public private(set) var profiles: ProfileDirectory
    public internal(set) var events: EventLog
    /// Store purchases (owned or held under a token), promotional grants, the store
    /// notifications applied, and the timer queue.
    public private(set) var purchases: PurchaseBook
    /// Balances with their histories, the grants of store terms, idempotency keys.
    public private(set) var currencies: CurrencyLedger
    /// The deliveries the feed's events owe the config's webhooks and integrations.
    public internal(set) var outbox: Outbox
    /// What web sales keep beside their purchases.
    public internal(set) var web: WebPurchases
    /// The tag every profile id made in this project carries (derived from `id` once, not per
    /// profile created or resolved).
    public let profileTag: UInt32
    /// What `apply` keeps of the feed, the histories and the idempotency keys: the server's
    /// setting, not stored with the state.
    public var retention = Retention.standard

    public init(id: ProjectID, name: String, createdMs: Int64, keys: KeyDigests) {
        self.init(id: id, name: name, createdMs: createdMs, keys: keys, keyGenerations: [.public: 1, .secret: 1],
                  config: .empty, sequence: 0, configCursor: 0, profiles: ProfileDirectory(), events: EventLog(),
                  purchases: PurchaseBook(), currencies: CurrencyLedger(), outbox: Outbox(), web: WebPurchases())
    }

    /// Every stored field, for loading a snapshot.
    public init(
        id: ProjectID, name: String, createdMs: Int64, keys: KeyDigests, keyGenerations: [KeyKind: UInt64],
        config: ProjectConfig, sequence: UInt64, configCursor: UInt64, profiles: ProfileDirectory, events: EventLog,
        purchases: PurchaseBook, currencies: CurrencyLedger = CurrencyLedger(), outbox: Outbox = Outbox(),
        web: WebPurchases = WebPurchases()
    ) {
        self.id = id
        self.profileTag = ProfileID.tag(for: id)
        self.name = name
        self.createdMs = createdMs
        self.keys = keys
        self.keyGenerations = keyGenerations
        self.config = config
        self.catalog = Entitlements.Catalog(config)
        self.sequence = sequence
        self.configCursor = configCursor
        self.profiles = profiles
        self.events = events
        self.purchases = purchases
        self.currencies = currencies
        self.outbox = outbox
        self.web = web
    }

    /// The same tenant under another id with other keys (a clone by `tenant.restore`), its
    /// redemption links under a link key of its own.
    public func cloned(as newID: ProjectID, keys newKeys: KeyDigests) -> ProjectState {
        ProjectState(id: newID, name: name, createdMs: createdMs, keys: newKeys,
                     keyGenerations: [.public: 1, .secret: 1], config: config, sequence: sequence, configCursor: configCursor,
                     profiles: profiles, events: events, purchases: purchases, currencies: currencies, outbox: outbox,
                     web: web.rekeyed(for: newID))
    }

    /// Restored over a live project whose clients hold cursors up to `liveSequence`: the sequence
    /// jumps past both, and everything counts as changed, so no client's cursor can go back or
    /// miss the restore.
    public func continuing(after liveSequence: UInt64) -> ProjectState {
        var copy = self
        copy.sequence = max(sequence, liveSequence) + 1
        copy.configCursor = copy.sequence
        copy.profiles.touchAll(at: copy.sequence)
        return copy
    }

    /// One step of a rule's outcome. A rule decides a list of these (a ``ChangeBatch``); the log
    /// records the batch and replay applies it again, so replay never re-runs a rule, never
    /// draws randomness and never reads a clock.
    public enum Change: Sendable, Equatable {
        case configReplaced(ProjectConfig)
        case keyRotated(KeyKind, SecretDigest)
        /// A new profile, exactly as it starts (its cursor is set when applied).
        case profileCreated(Profile)
        case customerUserIDAssigned(ProfileID, String)
        case tokenAssigned(ProfileID, AppAccountToken)
        /// An anonymous profile folded into another under `login: alias` (`SUBSCRIBER_ALIAS`).
        case profileMerged(from: ProfileID, into: ProfileID)
        case attributesUpdated(ProfileID, [AttributeUpdate])
        case profileDeleted(ProfileID)
        /// A subscription as a store rule left it, with its owner and token (insert or replace).
        case subscriptionStored(HeldSubscription)
        /// A one-time purchase as a store rule left it, with its owner and token.
        case purchaseStored(HeldPurchase)
        /// A profile's grant of one entitlement (insert or replace).
        case grantStored(ProfileID, PromotionalGrant)
        /// A store notification id, applied once.
        case notificationSeen(store: String, id: String)
        /// One event of the feed about a purchase or a grant (`nil` profile: an unowned purchase).
        case eventRecorded(EventType, ProfileID?, [EventDetail])
        /// One change of a profile's balance (a history entry and a `VIRTUAL_CURRENCY_TRANSACTION`).
        case balanceChanged(ProfileID, CurrencyMovement)
        /// What a store term granted and what refunds took back (insert or replace).
        case termGrantStored(TermGrant)
        /// A `currency.transact` key and its answer.
        case idempotencyRecorded(String, IdempotencyRecord)
        /// How attempts at deliveries ended (the outbox's deliverer logs them in batches).
        case deliveriesSettled([DeliveryOutcome])
        /// `webhook.replay`: these events are owed to the target again, from a first attempt.
        case deliveriesQueued(OutboxTarget, [EventKey])
        /// A Checkout named the buyer of a purchase not yet known: it goes to them when it is.
        case pendingOwnerRecorded(PurchaseKey, ProfileID)
        /// The project's redemption link key, made with its first link.
        case linkKeyMade([UInt8])
        /// A web purchase's redemption link as a rule left it (insert or replace).
        case redemptionLinkStored(PurchaseKey, RedemptionLink)
        /// The web profile that bought `purchase` folded into the app profile that redeemed its
        /// link (`PURCHASE_REDEEMED`, no `SUBSCRIBER_ALIAS`).
        case purchaseRedeemed(from: ProfileID, into: ProfileID, purchase: PurchaseKey)
        /// A completed Checkout Session and the purchase it bought.
        case checkoutSessionRecorded(String, PurchaseKey)
        /// Stripe's payment (a PaymentIntent, or a charge without one) paid this invoice
        /// (``WebPurchases/paymentInvoices``).
        case stripePaymentLinked(payment: String, invoice: String)
        /// Stripe's paid invoice is a term of this subscription (``WebPurchases/invoiceSubscriptions``).
        case stripeInvoiceLinked(invoice: String, subscription: String)
        /// Stripe refunded this share of a term or one-time payment, leaving its state
        /// (``WebPurchases/refundedFractions``).
        case stripeRefundRecorded(transactionID: String, fraction: Double)
    }

    /// `value` `nil` deletes the key. `updatedMs` is when the client set it (RevenueCat's
    /// `updated_at_ms`); `nil`: the time of the batch.
    public struct AttributeUpdate: Sendable, Equatable {
        public let key: String
        public let value: String?
        public let updatedMs: Int64?

        public init(key: String, value: String?, updatedMs: Int64? = nil) {
            self.key = key
            self.value = value
            self.updatedMs = updatedMs
        }
    }

    /// What one request changed, at one time: it takes one number of the project's sequence.
    public struct ChangeBatch: Sendable, Equatable {
        public var changes: [Change]
        public var atMs: Int64

        public init(_ changes: [Change], atMs: Int64) {
            self.changes = changes
            self.atMs = atMs
        }
    }

    /// What one applied batch changed that others watch: the profiles whose `sync`-visible parts
    /// moved (their cursor is now the batch's number), the profiles that are gone (deleted or
    /// merged away), and whether the config changed (every profile's `offerings`).
    public struct BatchEffects: Sendable, Equatable {
        public var changedProfiles: [ProfileID] = []
        /// Profiles whose document changed with no part `sync` reports moving (their attributes
        /// and last-seen time), not among `changedProfiles`.
        public var touchedProfiles: [ProfileID] = []
        public var removedProfiles: [ProfileID] = []
        public var configChanged = false
        /// A key was rotated (connections check their key's generation on every request).
        public var keysChanged = false
        /// Deliveries that fell due or were rescheduled (the runtime's schedule follows them).
        public var scheduled: [ScheduledDelivery] = []
        /// Redemption links' emails that were owed or rescheduled (the runtime's schedule follows them).
        public var scheduledMail: [ScheduledMail] = []
    }

    /// Applies a batch already decided by a rule; cannot fail, so the log and memory never
    /// disagree. Each part of a profile that `sync` reports (identity, entitlements, currencies,
    /// purchases) takes the batch's number when it changed.
    @discardableResult
    public mutating func apply(_ batch: ChangeBatch) -> BatchEffects {
        sequence += 1
        var counters = BatchCounters()
        for change in batch.changes {
            apply(change, atMs: batch.atMs, counters: &counters)
        }
        return finish(counters: &counters, atMs: batch.atMs)
    }

    /// Applies a `currency.transact`'s batch as ``apply(_:)-(ChangeBatch)`` applies
    /// `transact.batch`, from its fields (``TransactChange``): the same state, the same effects.
    @discardableResult
    public mutating func apply(_ transact: TransactChange) -> BatchEffects {
        sequence += 1
        var counters = BatchCounters()
        move(transact.movement, for: transact.profile, atMs: transact.atMs, counters: &counters)
        currencies.remember(key: transact.key, transact.record, transaction: transact.transaction, keptMs: retention.idempotencyMs)
        return finish(counters: &counters, atMs: transact.atMs)
    }

    /// What every batch ends with, once its changes are applied: the entitlements it moved, the
    /// feed and the timer queue tidied, and what it changed.
    private mutating func finish(counters: inout BatchCounters, atMs: Int64) -> BatchEffects {
        // Entitlements changed exactly when what a document shows of them did.
        if !counters.entitlementsBefore.isEmpty {
            for (id, before) in counters.entitlementsBefore.sorted(by: { $0.key < $1.key })
            where profiles.isProfile(id) && entitlementViews(of: id, nowMs: atMs) != before {
                mark(id, [.entitlements], counters: &counters)
            }
        }
        // What fell out of its window goes: each check costs nothing when nothing is due.
        pruneFeedKeepingOwed(atMs: atMs)
        currencies.forgetKeys(olderThan: retention.idempotencyMs, at: atMs)
        purchases.forgetNotifications(at: atMs)
        purchases.dropStaleDeadlines()
        let changed = counters.changed.sorted()
        let touched = counters.attributesChanged.sorted().filter { !changed.contains($0) && !counters.removed.contains($0) }
        return BatchEffects(changedProfiles: changed, touchedProfiles: touched, removedProfiles: counters.removed.sorted(),
                            configChanged: counters.configChanged, keysChanged: counters.keysChanged,
                            scheduled: counters.scheduled, scheduledMail: counters.scheduledMail)
    }

    /// Asks memory for what applying `batch` reads first, the index buckets of the profiles,
    /// balances and idempotency keys it names, so that a replay, which knows the records after
    /// the one it applies, has their cache misses overlap the apply of the ones before
    /// (``Prefetch``). ``prefetchProfiles(for:)`` is the second step, once the buckets are in.
    /// Reads a few buckets and changes nothing: `mutating` only so that it is handed the state in
    /// place (a call on a state a class holds would first copy all its 650 bytes).
    public mutating func prefetchBuckets(for batch: ChangeBatch) {
        for change in batch.changes {
            switch change {
            case .balanceChanged(let id, let movement):
                profiles.prefetchIndex(of: id)
                currencies.prefetchHistory(of: id, movement.currency)
            case .idempotencyRecorded(let key, _):
                currencies.prefetchIdempotency(key)
            default:
                break
            }
        }
    }

    /// Asks for the profiles whose balances `batch` changes: each is named by a bucket that
    /// ``prefetchBuckets(for:)`` asked for some time before. `mutating` only as that is.
    public mutating func prefetchProfiles(for batch: ChangeBatch) {
        for change in batch.changes {
            if case .balanceChanged(let id, _) = change { profiles.prefetchProfile(id) }
        }
    }

    /// What one batch has numbered and touched so far.
    struct BatchCounters {
        var events = 0
        var movements = 0
        /// The entitlements of profiles a change may affect, as they were before it.
        var entitlementsBefore: [ProfileID: [EntitlementView]] = [:]
        var changed = TouchedProfiles()
        var attributesChanged = TouchedProfiles()
        var removed = TouchedProfiles()
        var configChanged = false
        var keysChanged = false
        var scheduled: [ScheduledDelivery] = []
        var scheduledMail: [ScheduledMail] = []
    }

    /// The profiles a batch touched. Nearly always one or two: the first is held inline (a
    /// batch that touches one profile, such as a `currency.transact`, allocates nothing for it),
    /// the next few in a short list, with no hash table or hashing of ids until there are more.
    struct TouchedProfiles {
        private var first: ProfileID?
        private var few: [ProfileID] = []
        private var many: Set<ProfileID>?
        private static let fewMax = 8

        mutating func insert(_ id: ProfileID) {
            if many != nil {
                many?.insert(id)
            } else if first == nil {
                first = id
            } else if first != id, !few.contains(id) {
                if few.count < Self.fewMax {
                    few.append(id)
                } else {
                    many = Set(few + [first!, id])
                    first = nil
                    few = []
                }
            }
        }

        mutating func remove(_ id: ProfileID) {
            if many != nil {
                many?.remove(id)
            } else if first == id {
                first = few.popLast()
            } else {
                few.removeAll { $0 == id }
            }
        }

        func contains(_ id: ProfileID) -> Bool {
            if let many { return many.contains(id) }
            return first == id || few.contains(id)
        }

        func sorted() -> [ProfileID] {
            if let many { return many.sorted() }
            guard let first else { return [] }
            return few.isEmpty ? [first] : (few + [first]).sorted()
        }
    }

    /// Remembers a profile's entitlements before the first change of the batch that may move them.
    private func noteEntitlements(of ids: [ProfileID?], atMs: Int64, counters: inout BatchCounters) {
        for case let id? in ids where counters.entitlementsBefore[id] == nil && profiles.isProfile(id) {
            counters.entitlementsBefore[id] = entitlementViews(of: id, nowMs: atMs)
        }
    }

    /// The moment an item with `deadline` was last live, if that is before `atMs`.
    private static func justBefore(_ deadline: Int64?, _ atMs: Int64) -> Int64 {
        guard let deadline else { return atMs }
        return min(atMs, deadline - 1)
    }

    /// Marks parts of a profile changed by this batch.
    private mutating func mark(_ id: ProfileID?, _ parts: SyncCursors.Parts, counters: inout BatchCounters) {
        guard let id, profiles.mark(id, parts, at: sequence) else { return }
        counters.changed.insert(id)
    }

    private mutating func apply(_ change: Change, atMs: Int64, counters: inout BatchCounters) {
        switch change {
        case .configReplaced(let newConfig):
            config = newConfig
            configCursor = sequence
            counters.configChanged = true
            followOutboundConfig()
        case .keyRotated(let kind, let digest):
            counters.keysChanged = true
            keys[kind] = digest
            keyGenerations[kind, default: 1] += 1
        case .profileCreated(var profile):
            profile.cursor = sequence
            profile.attributesCursor = profile.attributes.isEmpty ? 0 : sequence
            profile.lastSeenMs = atMs
            profiles.insert(profile)
            counters.changed.insert(profile.id)
            // Purchases held unowned under the token attach to the profile that takes it.
            creditPendingGrants(of: purchases.claim(token: profile.token, for: profile.id), to: profile.id, atMs: atMs,
                                counters: &counters)
        case .customerUserIDAssigned(let id, let customerUserID):
            profiles.assignCustomerUserID(customerUserID, to: id)
            touch(id, atMs: atMs)
            mark(id, [.identity], counters: &counters)
        case .tokenAssigned(let id, let token):
            noteEntitlements(of: [id], atMs: atMs, counters: &counters)
            profiles.assignToken(token, to: id)
            let claimed = purchases.claim(token: token, for: id)
            creditPendingGrants(of: claimed, to: id, atMs: atMs, counters: &counters)
            touch(id, atMs: atMs)
            mark(id, claimed.isEmpty ? [.identity] : [.identity, .purchases], counters: &counters)
        case .profileMerged(let source, let target):
            merge(source, into: target, atMs: atMs, counters: &counters) { _ in
                (.subscriberAlias, [EventDetail("merged_from", .profiles([source]))])
            }
        case .attributesUpdated(let id, let updates):
            // The rule logged only the updates that win (replay does not compare times again).
            let sequence = sequence
            profiles.update(id) { profile in
                for update in updates {
                    profile.attributes[update.key] = update.value.map { ProfileAttribute(value: $0, updatedMs: update.updatedMs ?? atMs) }
                }
                profile.attributesCursor = sequence
            }
            // Attributes are not `sync` changes: SDKs cannot read them (PROTOCOL.md).
            touch(id, atMs: atMs)
            counters.attributesChanged.insert(id)
        case .profileDeleted(let id):
            profiles.remove(id)
            counters.removed.insert(id)
            counters.changed.remove(id)
            purchases.release(id)
            currencies.remove(id)
        case .subscriptionStored(let held):
            let current = purchases.subscription(held.key)
            let owners = [current?.owner, held.owner]
            // Seen from before its deadline, so an expiry by time shows as the change it is; the
            // profiles that lost it to a transfer still show it among their entitlements.
            let formerHolders = purchases.formerHolders(of: FormerSource(kind: .subscription, key: held.key))
            noteEntitlements(of: owners + formerHolders.map { $0 }, atMs: Self.justBefore(current?.subscription.nextDeadlineMs, atMs),
                             counters: &counters)
            let previous = purchases.store(held)
            if let previous, previous.owner == nil, let owner = held.owner {
                creditPendingGrants(of: [held.key], to: owner, atMs: atMs, counters: &counters)
            }
            if !web.pendingOwners.isEmpty { web.pendingOwners[held.key] = nil }
            purchases.noteTransfer(FormerSource(kind: .subscription, key: held.key), from: previous?.owner, to: held.owner)
            // Only what a profile document shows moves a cursor (a stale event's date does not).
            if previous?.owner != held.owner || previous.map({ !$0.subscription.looksTheSame(as: held.subscription) }) ?? true {
                for owner in owners { mark(owner, [.purchases], counters: &counters) }
            }
        case .purchaseStored(let held):
            let owners = [purchases.oneTimePurchase(held.key)?.owner, held.owner]
            let formerHolders = purchases.formerHolders(of: FormerSource(kind: .oneTime, key: held.key))
            noteEntitlements(of: owners + formerHolders.map { $0 }, atMs: atMs, counters: &counters)
            let previous = purchases.store(held)
            if let previous, previous.owner == nil, let owner = held.owner {
                creditPendingGrants(of: [held.key], to: owner, atMs: atMs, counters: &counters)
            }
            if !web.pendingOwners.isEmpty { web.pendingOwners[held.key] = nil }
            purchases.noteTransfer(FormerSource(kind: .oneTime, key: held.key), from: previous?.owner, to: held.owner)
            if previous != held {
                for owner in owners { mark(owner, [.purchases], counters: &counters) }
            }
        case .grantStored(let id, let grant):
            // A grant shows only through the entitlements it gives.
            let current = purchases.grant(of: id, entitlement: grant.entitlementID)
            noteEntitlements(of: [id], atMs: Self.justBefore(current?.nextDeadlineMs, atMs), counters: &counters)
            purchases.store(grant, for: id)
        case .notificationSeen(let store, let id):
            purchases.markSeen(notification: id, store: store, atMs: atMs)
        case .eventRecorded(let type, let id, let details):
            record(type, id, details, atMs: atMs, counters: &counters)
        case .balanceChanged(let id, let movement):
            move(movement, for: id, atMs: atMs, counters: &counters)
        case .termGrantStored(let grant):
            currencies.store(grant)
        case .idempotencyRecorded(let key, let record):
            currencies.remember(key: key, record, keptMs: retention.idempotencyMs)
        case .deliveriesSettled(let outcomes):
            settle(outcomes, scheduled: &counters.scheduled)
        case .deliveriesQueued(let target, let keys):
            queue(keys, for: target, atMs: atMs, scheduled: &counters.scheduled)
        case .pendingOwnerRecorded(let key, let id):
            web.pendingOwners[key] = id
        case .linkKeyMade(let key):
            web.setLinkKey(key)
        case .redemptionLinkStored(let key, let link):
            web.store(link, for: key)
            if let mail = link.mail {
                counters.scheduledMail.append(ScheduledMail(purchase: key, generation: link.generation, dueMs: mail.nextAttemptMs))
            }
        case .purchaseRedeemed(let source, let target, let key):
            merge(source, into: target, atMs: atMs, counters: &counters) { state in
                (.purchaseRedeemed, state.redeemedDetails(of: key, mergedFrom: source))
            }
        case .checkoutSessionRecorded(let session, let key):
            web.sessions[session] = key
        case .stripePaymentLinked(let payment, let invoice):
            web.paymentInvoices[payment] = invoice
        case .stripeInvoiceLinked(let invoice, let subscription):
            web.invoiceSubscriptions[invoice] = subscription
        case .stripeRefundRecorded(let transactionID, let fraction):
            web.refundedFractions[transactionID] = fraction
        }
    }

    /// Folds the anonymous `source` into `target` (`profile.identify`'s merge, and a redemption's):
    /// purchases, grants and attributes move, balances are added, and one event says so, its
    /// details taken once the purchases have moved.
    private mutating func merge(_ source: ProfileID, into target: ProfileID, atMs: Int64, counters: inout BatchCounters,
                                event: (ProjectState) -> (EventType, [EventDetail]))
    {
        noteEntitlements(of: [target], atMs: atMs, counters: &counters)
        // Grants show only as entitlements, which the comparison at the end of the batch sees.
        let movesPurchases = purchases.ownsPurchase(source)
        if profiles.merge(source, into: target) { profiles.update(target) { $0.attributesCursor = sequence } }
        purchases.move(from: source, to: target)
        if !web.pendingOwners.isEmpty { web.followMerge(from: source, into: target) }
        touch(target, atMs: atMs)
        mark(target, movesPurchases ? [.identity, .purchases] : [.identity], counters: &counters)
        counters.removed.insert(source)
        let (type, details) = event(self)
        record(type, target, details, atMs: atMs, counters: &counters)
        // Balances are added (DESIGN.md); grants the source received are clawed back from
        // the target from now on (its id resolves there).
        for (currency, history) in (currencies.histories[source] ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let balance = history.last?.balance, balance > 0 else { continue }
            move(CurrencyMovement(currency: currency, amount: balance, source: .merge, ref: source.description),
                 for: target, atMs: atMs, counters: &counters)
        }
        currencies.remove(source)
    }

    /// One balance change: a history entry named `vct_<sequence>_<n>`, its event, the cursor.
    /// Moves a balance (clamped to 0 … max) and answers by how much it really moved.
    @discardableResult
    private mutating func move(_ movement: CurrencyMovement, for id: ProfileID, atMs: Int64, counters: inout BatchCounters)
        -> Int64
    {
        let transaction = TransactionName(sequence: sequence, index: UInt32(counters.movements))
        counters.movements += 1
        guard let entry = currencies.record(movement, for: id, transaction: transaction, atMs: atMs,
                                            kept: retention.historyEntriesPerCurrency)
        else { return 0 }
        // The profile is found once, for its cursor and the event's customer user id.
        let (marked, customerUserID) = profiles.markReadingCustomerUserID(id, [.currencies], at: sequence)
        if marked { counters.changed.insert(id) }
        // Its event's details go straight into the feed (what `record` would hold for them).
        events.append(cursor: sequence, index: UInt32(counters.events), type: .virtualCurrencyTransaction, profileID: id,
                      customerUserID: customerUserID, atMs: atMs) { details in
            details.count(movement.reason == nil ? 6 : 7)
            TransactionName.withSpelling(sequence: transaction.sequence, index: transaction.index) { id in
                details.string(.transactionID, utf8: id)
            }
            details.string(.currency, movement.currency)
            details.int(.amount, entry.amount)
            details.int(.balance, entry.balance)
            details.string(.source, movement.source.rawValue)
            details.string(.ref, movement.ref)
            if let reason = movement.reason { details.string(.reason, reason) }
        }
        oweDeliveries(of: EventKey(cursor: sequence, index: UInt32(counters.events)), type: .virtualCurrencyTransaction,
                      profile: id, customerUserID: customerUserID, atMs: atMs, facts: EventFacts(currency: movement.currency),
                      scheduled: &counters.scheduled)
        counters.events += 1
        return entry.amount
    }

    /// Purchases an owner just claimed: the grants their terms made while no one owned them are
    /// credited now (less what refunds already owe back), and tied to that owner.
    private mutating func creditPendingGrants(of keys: [PurchaseKey], to owner: ProfileID, atMs: Int64,
                                              counters: inout BatchCounters)
    {
        for key in keys {
            for var grant in currencies.pendingGrants(of: key) {
                for index in grant.lines.indices {
                    let line = grant.lines[index]
                    let owed = line.granted - line.owedBack
                    let credited = move(CurrencyMovement(currency: line.currency, amount: owed, source: .purchase,
                                                         ref: grant.transactionID), for: owner, atMs: atMs, counters: &counters)
                    // A balance at the maximum takes only what fits: the term counts as having
                    // granted what was credited, so a later refund takes back no more than that.
                    let granted = line.granted - max(0, owed - credited)
                    grant.lines[index] = TermGrant.Line(currency: line.currency, granted: granted, owedBack: line.owedBack,
                                                        takenBack: line.owedBack)
                }
                grant.profile = owner
                currencies.store(grant)
            }
        }
    }

    /// Appends one event to the feed with the next id of this batch.
    private mutating func record(_ type: EventType, _ id: ProfileID?, _ details: [EventDetail], atMs: Int64,
                                 counters: inout BatchCounters)
    {
        let customerUserID = id.flatMap { profiles.customerUserID(of: $0) }
        events.append(Event(cursor: sequence, index: UInt32(counters.events), type: type, profileID: id,
                            customerUserID: customerUserID, atMs: atMs, details: details))
        oweDeliveries(of: EventKey(cursor: sequence, index: UInt32(counters.events)), type: type, profile: id,
                      customerUserID: customerUserID, atMs: atMs, facts: EventFacts(details), scheduled: &counters.scheduled)
        counters.events += 1
    }

    /// The app changed something about the profile (identity, attributes): its last-seen time.
    private mutating func touch(_ id: ProfileID, atMs: Int64) {
        profiles.update(id) { $0.lastSeenMs = atMs }
    }

    /// The same stored state: ``retention`` is the server's setting it runs under, not part of
    /// it, and the catalog and the profile tag follow from the config and the id.
    public static func == (a: ProjectState, b: ProjectState) -> Bool {
        a.id == b.id && a.name == b.name && a.createdMs == b.createdMs && a.keys == b.keys && a.keyGenerations == b.keyGenerations
            && a.config == b.config && a.sequence == b.sequence && a.configCursor == b.configCursor && a.profiles == b.profiles
            && a.events == b.events && a.purchases == b.purchases && a.currencies == b.currencies
            && a.outbox == b.outbox && a.web == b.web
    }

    /// Validates a new configuration and returns the change that installs it; a secret left out
    /// keeps the stored one (``ProjectConfig/keepingPrivateKey(of:)``,
    /// ``ProjectConfig/keepingOneSignalKey(of:)``), and a webhook's is made when none is stored
    /// (``ProjectConfig/fillingWebhookSecrets(from:random:)``), so the logged config holds them all.
    public func replaceConfig(with newConfig: ProjectConfig, random: some RandomSource) throws(GatehouseError) -> Change {
        let replacement = try newConfig.keepingPrivateKey(of: config).keepingOneSignalKey(of: config)
            .fillingWebhookSecrets(from: config, random: random)
        try replacement.validate()
        return .configReplaced(replacement)
    }

    public static func validateName(_ name: String) throws(GatehouseError) -> String {
        let trimmed = name.trimmingSpaces()
        guard (1...200).contains(trimmed.count) else { throw .badField("name", "must be 1–200 characters") }
        return trimmed
    }
}

extension String {
    /// The string without spaces at either end (DESIGN.md trims customer user ids the same way).
    public func trimmingSpaces() -> String {
        var view = Substring(self)
        while view.first == " " { view.removeFirst() }
        while view.last == " " { view.removeLast() }
        return String(view)
    }
}
