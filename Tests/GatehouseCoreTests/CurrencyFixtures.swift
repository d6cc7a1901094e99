import GatehouseBase
@testable import GatehouseCore
import Testing

// Fixtures for the currency rules of DESIGN.md, "Virtual currencies": the purchase catalogue of
// PurchaseRulesFixtures.swift with currencies and products that grant them, a world that starts
// from it, and the checks every currency test shares (a balance is the sum of its history, each
// entry has its one event, a term grants once).

/// `mixed_monthly` grants each trigger to its own currency: COINS 100 on `purchase`, GEMS 10 on
/// `renewal`, STARS 1 on `both`. `big_monthly` grants COINS 1,000 on `both`; the consumable
/// `coin_pack` COINS 1,000 on `purchase`. `pro_monthly` and the rest grant nothing.
enum CurrencyCatalogue {
    static let coins = "COINS"
    static let gems = "GEMS"
    static let stars = "STARS"
    static let all = [coins, gems, stars]

    static func config(restore: RestoreMode = .transfer, login: LoginMode = .alias) -> ProjectConfig {
        var config = PurchaseCatalogue.config(restore: restore, login: login)
        config.currencies = all.map { CurrencyDefinition(code: $0) }
        config.products += [
            ProductDefinition(id: "mixed_monthly", type: .subscription, entitlements: ["premium"], grants: [
                CurrencyGrant(currency: coins, amount: 100, on: .purchase),
                CurrencyGrant(currency: gems, amount: 10, on: .renewal),
                CurrencyGrant(currency: stars, amount: 1, on: .both),
            ]),
            ProductDefinition(id: "big_monthly", type: .subscription, entitlements: ["pro"], grants: [
                CurrencyGrant(currency: coins, amount: 1_000, on: .both),
            ]),
            ProductDefinition(id: "coin_pack", type: .consumable, grants: [
                CurrencyGrant(currency: coins, amount: 1_000, on: .purchase),
            ]),
        ]
        return config
    }

    /// A subscription transaction (its first term when `id` is the original id).
    static func subscription(
        _ original: String, id: String? = nil, product: String = "big_monthly", purchasedMs: Int64 = 1_000,
        expiresMs: Int64 = 100_000, token: AppAccountToken? = nil, price: Double = 9.99,
        periodType: SubscriptionPeriodType = .normal, familyShared: Bool = false
    ) -> StoreTransaction {
        StoreTransaction(
            store: PurchaseCatalogue.store, kind: .subscription, transactionID: id ?? original, originalTransactionID: original,
            productID: product, purchasedMs: purchasedMs, expiresMs: expiresMs, token: token, price: price, currency: "USD",
            periodType: periodType, environment: .sandbox, familyShared: familyShared)
    }

    static func oneTime(_ id: String, product: String = "coin_pack", token: AppAccountToken? = nil, price: Double = 4.99,
                        familyShared: Bool = false) -> StoreTransaction
    {
        StoreTransaction(
            store: PurchaseCatalogue.store, kind: .oneTime, transactionID: id, originalTransactionID: id, productID: product,
            purchasedMs: 1_000, expiresMs: 0, token: token, price: price, currency: "USD", periodType: .normal,
            environment: .production, familyShared: familyShared)
    }

    static func renewal(_ notification: String, _ original: String, id: String, purchasedMs: Int64, expiresMs: Int64,
                        price: Double = 9.99) -> StoreNotification
    {
        PurchaseCatalogue.notification(notification, original, atMs: purchasedMs,
                                       .renewal(PurchaseCatalogue.term(id, purchasedMs: purchasedMs, expiresMs: expiresMs, price: price)))
    }

    static func refund(_ notification: String, _ original: String, term: String, fraction: Double = 1, atMs: Int64)
        -> StoreNotification
    {
        PurchaseCatalogue.notification(notification, original, atMs: atMs, .refund(transactionID: term, fraction: fraction))
    }

    static func reversal(_ notification: String, _ original: String, term: String, atMs: Int64) -> StoreNotification {
        PurchaseCatalogue.notification(notification, original, atMs: atMs, .refundReversed(transactionID: term))
    }

