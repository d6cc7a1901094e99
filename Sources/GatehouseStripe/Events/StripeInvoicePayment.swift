import GatehouseCore
import GatehouseWire

/// An invoice payment (`invoice_payment`), as `invoice_payment.paid` carries it: in the pinned
/// version, the link from a payment (and so a charge's refund or dispute) to the invoice it paid.
public struct StripeInvoicePayment: Sendable, Equatable {
    public var id: String
    public var invoiceID: String
    /// `payment.payment_intent`.
    public var paymentIntentID: String?
    /// `payment.charge`.
    public var chargeID: String?
    public var amountPaid: Int64?
    /// `open`, `paid` or `canceled`.
    public var status: String

    init(_ fields: Fields) throws(GatehouseError) {
        id = try fields.string("id")
        invoiceID = try fields.expandableID("invoice")
        let payment = try fields.object("payment")
        paymentIntentID = try payment.optionalExpandableID("payment_intent")
        chargeID = try payment.optionalExpandableID("charge")
        amountPaid = try fields.optionalInt("amount_paid")
        status = try fields.string("status")
    }
}
