/// The stable error vocabulary of Gatehouse. Each case is one wire `error.code` string
/// (PROTOCOL.md, "Error codes"); clients and tests match on these, never on messages.
public enum ErrorCode: String, Sendable, CaseIterable, Hashable {
    case badJSON = "bad_json"
    case lineTooLong = "line_too_long"
    case badRequest = "bad_request"
    case unknownOp = "unknown_op"
    case unauthenticated
    case unauthorized
    case forbidden
    case notFound = "not_found"
    case conflict
    case invalidCustomerUserID = "invalid_customer_user_id"
    case profileAnonymous = "profile_anonymous"
    case tokenInUse = "token_in_use"
    case ownedByOther = "owned_by_other"
    case insufficientFunds = "insufficient_funds"
    case invalidSignature = "invalid_signature"
    case wrongApp = "wrong_app"
    case invalidToken = "invalid_token"
    case purchaseBelongsToOtherUser = "purchase_belongs_to_other_user"
    case expired
    case overloaded
    case readOnly = "read_only"
    case `internal`
}

extension ErrorCode {
    /// Whether an error of this code may show the project's data (a balance, who holds a token,
    /// that a key or a purchase is known): such an error waits, like a read, until what it may
    /// show is durable. `read_only`, `overloaded` and `internal` describe the server, not the
    /// data (the log refusing a write, a limit, a bug), and are answered at once, also when the
    /// log has failed and nothing will become durable again.
    public var mayShowData: Bool {
        switch self {
        case .readOnly, .overloaded, .internal: false
        default: true
        }
    }
}