    static func revoke(_ notification: String, _ original: String, atMs: Int64) -> StoreNotification {
        PurchaseCatalogue.notification(notification, original, atMs: atMs, .revoke)
    }
}

extension PurchaseWorld {
    /// A world whose config is ``CurrencyCatalogue``'s (its batch is the first one kept, so a
    /// replay of `batches` on `start` rebuilds `state`).
    static func withCurrencies(restore: RestoreMode = .transfer, login: LoginMode = .alias, seed: UInt64 = 11,
                               retention: Retention = .standard) -> PurchaseWorld
    {
        var world = PurchaseWorld(restore: restore, login: login, seed: seed, retention: retention)
        world.apply(ProjectState.ChangeBatch([.configReplaced(CurrencyCatalogue.config(restore: restore, login: login))], atMs: 0))
        return world
    }

    /// The balance of the profile behind an id or alias.
    func balance(_ id: ProfileID, _ currency: String = CurrencyCatalogue.coins) -> Int64 {
        state.currencies.balance(of: state.profiles.canonicalID(id) ?? id, currency)
    }

    func balances(_ id: ProfileID) -> [String: Int64] {
        Dictionary(uniqueKeysWithValues: CurrencyCatalogue.all.map { ($0, balance(id, $0)) })
    }

    /// Oldest first.
    func history(_ id: ProfileID, _ currency: String = CurrencyCatalogue.coins) -> [CurrencyEntry] {
        state.currencies.histories[state.profiles.canonicalID(id) ?? id]?[currency] ?? []
    }

    var currencyEvents: [Event] { events(.virtualCurrencyTransaction) }

    @discardableResult
    mutating func transact(_ id: ProfileID, _ amount: Int64, key: String, reason: String? = nil) throws(GatehouseError)
        -> ProjectState.TransactDecision
    {
        try transact(id, CurrencyCatalogue.coins, amount, key: key, reason: reason)
    }

    @discardableResult
    mutating func transact(_ id: ProfileID, _ currency: String, _ amount: Int64, key: String,
                           reason: String? = nil) throws(GatehouseError) -> ProjectState.TransactDecision
    {
        let decision = try state.transact(profile: id, currency: currency, amount: amount, key: key, reason: reason, nowMs: nowMs)
        apply(decision.batch)
        return decision
    }

