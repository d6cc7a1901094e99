public import GatehouseCore

/// A purpose-built reader for the backend's hot write, `currency.transact`:
/// `{"id":…,"op":"currency.transact","profile_id":"gh_…","currency":"…","amount":<integer>,
/// "idempotency_key":"…","reason":"…"}`, in every shape the protocol allows, as ``SyncScan``
/// reads `sync`: `id` and `reason` optional, `customer_user_id` instead of `profile_id` (which
/// counts when both are there, as on the general road), members in any order, other members
/// ignored, escapes, whitespace, a number in any form whose value is an integer, a repeated
/// member counting with its last value.
///
/// It answers `nil` for a line the general road would refuse or read otherwise, which the
/// general road then answers; so it does for a `profile_id` that is not a profile id. What it
/// reads is not yet checked against the op's rules (lengths, ranges): the caller does that,
/// or takes the general road for the error.
public struct TransactScan: Sendable {
    /// The request's `id` as the general parser reads it (`null` when there is none).
    public let id: JSONValue
    public let profile: Profile
    public let currency: String
    public let amount: Int64
    public let idempotencyKey: String
    public let reason: String?

    /// Whose balance: `profile_id`, or a backend's `customer_user_id`.
    public enum Profile: Sendable, Equatable {
        case id(ProfileID)
        case customerUserID(String)
    }

    public static func scan(_ line: UnsafeRawBufferPointer) -> TransactScan? {
        typealias Text = QuickJSONReader.Text
        var reader = QuickJSONReader(bytes: line)
        // Every line is offered to this scanner first, and most are syncs: one that names no
        // `currency.transact` as it is, and has no escape to spell it with, is over before it is read.
        guard reader.contains(Key.transact) || reader.contains("\\") else { return nil }
        var amount: Int64?
        var (profileID, customerUserID, currency, key, reason): (Text?, Text?, Text?, Text?, Text?)
        let id = reader.readRequest(op: Key.transact) { reader, name in
            if reader.matches(name, Key.profileID) { return reader.readText(into: &profileID) }
            if reader.matches(name, Key.customerUserID) { return reader.readText(into: &customerUserID) }
            if reader.matches(name, Key.currency) { return reader.readText(into: &currency) }
            if reader.matches(name, Key.amount) { return reader.readInteger(into: &amount) }
            if reader.matches(name, Key.idempotencyKey) { return reader.readText(into: &key) }
            if reader.matches(name, Key.reason) { return reader.readText(into: &reason) }
            return reader.skipValue()
        }
        guard let id, let currency, let amount, let key else { return nil }
        let profile: Profile
        if let profileID {
            guard let parsed = ProfileID(profileID, in: reader) else { return nil }
            profile = .id(parsed)
        } else if let customerUserID {
            profile = .customerUserID(reader.string(customerUserID))
        } else {
            return nil
        }
        return TransactScan(
            id: reader.value(of: id), profile: profile, currency: reader.string(currency), amount: amount,
            idempotencyKey: reader.string(key), reason: reason.map { reader.string($0) })
    }

    private enum Key {
        static let transact: StaticString = "currency.transact"
        static let profileID: StaticString = "profile_id"
        static let customerUserID: StaticString = "customer_user_id"
        static let currency: StaticString = "currency"
        static let amount: StaticString = "amount"
        static let idempotencyKey: StaticString = "idempotency_key"
        static let reason: StaticString = "reason"
    }
}
