/// Why a balance changed (`currency.history`'s `source`).
public enum CurrencySource: String, Sendable, Equatable, CaseIterable {
    /// A purchase's grant: a first paid term, a resubscribe, or a one-time purchase.
    case purchase
    /// A later auto-renewed term's grant.
    case renewal
    /// A refund took (part of) a term's grant back.
    case refund
    /// A reversed refund gave back what the refund took.
    case refundReversed = "refund_reversed"
    /// A revoke took a subscription's grants back.
    case revoke
    /// A backend's `currency.transact`.
    case transaction
    /// An anonymous profile merged in brought its balance.
    case merge
}

/// One change of one balance, as the rule decided it: the amount is already what fits (never
/// below 0, never above the maximum).
public struct CurrencyMovement: Sendable, Equatable {
    public var currency: String
    public var amount: Int64
    public var source: CurrencySource
    /// The store transaction id of a grant or claw-back, the idempotency key of a transaction,
    /// the profile id merged in.
    public var ref: String
    /// A transaction's optional reason.
    public var reason: String?

    public init(currency: String, amount: Int64, source: CurrencySource, ref: String, reason: String? = nil) {
        self.currency = currency
        self.amount = amount
        self.source = source
        self.ref = ref
        self.reason = reason
    }
}

/// One entry of a balance's history (`currency.history`).
public struct CurrencyEntry: Sendable, Equatable {
    /// `vct_<sequence>_<n>`: unique in the project.
    public let transactionID: String
    public let amount: Int64
    /// The balance after this entry.
    public let balance: Int64
    public let source: CurrencySource
    public let ref: String
    public let atMs: Int64

    public init(transactionID: String, amount: Int64, balance: Int64, source: CurrencySource, ref: String, atMs: Int64) {
        self.transactionID = transactionID
        self.amount = amount
        self.balance = balance
        self.source = source
        self.ref = ref
        self.atMs = atMs
    }
}

/// What one store term granted, per currency, and to whom; what refunds took back. Each term
/// grants once per currency, project-wide: its record is the proof (DESIGN.md rule 2).
public struct TermGrant: Sendable, Equatable {
    /// `<store>:<transaction id>` of the term (a one-time purchase's transaction).
    public let term: String
    /// The purchase the term belongs to (claims of unowned purchases credit through it).
    public let purchase: PurchaseKey
    /// Who received it; `nil` while the purchase is unowned (credited when a profile claims it).
    public var profile: ProfileID?
    /// Per currency, in currency order: granted amount, what refunds should have taken
    /// (`floor(granted × fraction)`, or all of it once revoked), and what they did take (never
    /// more than the balance held).
    public var lines: [Line]

    public struct Line: Sendable, Equatable {
        public let currency: String
        public let granted: Int64
        public var owedBack: Int64
        public var takenBack: Int64

        public init(currency: String, granted: Int64, owedBack: Int64 = 0, takenBack: Int64 = 0) {
            self.currency = currency
            self.granted = granted
            self.owedBack = owedBack
            self.takenBack = takenBack
        }
    }

    public init(term: String, purchase: PurchaseKey, profile: ProfileID?, lines: [Line]) {
        self.term = term
        self.purchase = purchase
        self.profile = profile
        self.lines = lines
    }

    public static func key(store: String, transactionID: String) -> String { "\(store):\(transactionID)" }

    /// The term's store transaction id: the `ref` of the history entries its grant makes.
    var transactionID: String { String(term.drop { $0 != ":" }.dropFirst()) }
}

/// What `currency.transact` remembers of a key: the request it answered and its answer.
public struct IdempotencyRecord: Sendable, Equatable {
    public let profile: ProfileID
    public let currency: String
    public let amount: Int64
    public let reason: String?
    /// The answer: the entry's id and the balance after it.
    public let transactionID: String
    public let balance: Int64
    public let atMs: Int64

    public init(profile: ProfileID, currency: String, amount: Int64, reason: String?, transactionID: String, balance: Int64,
                atMs: Int64)
    {
        self.profile = profile
        self.currency = currency
        self.amount = amount
        self.reason = reason
        self.transactionID = transactionID
        self.balance = balance
        self.atMs = atMs
    }
}

/// A project's virtual currencies (DESIGN.md, "Virtual currencies"): each profile's history per
/// currency (its balance is the last entry's), the grants of store terms, and the idempotency
/// keys of transactions.
///
/// Histories, term grants and keys are kept densely (``CurrencyHistories``, ``TermGrantTable``,
/// ``IdempotencyTable``): no `String` per entry, grant or key, no dictionary rehashing the world
/// as it grows. ``histories``, ``termGrants`` and ``idempotency`` show them in the shapes they
/// had when they were dictionaries.
public struct CurrencyLedger: Sendable {
    public static let balanceMax: Int64 = 2_000_000_000

