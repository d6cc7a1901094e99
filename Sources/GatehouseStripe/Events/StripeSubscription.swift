import GatehouseCore
import GatehouseWire

/// A subscription (`subscription`), as `customer.subscription.*` carries it. In the pinned
/// version the billing period lives on each item, not on the subscription.
public struct StripeSubscription: Sendable, Equatable {
    public enum Status: Sendable, Hashable, StripeValue {
        case incomplete, incompleteExpired, trialing, active, pastDue, canceled, unpaid, paused
        case unknown(String)

        init(stripeValue: String) {
            switch stripeValue {
            case "incomplete": self = .incomplete
            case "incomplete_expired": self = .incompleteExpired
            case "trialing": self = .trialing
            case "active": self = .active
            case "past_due": self = .pastDue
            case "canceled": self = .canceled
            case "unpaid": self = .unpaid
            case "paused": self = .paused
            default: self = .unknown(stripeValue)
            }
        }
    }

    /// A subscription item: one price and its current period.
    public struct Item: Sendable, Equatable {
        public var priceID: String
        public var productID: String?
        public var currentPeriodStartSeconds: Int64
        public var currentPeriodEndSeconds: Int64

        public init(priceID: String, productID: String?, currentPeriodStartSeconds: Int64, currentPeriodEndSeconds: Int64) {
            self.priceID = priceID
            self.productID = productID
            self.currentPeriodStartSeconds = currentPeriodStartSeconds
            self.currentPeriodEndSeconds = currentPeriodEndSeconds
        }

        init(_ fields: Fields) throws(GatehouseError) {
            let price = try fields.object("price")
            priceID = try price.string("id")
            productID = try price.optionalExpandableID("product")
            currentPeriodStartSeconds = try fields.int("current_period_start")
            currentPeriodEndSeconds = try fields.int("current_period_end")
        }
    }

    public var id: String
    public var customerID: String?
    public var status: Status
    public var cancelAtPeriodEnd: Bool
    public var cancelAtSeconds: Int64?
    public var canceledAtSeconds: Int64?
    public var endedAtSeconds: Int64?
    public var latestInvoiceID: String?
    public var metadata: [String: String]
    public var items: [Item]
    public var trialEndSeconds: Int64?
    public var startDateSeconds: Int64

    init(_ fields: Fields) throws(GatehouseError) {
        id = try fields.string("id")
        customerID = try fields.optionalExpandableID("customer")
        status = try fields.value("status", as: Status.self)
        cancelAtPeriodEnd = try fields.bool("cancel_at_period_end")
        cancelAtSeconds = try fields.optionalInt("cancel_at")
        canceledAtSeconds = try fields.optionalInt("canceled_at")
        endedAtSeconds = try fields.optionalInt("ended_at")
        latestInvoiceID = try fields.optionalExpandableID("latest_invoice")
        metadata = try fields.metadata()
        items = []
        for item in try fields.listData("items") { items.append(try Item(item)) }
        trialEndSeconds = try fields.optionalInt("trial_end")
        startDateSeconds = try fields.int("start_date")
    }
}
