public import GatehouseCore

/// What `currency.transact` answers.
public struct TransactOutcome: Sendable {
    public var transactionID: String
    public var balance: Int64
    /// The key was answered before: nothing changed.
    public var replayed: Bool
}

/// Currency ops, inside the project's actor: decide (pure rules in GatehouseCore), log, apply.
extension Project {
    public func transact(_ lookup: ProfileLookup, currency: String, amount: Int64, key: String, reason: String?)
        throws(GatehouseError) -> Committed<TransactOutcome>
    {
        let profile = try resolveID(lookup)
        let now = nowMs
        var decision = try reading { state throws(GatehouseError) in
            try state.transact(profile: profile, currency: currency, amount: amount, key: key, reason: reason, nowMs: now)
        }
        // A replay answers once the first answer's change is durable (it may still be in flight).
        // The change is moved out of the decision, not copied: the answer needs none of it.
        let lsn = try commitIfAny(decision.change.take(), showing: decision.profileID)
        return Committed(TransactOutcome(transactionID: decision.transactionID, balance: decision.balance,
                                         replayed: decision.replayed), lsn: lsn)
    }

    public func currencyHistory(_ lookup: ProfileLookup, currency: String, limit: Int) throws(GatehouseError)
        -> Committed<[CurrencyEntry]>
    {
        let profile = try resolveID(lookup)
        let (history, canonical) = try reading { state throws(GatehouseError) in
            (try state.currencyHistory(profile: profile, currency: currency, limit: limit), state.profiles.canonicalID(profile) ?? profile)
        }
        return Committed(history, lsn: lsnShowing(canonical))
    }
}
