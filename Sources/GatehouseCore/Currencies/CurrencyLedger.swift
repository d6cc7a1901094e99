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
public struct CurrencyLedger: Sendable {
    public static let balanceMax: Int64 = 2_000_000_000

    /// Per profile, per currency: every change, oldest first.
    public private(set) var histories: [ProfileID: [String: [CurrencyEntry]]] = [:]
    public private(set) var termGrants: [String: TermGrant] = [:]
    /// Keys answered in the last ``idempotencyKeptMs``, by key.
    public private(set) var idempotency: [String: IdempotencyRecord] = [:]
    /// Those keys oldest first (derived), so the oldest are forgotten without a scan.
    private var idempotencyOrder: [(key: String, atMs: Int64)] = []
    private var idempotencyHead = 0

    /// How long a `currency.transact` key is remembered: a retry within it answers the first
    /// result; after it, the key is new again (Stripe keeps its keys a day).
    public static let idempotencyKeptMs: Int64 = 30 * 86_400_000
    /// The terms of each purchase whose grants wait for an owner (derived from `termGrants`).
    private var pending: [PurchaseKey: Set<String>] = [:]

    public init() {}

    /// Rebuilt from stored parts.
    public init(histories: [ProfileID: [String: [CurrencyEntry]]], termGrants: [TermGrant], idempotency: [String: IdempotencyRecord]) {
        self.histories = histories
        for grant in termGrants { store(grant) }
        self.idempotency = idempotency
        idempotencyOrder = idempotency.sorted { ($0.value.atMs, $0.key) < ($1.value.atMs, $1.key) }.map { ($0.key, $0.value.atMs) }
    }

    public func balance(of profile: ProfileID, _ currency: String) -> Int64 {
        histories[profile]?[currency]?.last?.balance ?? 0
    }

    /// Newest first, at most `limit`.
    public func history(of profile: ProfileID, _ currency: String, limit: Int) -> [CurrencyEntry] {
        Array((histories[profile]?[currency] ?? []).suffix(limit).reversed())
    }

    /// Term grants of one purchase still waiting for an owner, in term order.
    func pendingGrants(of purchase: PurchaseKey) -> [TermGrant] {
        (pending[purchase] ?? []).sorted().compactMap { termGrants[$0] }
    }

    // MARK: Changes (called by ProjectState.apply only)

    /// Appends an entry and answers it; `nil` when nothing moves. Rules decide amounts that fit;
    /// a credit made in the same batch by `apply` itself (a claim's pending grants, a merge) can
    /// leave less room than a rule saw, so the amount is held within 0…max here, and the entry
    /// records what really moved: a balance is always the sum of its history.
    mutating func record(_ movement: CurrencyMovement, for profile: ProfileID, transactionID: String, atMs: Int64)
        -> CurrencyEntry?
    {
        func entry(after before: Int64) -> CurrencyEntry? {
            let after = min(max(before + movement.amount, 0), Self.balanceMax)
            guard after != before else { return nil }
            return CurrencyEntry(transactionID: transactionID, amount: after - before, balance: after,
                                 source: movement.source, ref: movement.ref, atMs: atMs)
        }
        // The history that exists is changed in place, found once: reading the balance first
        // and appending after would hash twice and copy the last entry on the way.
        if let profileIndex = histories.index(forKey: profile),
            let currencyIndex = histories.values[profileIndex].index(forKey: movement.currency)
        {
            return Self.append(to: &histories.values[profileIndex].values[currencyIndex], entry)
        }
        guard let first = entry(after: 0) else { return nil }
        histories[profile, default: [:]][movement.currency] = [first]
        return first
    }

    private static func append(to history: inout [CurrencyEntry], _ entry: (Int64) -> CurrencyEntry?) -> CurrencyEntry? {
        guard let next = entry(history.last?.balance ?? 0) else { return nil }
        history.append(next)
        return next
    }

    mutating func store(_ grant: TermGrant) {
        termGrants[grant.term] = grant
        if grant.profile == nil {
            pending[grant.purchase, default: []].insert(grant.term)
        } else if pending[grant.purchase]?.remove(grant.term) != nil, pending[grant.purchase]?.isEmpty == true {
            pending[grant.purchase] = nil
        }
    }

    mutating func remember(key: String, _ record: IdempotencyRecord) {
        guard idempotency.updateValue(record, forKey: key) == nil else { return }
        idempotencyOrder.append((key, record.atMs))
        // Forget keys older than the window, oldest first, as new ones arrive. The order keeps
        // each key's time, so the common case (nothing to forget) costs no lookup.
        while idempotencyHead < idempotencyOrder.count,
            record.atMs - idempotencyOrder[idempotencyHead].atMs > Self.idempotencyKeptMs
        {
            let oldest = idempotencyOrder[idempotencyHead].key
            guard let stored = idempotency[oldest], record.atMs - stored.atMs > Self.idempotencyKeptMs else { break }
            idempotency[oldest] = nil
            idempotencyHead += 1
        }
        if idempotencyHead >= 1024, idempotencyHead * 2 >= idempotencyOrder.count {
            idempotencyOrder.removeFirst(idempotencyHead)
            idempotencyHead = 0
        }
    }

    /// A deleted profile's balances go with it.
    mutating func remove(_ profile: ProfileID) {
        histories[profile] = nil
    }
}

extension CurrencyLedger: Equatable {
    /// The stored parts (the pending index follows from the term grants).
    public static func == (a: CurrencyLedger, b: CurrencyLedger) -> Bool {
        a.histories == b.histories && a.termGrants == b.termGrants && a.idempotency == b.idempotency
    }
}
