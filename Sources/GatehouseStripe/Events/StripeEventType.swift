/// The event types Gatehouse acts on; any other type parses as ``StripeEvent/Object/unused``.
public enum StripeEventType: String, Sendable, CaseIterable {
    case checkoutSessionCompleted = "checkout.session.completed"
    case invoicePaid = "invoice.paid"
    case customerSubscriptionCreated = "customer.subscription.created"
    case customerSubscriptionUpdated = "customer.subscription.updated"
    case customerSubscriptionDeleted = "customer.subscription.deleted"
    case chargeRefunded = "charge.refunded"
    case chargeDisputeCreated = "charge.dispute.created"
    case chargeDisputeUpdated = "charge.dispute.updated"
    case chargeDisputeClosed = "charge.dispute.closed"
    case invoicePaymentPaid = "invoice_payment.paid"

    /// The `object` name of what `data.object` holds for this type.
    public var objectKind: String {
        switch self {
        case .checkoutSessionCompleted: "checkout.session"
        case .invoicePaid: "invoice"
        case .customerSubscriptionCreated, .customerSubscriptionUpdated, .customerSubscriptionDeleted: "subscription"
        case .chargeRefunded: "charge"
        case .chargeDisputeCreated, .chargeDisputeUpdated, .chargeDisputeClosed: "dispute"
        case .invoicePaymentPaid: "invoice_payment"
        }
    }
}
