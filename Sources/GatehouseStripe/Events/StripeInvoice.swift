import GatehouseCore
import GatehouseWire

/// An invoice (`invoice`), as `invoice.paid` carries it: one paid term of a subscription.
public struct StripeInvoice: Sendable, Equatable {
    /// A line of the invoice: what was billed, for which period.
    public struct Line: Sendable, Equatable {
        /// `price_…` (`pricing.price_details.price`).
        public var priceID: String?
        /// `prod_…` (`pricing.price_details.product`).
        public var productID: String?
        public var periodStartSeconds: Int64
        public var periodEndSeconds: Int64

        public init(priceID: String?, productID: String?, periodStartSeconds: Int64, periodEndSeconds: Int64) {
            self.priceID = priceID
            self.productID = productID
            self.periodStartSeconds = periodStartSeconds
            self.periodEndSeconds = periodEndSeconds
        }

        init(_ fields: Fields) throws(GatehouseError) {
            let details = try fields.optionalObject("pricing")?.optionalObject("price_details")
            priceID = try details?.optionalExpandableID("price")
            productID = try details?.optionalExpandableID("product")
            let period = try fields.object("period")
            periodStartSeconds = try period.int("start")
            periodEndSeconds = try period.int("end")
        }
    }

    public var id: String
    /// `draft`, `open`, `paid`, `uncollectible` or `void`.
    public var status: String?
    public var customerID: String?
    public var email: String?
    /// In the currency's smallest unit.
    public var amountPaid: Int64
    public var currency: String
    /// `subscription_create` for the first term, `subscription_cycle` for a renewal, …
    public var billingReason: String?
    /// `parent.subscription_details.subscription`: the pinned version's only link to it.
    public var subscriptionID: String?
    /// The subscription's metadata as it was when the invoice was finalized.
    public var subscriptionMetadata: [String: String]
    public var lines: [Line]
    public var createdSeconds: Int64

    init(_ fields: Fields) throws(GatehouseError) {
        id = try fields.string("id")
        status = try fields.optionalString("status")
        customerID = try fields.optionalExpandableID("customer")
        email = try fields.optionalString("customer_email")
        amountPaid = try fields.int("amount_paid")
        currency = try fields.string("currency")
        billingReason = try fields.optionalString("billing_reason")
        let details = try fields.optionalObject("parent")?.optionalObject("subscription_details")
        subscriptionID = try details?.optionalExpandableID("subscription")
        subscriptionMetadata = try details?.metadata() ?? [:]
        lines = []
        for line in try fields.listData("lines") { lines.append(try Line(line)) }
        createdSeconds = try fields.int("created")
    }
}