    private(set) var lists = CurrencyHistories()
    private(set) var grants = TermGrantTable()
    /// Keys answered in the last ``Retention/idempotencyMs``, oldest first.
    private var keys = IdempotencyTable()
    /// The terms of each purchase whose grants wait for an owner (derived from `termGrants`).
    private var pending: [PurchaseKey: Set<String>] = [:]

    public init() {}

    /// Rebuilt from stored parts.
    public init(histories: [ProfileID: [String: [CurrencyEntry]]], termGrants: [TermGrant], idempotency: [String: IdempotencyRecord]) {
        for (profile, byCurrency) in histories {
            for (currency, history) in byCurrency where !history.isEmpty {
                _ = restoreHistory(of: profile, currency, history)
            }
        }
        for grant in termGrants { store(grant) }
        _ = restoreIdempotency(idempotency.map { ($0.key, $0.value) })
    }

    /// Rebuilt from the parts another ledger shows.
    public init(histories: Histories, termGrants: [TermGrant], idempotency: [String: IdempotencyRecord]) {
        self.init(histories: histories.dictionary, termGrants: termGrants, idempotency: idempotency)
    }

    /// Adds a profile's history in one currency, oldest first, as storage holds it (the reader
    /// checks that its balances add up); `false`, and nothing changes, when the ledger has a
    /// history of that profile and currency already or `history` is empty.
    public mutating func restoreHistory(of profile: ProfileID, _ currency: String, _ history: [CurrencyEntry]) -> Bool {
        lists.restore(profile, currency, history)
    }

    /// Room for `histories` histories of `entries` entries in all (a ledger read back).
    public mutating func reserveHistories(_ histories: Int, entries: Int) {
        lists.reserveCapacity(lists: histories, entries: entries)
    }

    /// Adds term grants storage holds; `false` when a term is listed twice (or already held).
    @discardableResult
    public mutating func restoreTermGrants(_ grants: [TermGrant]) -> Bool {
        let expected = self.grants.count + grants.count
        self.grants.reserveCapacity(expected)
        for grant in grants { store(grant) }
        return self.grants.count == expected
    }

    /// Adds the keys storage holds; `false` when one is listed twice (or already remembered).
    public mutating func restoreIdempotency(_ records: [(key: String, record: IdempotencyRecord)]) -> Bool {
        keys.restore(records)
    }

    public func balance(of profile: ProfileID, _ currency: String) -> Int64 {
        lists.list(profile, currency)?.balance ?? 0
    }

    /// Newest first, at most `limit`.
    public func history(of profile: ProfileID, _ currency: String, limit: Int) -> [CurrencyEntry] {
        guard limit > 0, let list = lists.list(profile, currency) else { return [] }
        return lists.newest(of: list, limit: limit)
    }

    /// How many histories (profile and currency) the ledger holds.
    public var historyCount: Int { lists.listCount }

    /// How many entries its histories hold in all.
    public var historyEntryCount: Int { lists.keptEntryCount }

    /// The record of an idempotency key, if it is remembered.
    public func idempotencyRecord(forKey key: String) -> IdempotencyRecord? {
        keys.record(forKey: key)
    }

    /// The remembered keys with their records, ordered by key (what a snapshot writes).
    public var idempotencyByKey: [(key: String, record: IdempotencyRecord)] { keys.sortedByKey }

    /// How many keys are remembered.
    public var idempotencyCount: Int { keys.count }

    /// Keys moved so far to compact the table (tests: the work a write costs).
    var keysMoved: Int { keys.entriesMoved }

    /// Every remembered key, by key (built on each call: for tests and tools).
    public var idempotency: [String: IdempotencyRecord] {
        Dictionary(keys.all.map { ($0.key, $0.record) }, uniquingKeysWith: { first, _ in first })
    }

    /// The grant of one term (`<store>:<transaction id>`), if any: one lookup, no view.
    public func termGrant(_ term: String) -> TermGrant? { grants[term] }

    /// Every term grant by term: a view that builds what is asked of it.
    public var termGrants: TermGrants { TermGrants(table: grants) }

    /// Every history, per profile and currency: a view that builds what is asked of it.
    public var histories: Histories { Histories(lists: lists) }

    /// Term grants of one purchase still waiting for an owner, in term order.
    func pendingGrants(of purchase: PurchaseKey) -> [TermGrant] {
        (pending[purchase] ?? []).sorted().compactMap { grants[$0] }
    }

    /// Asks for the bucket a lookup of the history of `profile` in `currency` reads first
    /// (``Prefetch``).
    func prefetchHistory(of profile: ProfileID, _ currency: String) {
        lists.prefetch(profile, currency)
    }

    /// Asks for the bucket a lookup of the idempotency key `key` reads first.
    func prefetchIdempotency(_ key: String) {
        keys.prefetch(key)
    }

    // MARK: Changes (called by ProjectState.apply only)

