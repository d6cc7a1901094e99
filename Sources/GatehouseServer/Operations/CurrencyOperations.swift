import GatehouseCore
import GatehouseRuntime
import GatehouseWire

/// Virtual currencies (PROTOCOL.md, "Virtual currencies"): backends credit, debit and read
/// histories; SDKs read balances in the profile document.
enum CurrencyOperations {
    static let all: [Operation] = [transact, history]

    /// `currency.transact`'s number in the op table, for the requests the quick road reads.
    static let transactNumber = Operations.number(of: "currency.transact")

    static let transact = Operation(name: "currency.transact", roles: [.server], body: .project { context throws(GatehouseError) in
        let fields = context.fields
        let lookup = try profileLookup(fields)
        let currency = try fields.string("currency")
        let amount = try fields.int("amount", in: amounts)
        guard amount != 0 else { throw GatehouseError.badField("amount", "must not be 0 (credit > 0, debit < 0)") }
        let key = try fields.string("idempotency_key", length: ProjectState.idempotencyKeyCharacters)
        let reason = try fields.optionalString("reason", length: reasonLengths)
        return transactStep(lookup, currency: currency, amount: amount, key: key, reason: reason)
    })

    private static let amounts = -CurrencyLedger.balanceMax...CurrencyLedger.balanceMax
    private static let reasonLengths = 1...ProjectState.transactionReasonCharactersMax

    /// The step of a `currency.transact` that ``TransactScan`` read, or `nil` when the op's checks
    /// would refuse it: the general road then answers the error.
    static func transactStep(_ scan: TransactScan) -> ProjectStep? {
        guard scan.amount != 0, amounts.contains(scan.amount),
            ProjectState.idempotencyKeyCharacters.contains(scan.idempotencyKey.count),
            scan.reason.map({ reasonLengths.contains($0.count) }) ?? true
        else { return nil }
        let lookup: ProfileLookup
        switch scan.profile {
        case .id(let id): lookup = .id(id)
        case .customerUserID(let customerUserID): lookup = .customerUserID(customerUserID)
        }
        return transactStep(lookup, currency: scan.currency, amount: scan.amount, key: scan.idempotencyKey, reason: scan.reason)
    }

    private static func transactStep(_ lookup: ProfileLookup, currency: String, amount: Int64, key: String, reason: String?)
        -> ProjectStep
    {
        return { project throws(GatehouseError) in
            let outcome = try project.transact(lookup, currency: currency, amount: amount, key: key, reason: reason)
            // Members given as an array, not a dictionary literal: this runs inside the project's
            // actor, where the literal's argument array was one allocation too many.
            return Reply(JSONObject(members: [
                .init(key: "balance", value: .int(outcome.value.balance)),
                .init(key: "transaction_id", value: .string(outcome.value.transactionID)),
            ]), after: outcome.lsn)
        }
    }

    static let history = Operation(name: "currency.history", roles: [.server], body: .project { context throws(GatehouseError) in
        let fields = context.fields
        let lookup = try profileLookup(fields)
        let currency = try fields.string("currency")
        let limit = try fields.optionalInt("limit", in: 1...1000) ?? 100
        return { project throws(GatehouseError) in
            let entries = try project.currencyHistory(lookup, currency: currency, limit: Int(limit))
            return Reply(["entries": .array(entries.value.map(entry))], after: entries.lsn)
        }
    })

    /// `profile_id`, or for a backend `customer_user_id` instead.
    static func profileLookup(_ fields: Fields) throws(GatehouseError) -> ProfileLookup {
        if fields.has("profile_id") { return try ProfileOperations.profileLookup(fields) }
        if fields.has("customer_user_id") { return .customerUserID(try fields.string("customer_user_id")) }
        throw GatehouseError.badField("profile_id", "is required (or customer_user_id)")
    }

    static func entry(_ entry: CurrencyEntry) -> JSONValue {
        [
            "transaction_id": .string(entry.transactionID),
            "amount": .int(entry.amount),
            "balance": .int(entry.balance),
            "source": .string(entry.source.rawValue),
            "ref": .string(entry.ref),
            "at_ms": .int(entry.atMs),
        ]
    }
}
