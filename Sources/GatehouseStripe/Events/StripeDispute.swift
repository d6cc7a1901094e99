import GatehouseCore
import GatehouseWire

/// A dispute (`dispute`), as `charge.dispute.*` carries it.
public struct StripeDispute: Sendable, Equatable {
    public enum Status: Sendable, Hashable, StripeValue {
        case warningNeedsResponse, warningUnderReview, warningClosed, needsResponse, underReview, won, lost, prevented
        case unknown(String)

        init(stripeValue: String) {
            switch stripeValue {
            case "warning_needs_response": self = .warningNeedsResponse
            case "warning_under_review": self = .warningUnderReview
            case "warning_closed": self = .warningClosed
            case "needs_response": self = .needsResponse
            case "under_review": self = .underReview
            case "won": self = .won
            case "lost": self = .lost
            case "prevented": self = .prevented
            default: self = .unknown(stripeValue)
            }
        }
    }

    public var id: String
    public var chargeID: String
    public var paymentIntentID: String?
    /// The disputed amount, in the currency's smallest unit.
    public var amount: Int64
    public var status: Status

    init(_ fields: Fields) throws(GatehouseError) {
        id = try fields.string("id")
        chargeID = try fields.expandableID("charge")
        paymentIntentID = try fields.optionalExpandableID("payment_intent")
        amount = try fields.int("amount")
        status = try fields.value("status", as: Status.self)
    }
}