    /// What breaks the ledger's invariants, in words (empty: nothing):
    /// - every history runs from 0: each entry's balance is the one before plus its amount, within
    ///   0…max, never a zero amount; the balance is the last entry's;
    /// - histories belong to live profiles only (a merged or deleted profile's went with it);
    /// - each entry of a live profile has exactly one `VIRTUAL_CURRENCY_TRANSACTION` event with
    ///   its id, profile, currency, amount, balance, source and ref, and each such event of a live
    ///   profile has its entry;
    /// - a term grants a currency at most once (one `purchase`/`renewal` entry per currency and ref);
    /// - what refunds took back of a term never passes what they owed, nor that what was granted;
    ///   nothing is taken back of a grant still waiting for an owner.
    /// `exactTermSums` false: where the maximum cut a claim's credit (a known limit, see
    /// CurrencyRefundTests), a term's events may have moved less than its line says, never more.
    /// `historiesOnly`: just the first two (cheap enough for every step of a long run).
    func currencyProblems(exactTermSums: Bool = true, historiesOnly: Bool = false) -> [String] {
        var problems: [String] = []
        let ledger = state.currencies
        var entries: [String: (ProfileID, String, CurrencyEntry)] = [:]
        var grantRefs: [String: Int] = [:]
        for (profile, byCurrency) in ledger.histories {
            if state.profiles.profile(profile)?.id != profile { problems.append("history of a gone profile \(profile)") }
            for (currency, history) in byCurrency {
                var running: Int64 = 0
                for entry in history {
                    if entry.amount == 0 { problems.append("\(profile) \(currency): a zero entry \(entry.transactionID)") }
                    running += entry.amount
                    if entry.balance != running {
                        problems.append("\(profile) \(currency): \(entry.transactionID) balance \(entry.balance), running sum \(running)")
                    }
                    if !(0...CurrencyLedger.balanceMax).contains(entry.balance) {
                        problems.append("\(profile) \(currency): balance \(entry.balance) out of range")
                    }
                    if entries.updateValue((profile, currency, entry), forKey: entry.transactionID) != nil {
                        problems.append("transaction id \(entry.transactionID) used twice")
                    }
                }
                if ledger.balance(of: profile, currency) != running {
                    problems.append("\(profile) \(currency): balance \(ledger.balance(of: profile, currency)), history sums to \(running)")
                }
            }
        }
        if historiesOnly { return problems }
        // From the feed, which keeps what merges and deletes took out of histories: per currency
        // and term, the grant events (at most one) and what all events of the term moved.
        var moved: [String: Int64] = [:]
        var seen = Set<String>()
        for event in currencyEvents {
            if case .string(let source)? = event.detail("source"), case .string(let currency)? = event.detail("currency"),
               case .string(let ref)? = event.detail("ref"), case .int(let amount)? = event.detail("amount"),
               ["purchase", "renewal", "refund", "refund_reversed", "revoke"].contains(source)
            {
                if source == "purchase" || source == "renewal" { grantRefs["\(currency) \(ref)", default: 0] += 1 }
                moved["\(currency) \(ref)", default: 0] += amount
            }
            guard case .string(let id)? = event.detail("transaction_id") else {
                problems.append("\(event.id) has no transaction_id")
                continue
            }
            if !seen.insert(id).inserted { problems.append("two events for \(id)") }
            guard let (profile, currency, entry) = entries[id] else {
                if let owner = event.profileID, state.profiles.profile(owner)?.id == owner {
                    // Only a merged or deleted profile's entries go.
                    problems.append("\(event.id): no entry \(id) in \(owner)'s history")
                }
                continue
            }
            let expected: [String: EventDetail.Value] = [
                "currency": .string(currency), "amount": .int(entry.amount), "balance": .int(entry.balance),
                "source": .string(entry.source.rawValue), "ref": .string(entry.ref),
            ]
            for (name, value) in expected where event.detail(name) != value {
                problems.append("\(event.id) \(name): \(String(describing: event.detail(name))), entry says \(value)")
            }
            if event.profileID != profile { problems.append("\(event.id) names \(String(describing: event.profileID)), not \(profile)") }
            if event.atMs != entry.atMs { problems.append("\(event.id) at \(event.atMs), entry at \(entry.atMs)") }
        }
        for id in entries.keys where !seen.contains(id) { problems.append("entry \(id) has no event") }
        for (ref, count) in grantRefs where count > 1 { problems.append("term \(ref) granted \(count) times") }
        for grant in ledger.termGrants.values {
            for line in grant.lines {
                // Taken back may pass owed back where a reversal could not give it back (the
                // maximum, a deleted profile), never what was granted.
                if !(0 <= line.takenBack && line.takenBack <= line.granted && 0 <= line.owedBack && line.owedBack <= line.granted) {
                    problems.append("\(grant.term) \(line.currency): taken \(line.takenBack), owed \(line.owedBack), granted \(line.granted)")
                }
                if grant.profile == nil, line.takenBack != 0 { problems.append("\(grant.term): taken back while pending") }
                // What the term's events moved is what it granted less what was taken back.
                let ref = "\(line.currency) \(grant.term.drop { $0 != ":" }.dropFirst())"
                let net = moved[ref] ?? 0
                if grant.profile != nil, exactTermSums ? net != line.granted - line.takenBack : net > line.granted - line.takenBack {
                    problems.append("\(grant.term) \(line.currency): events moved \(net), granted \(line.granted) less taken \(line.takenBack)")
                }
            }
        }
        return problems
    }

    /// The state the kept batches rebuild from `start`.
    var replayed: ProjectState {
        var state = start
        for batch in batches { state.apply(batch) }
        return state
    }
}
