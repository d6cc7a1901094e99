// The currency rules of DESIGN.md, "Virtual currencies": backends' transactions here; the
// grants of paid store terms and their claw-backs are decided with the purchase that carries
// them (``CurrencyGrants``), in the same batch.

extension ProjectState {
    /// What `currency.transact` decided and answers.
    public struct TransactDecision: Sendable, Equatable {
        /// What a new key changes; `nil` when the key was answered before (a replay changes
        /// nothing).
        public var change: TransactChange?
        public var profileID: ProfileID
        public var transactionID: String
        public var balance: Int64
        public var replayed: Bool
        /// When it was decided (the time of a replay's empty ``batch``).
        var atMs: Int64

        /// ``change`` as every rule's batch is (empty for a replay).
        public var batch: ChangeBatch { change?.batch ?? ChangeBatch([], atMs: atMs) }
    }

    /// The batch of a `currency.transact` with a new key, which always has one shape: the
    /// balance change, then the key's record. It holds the two changes' parts as they are, so
    /// the actor logs and applies it (``apply(_:)-(TransactChange)``) without building the
    /// general batch: each of its ``Change`` values was copied out and destroyed at every step
    /// (a retain and release of everything it carries), and the key's transaction id parsed back
    /// into its numbers.
    /// ``batch`` is the general form, which replay reads back from the log: it must log the
    /// same bytes and leave the same state (the tests hold both paths to it).
    public struct TransactChange: Sendable, Equatable {
        public let profile: ProfileID
        /// The balance change, its `ref` the key.
        public let movement: CurrencyMovement
        public let key: String
        /// The key's answer: `vct_<sequence>_0` (the batch's only balance change) and the
        /// balance after it.
        public let record: IdempotencyRecord
        /// The numbers of `record.transactionID`.
        let transaction: TransactionName

        public var atMs: Int64 { record.atMs }

        public var batch: ChangeBatch {
            ChangeBatch([.balanceChanged(profile, movement), .idempotencyRecorded(key, record)], atMs: atMs)
        }
    }

    /// Longest idempotency key and reason.
    public static let idempotencyKeyCharacters = 1...128
    public static let transactionReasonCharactersMax = 500

    /// Credits (`amount` > 0) or debits a profile's balance, idempotent by `key` in the project:
    /// the same key with the same profile, currency, amount and reason answers the first result
    /// again and changes nothing; with anything else, `conflict`. A debit larger than the
    /// balance is `insufficient_funds` (with the balance) and a credit past the maximum
    /// `bad_request`; neither changes anything nor uses up the key.
    public func transact(
        profile id: ProfileID, currency: String, amount: Int64, key: String, reason: String?, nowMs: Int64
    ) throws(GatehouseError) -> TransactDecision {
        let profile = try resolveProfileID(id)
        try requireCurrency(currency)
        guard amount != 0, (-CurrencyLedger.balanceMax...CurrencyLedger.balanceMax).contains(amount) else {
            throw .badField("amount", "must be a non-zero integer from -\(CurrencyLedger.balanceMax) to \(CurrencyLedger.balanceMax)")
        }
        // A key is remembered for the window (PROTOCOL.md: 24 hours); once it is over, the key is
        // new again, even if the ledger has not forgotten it yet.
        if let earlier = currencies.idempotencyRecord(forKey: key), nowMs - earlier.atMs <= retention.idempotencyMs {
            // The first request's profile may since have merged into another: compare what it is now.
            let earlierProfile = profiles.canonicalID(earlier.profile) ?? earlier.profile
            guard earlierProfile == profile, earlier.currency == currency, earlier.amount == amount, earlier.reason == reason else {
                throw GatehouseError(.conflict, "idempotency_key \(key) was used for another request")
            }
            return TransactDecision(change: nil, profileID: profile, transactionID: earlier.transactionID, balance: earlier.balance,
                                    replayed: true, atMs: nowMs)
        }
        let balance = currencies.balance(of: profile, currency)
        let after = balance + amount
        guard after >= 0 else {
            throw GatehouseError(.insufficientFunds, "the balance of \(currency) is \(balance)", details: [.balance(balance)])
        }
        guard after <= CurrencyLedger.balanceMax else {
            throw .badField("amount", "the balance would pass \(CurrencyLedger.balanceMax)")
        }
        // The batch's only movement: apply names it `vct_<next sequence>_0`.
        let transaction = TransactionName(sequence: sequence + 1, index: 0)
        let transactionID = CurrencyLedger.transactionID(sequence: transaction.sequence, index: 0)
        let movement = CurrencyMovement(currency: currency, amount: amount, source: .transaction, ref: key, reason: reason)
        let record = IdempotencyRecord(profile: profile, currency: currency, amount: amount, reason: reason,
                                       transactionID: transactionID, balance: after, atMs: nowMs)
        let change = TransactChange(profile: profile, movement: movement, key: key, record: record, transaction: transaction)
        return TransactDecision(change: change, profileID: profile, transactionID: transactionID, balance: after, replayed: false,
                                atMs: nowMs)
    }

    /// A balance's history, newest first.
    public func currencyHistory(profile id: ProfileID, currency: String, limit: Int) throws(GatehouseError) -> [CurrencyEntry] {
        let profile = try resolveProfileID(id)
        try requireCurrency(currency)
        return currencies.history(of: profile, currency, limit: limit)
    }

    /// Every currency of the config with the profile's balance, in config order.
    public func balances(of id: ProfileID) -> [CurrencyBalance] {
        let profile = profiles.canonicalID(id) ?? id
        return config.currencies.map { CurrencyBalance(code: $0.code, balance: currencies.balance(of: profile, $0.code)) }
    }

    func requireCurrency(_ currency: String) throws(GatehouseError) {
        guard config.currencies.contains(where: { $0.code == currency }) else {
            throw .notFound("currency \(currency) in the project's config")
        }
    }
}

/// One currency of a profile document.
public struct CurrencyBalance: Sendable, Equatable {
    public var code: String
    public var balance: Int64

    public init(code: String, balance: Int64) {
        self.code = code
        self.balance = balance
    }
}

extension CurrencyLedger {
    /// The id of the `index`-th balance change of the batch numbered `sequence`:
    /// `vct_<sequence>_<index>`.
    public static func transactionID(sequence: UInt64, index: Int) -> String {
        TransactionName.spell(sequence: sequence, index: UInt32(index))
    }
}

/// How a new paid term grants (DESIGN.md, "Virtual currencies", rules 1–3 and the triggers).
public enum TermKind: Sendable, Equatable {
    /// The first paid term of a subscription (also after a free trial), or a one-time purchase:
    /// grants `on: purchase` and `both`.
    case purchase
    /// A later auto-renewed term: grants `on: renewal` and `both`.
    case renewal
    /// A resubscribe after a lapse: `on: purchase` and `both`, and a currency whose grant is
    /// `on: renewal` gets that instead (never both: one grant per currency per product).
    case resubscribe

    /// The grants of `product` this kind of term fires, in currency order.
    public func grants(of product: ProductDefinition) -> [CurrencyGrant] {
        product.grants.filter { grant in
            switch self {
            case .purchase: grant.on.firesOnPurchase
            case .renewal: grant.on.firesOnRenewal
            case .resubscribe: true
            }
        }.sorted { $0.currency < $1.currency }
    }

    /// The history's source for its grants.
    var source: CurrencySource { self == .renewal ? .renewal : .purchase }
}