    /// Appends an entry named `transaction` (``transactionID(sequence:index:)``'s numbers) and
    /// answers what it moved and the balance after; `nil` when nothing moves. Rules decide
    /// amounts that fit; a credit made in the same batch by `apply` itself (a claim's pending
    /// grants, a merge) can leave less room than a rule saw, so the amount is held within 0…max
    /// here, and the entry records what really moved: a balance is always the sum of its history.
    /// The list keeps its newest `kept` entries (``Retention/historyEntriesPerCurrency``).
    mutating func record(_ movement: CurrencyMovement, for profile: ProfileID, transaction: TransactionName, atMs: Int64,
                         kept: Int) -> (amount: Int64, balance: Int64)?
    {
        lists.append(profile, movement.currency, amount: movement.amount, maximum: Self.balanceMax, transaction: transaction,
                     source: movement.source, ref: movement.ref, atMs: atMs, kept: kept)
    }

    mutating func store(_ grant: TermGrant) {
        grants.store(grant)
        if grant.profile == nil {
            pending[grant.purchase, default: []].insert(grant.term)
        } else if pending[grant.purchase]?.remove(grant.term) != nil, pending[grant.purchase]?.isEmpty == true {
            pending[grant.purchase] = nil
        }
    }

    /// Remembers a key's answer, after forgetting the keys more than `keptMs` older than it
    /// (which may include this key's own earlier use: a key is new again once its window is
    /// over). `transaction`: the numbers of `record.transactionID`, when the caller has them.
    mutating func remember(key: String, _ record: IdempotencyRecord, transaction: TransactionName? = nil, keptMs: Int64) {
        keys.remember(key, record, transaction: transaction, keptMs: keptMs)
    }

    /// Forgets the keys more than `keptMs` older than `nowMs` (after every batch: a quiet
    /// ledger lets its keys go too).
    mutating func forgetKeys(olderThan keptMs: Int64, at nowMs: Int64) {
        keys.forget(olderThan: keptMs, at: nowMs)
    }

    /// A deleted profile's balances go with it.
    mutating func remove(_ profile: ProfileID) {
        lists.remove(profile)
    }
}

extension CurrencyLedger: Equatable {
    /// The stored parts (the pending index follows from the term grants).
    public static func == (a: CurrencyLedger, b: CurrencyLedger) -> Bool {
        a.termGrants == b.termGrants && a.keys.count == b.keys.count && a.histories == b.histories
            && a.keys.all.allSatisfy { b.keys.record(forKey: $0.key) == $0.record }
    }
}

extension CurrencyLedger {
    /// A ledger's histories as `[profile: [currency: entries]]`, built as asked: a profile's
    /// lookup reads only its own lists.
    public struct Histories: Sendable, Equatable, Sequence {
        fileprivate let lists: CurrencyHistories

        public subscript(profile: ProfileID) -> [String: [CurrencyEntry]]? {
            let found = lists.lists(of: profile)
            guard !found.isEmpty else { return nil }
            return Dictionary(uniqueKeysWithValues: found.map { ($0.currency, lists.all(of: $0.list)) })
        }

        public var isEmpty: Bool { lists.isEmpty }

        /// Profiles with a history.
        public var count: Int { keys.count }

        public var keys: [ProfileID] { Array(Set(lists.lists.map(\.key.profile))) }

        public var values: [[String: [CurrencyEntry]]] { keys.compactMap { self[$0] } }

        public var dictionary: [ProfileID: [String: [CurrencyEntry]]] {
            var result: [ProfileID: [String: [CurrencyEntry]]] = [:]
            for list in lists.lists {
                result[list.key.profile, default: [:]][lists.codes[list.key.currency]] = lists.all(of: list)
            }
            return result
        }

        public func makeIterator() -> Dictionary<ProfileID, [String: [CurrencyEntry]]>.Iterator {
            dictionary.makeIterator()
        }

        public static func == (a: Histories, b: Histories) -> Bool {
            a.lists.listCount == b.lists.listCount && a.dictionary == b.dictionary
        }
    }
}

extension CurrencyLedger {
    /// A ledger's term grants as `[term: grant]`, built as asked: a term's lookup reads only its
    /// own grant.
    public struct TermGrants: Sendable, Equatable {
        fileprivate let table: TermGrantTable

        public subscript(term: String) -> TermGrant? { table[term] }

        public var isEmpty: Bool { table.count == 0 }
        public var count: Int { table.count }
        public var keys: [String] { table.all.map(\.term) }
        /// In the order the terms were first stored.
        public var values: [TermGrant] { table.all }
        public var dictionary: [String: TermGrant] { Dictionary(uniqueKeysWithValues: table.all.map { ($0.term, $0) }) }

        public static func == (a: TermGrants, b: TermGrants) -> Bool {
            a.count == b.count && a.table.all.allSatisfy { b[$0.term] == $0 }
        }
    }
}
