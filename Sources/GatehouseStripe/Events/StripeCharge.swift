import GatehouseCore
import GatehouseWire

/// A charge (`charge`), as `charge.refunded` carries it. The pinned version gives a charge no
/// `invoice`: an ``StripeInvoicePayment`` links the two.
public struct StripeCharge: Sendable, Equatable {
    public var id: String
    /// In the currency's smallest unit, as `amountRefunded`.
    public var amount: Int64
    public var amountRefunded: Int64
    /// Whether the whole amount has been refunded.
    public var refunded: Bool
    public var currency: String
    public var paymentIntentID: String?
    public var customerID: String?

    init(_ fields: Fields) throws(GatehouseError) {
        id = try fields.string("id")
        amount = try fields.int("amount")
        amountRefunded = try fields.int("amount_refunded")
        refunded = try fields.bool("refunded")
        currency = try fields.string("currency")
        paymentIntentID = try fields.optionalExpandableID("payment_intent")
        customerID = try fields.optionalExpandableID("customer")
    }
}
