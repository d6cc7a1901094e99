import GatehouseCore
import GatehouseWire

/// A Checkout Session (`checkout.session`), as `checkout.session.completed` carries it.
public struct StripeCheckoutSession: Sendable, Equatable {
    public enum Mode: Sendable, Hashable, StripeValue {
        case payment, subscription, setup
        case unknown(String)

        init(stripeValue: String) {
            switch stripeValue {
            case "payment": self = .payment
            case "subscription": self = .subscription
            case "setup": self = .setup
            default: self = .unknown(stripeValue)
            }
        }
    }

    public enum Status: Sendable, Hashable, StripeValue {
        case open, complete, expired
        case unknown(String)

        init(stripeValue: String) {
            switch stripeValue {
            case "open": self = .open
            case "complete": self = .complete
            case "expired": self = .expired
            default: self = .unknown(stripeValue)
            }
        }
    }

    public enum PaymentStatus: Sendable, Hashable, StripeValue {
        case paid, unpaid, noPaymentRequired
        case unknown(String)

        init(stripeValue: String) {
            switch stripeValue {
            case "paid": self = .paid
            case "unpaid": self = .unpaid
            case "no_payment_required": self = .noPaymentRequired
            default: self = .unknown(stripeValue)
            }
        }
    }

    public var id: String
    public var mode: Mode
    public var status: Status?
    public var paymentStatus: PaymentStatus
    public var clientReferenceID: String?
    public var metadata: [String: String]
    /// `sub_…` for a subscription Checkout.
    public var subscriptionID: String?
    /// `pi_…` for a payment Checkout.
    public var paymentIntentID: String?
    public var customerID: String?
    /// What the buyer typed at Checkout (`customer_details.email`), else the address the
    /// session was made with (`customer_email`).
    public var email: String?
    /// In the currency's smallest unit.
    public var amountTotal: Int64?
    public var currency: String?
    public var createdSeconds: Int64

    init(_ fields: Fields) throws(GatehouseError) {
        id = try fields.string("id")
        mode = try fields.value("mode", as: Mode.self)
        status = try fields.optionalValue("status", as: Status.self)
        paymentStatus = try fields.value("payment_status", as: PaymentStatus.self)
        clientReferenceID = try fields.optionalString("client_reference_id")
        metadata = try fields.metadata()
        subscriptionID = try fields.optionalExpandableID("subscription")
        paymentIntentID = try fields.optionalExpandableID("payment_intent")
        customerID = try fields.optionalExpandableID("customer")
        if let typed = try fields.optionalObject("customer_details")?.optionalString("email") {
            email = typed
        } else {
            email = try fields.optionalString("customer_email")
        }
        amountTotal = try fields.optionalInt("amount_total")
        currency = try fields.optionalString("currency")
        createdSeconds = try fields.int("created")
    }
}
