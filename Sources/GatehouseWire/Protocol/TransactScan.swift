public import GatehouseCore

/// A purpose-built reader for the backend's hot write, `currency.transact` naming a profile by
/// id: `{"id":…,"op":"currency.transact","profile_id":"gh_…","currency":"…","amount":<integer>,
/// "idempotency_key":"…","reason":"…"}` with `id` and `reason` optional, the members in any
/// order and spaces allowed around the punctuation. Like ``SyncScan`` it only recognizes: any
/// other shape (escapes, other members, duplicates, `customer_user_id`, a non-integer amount)
/// answers `nil`, and the line takes the general parser's road. So does a `profile_id` that is
/// not a profile id. The rest of what it reads is not yet checked against the op's rules
/// (lengths, ranges); the caller does that, or takes the general road for the error.
public struct TransactScan: Sendable {
    /// The request's `id` as the general parser reads it (`null` when there is none).
    public let id: JSONValue
    public let profileID: ProfileID
    public let currency: String
    public let amount: Int64
    public let idempotencyKey: String
    public let reason: String?

    public static func scan(_ line: UnsafeRawBufferPointer) -> TransactScan? {
        var reader = PlainJSONReader(bytes: line)
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var id: JSONValue?
        var profile: Range<Int>?
        var currency: Range<Int>?
        var amount: Int64?
        var key: Range<Int>?
        var reason: Range<Int>?
        var sawOp = false
        repeat {
            guard let name = reader.plainString(), reader.take(UInt8(ascii: ":")) else { return nil }
            if reader.matches(name, Key.id) {
                guard id == nil, let value = reader.requestID() else { return nil }
                id = value.value
            } else if reader.matches(name, Key.op) {
                guard !sawOp, let value = reader.plainString(), reader.matches(value, Key.transact) else { return nil }
                sawOp = true
            } else if reader.matches(name, Key.profileID) {
                guard profile == nil, let value = reader.plainString() else { return nil }
                profile = value
            } else if reader.matches(name, Key.currency) {
                guard currency == nil, let value = reader.plainString() else { return nil }
                currency = value
            } else if reader.matches(name, Key.amount) {
                guard amount == nil, let value = reader.signedInteger() else { return nil }
                amount = value
            } else if reader.matches(name, Key.idempotencyKey) {
                guard key == nil, let value = reader.plainString() else { return nil }
                key = value
            } else if reader.matches(name, Key.reason) {
                guard reason == nil, let value = reader.plainString() else { return nil }
                reason = value
            } else {
                return nil
            }
        } while reader.take(UInt8(ascii: ","))
        guard reader.take(UInt8(ascii: "}")), reader.atEndAfterSpaces, sawOp, let profile, let currency, let amount, let key,
            let profileID = ProfileID(utf8: UnsafeRawBufferPointer(rebasing: line[profile]))
        else { return nil }
        return TransactScan(
            id: id ?? .null, profileID: profileID, currency: reader.string(currency), amount: amount,
            idempotencyKey: reader.string(key), reason: reason.map { reader.string($0) })
    }

    private enum Key {
        static let id = Array("id".utf8)
        static let op = Array("op".utf8)
        static let transact = Array("currency.transact".utf8)
        static let profileID = Array("profile_id".utf8)
        static let currency = Array("currency".utf8)
        static let amount = Array("amount".utf8)
        static let idempotencyKey = Array("idempotency_key".utf8)
        static let reason = Array("reason".utf8)
    }
}
