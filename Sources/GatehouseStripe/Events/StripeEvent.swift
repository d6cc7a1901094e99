public import GatehouseCore
import GatehouseWire

/// A Stripe webhook event (`"object": "event"`) of the pinned API version, with what it carries
/// typed when Gatehouse acts on its type.
public struct StripeEvent: Sendable, Equatable {
    /// What `data.object` holds, for the types Gatehouse acts on.
    public enum Object: Sendable, Equatable {
        case checkoutSession(StripeCheckoutSession)
        case invoice(StripeInvoice)
        case subscription(StripeSubscription)
        case charge(StripeCharge)
        case dispute(StripeDispute)
        case invoicePayment(StripeInvoicePayment)
        /// A type Gatehouse does not act on; its `data.object` is not read.
        case unused
    }

    /// `evt_…`, the key Stripe's retries repeat.
    public var id: String
    public var type: String
    public var createdSeconds: Int64
    public var livemode: Bool
    /// The API version the payload was shaped by; `null` for some events Stripe makes itself.
    public var apiVersion: String?
    public var object: Object

    public init(id: String, type: String, createdSeconds: Int64, livemode: Bool, apiVersion: String?, object: Object) {
        self.id = id
        self.type = type
        self.createdSeconds = createdSeconds
        self.livemode = livemode
        self.apiVersion = apiVersion
        self.object = object
    }

    /// The type, when Gatehouse acts on it.
    public var usedType: StripeEventType? { StripeEventType(rawValue: type) }

    /// Parses a webhook body. A body that is not a v1 event, or a used type whose object lacks
    /// or mistypes a field read here, is `bad_request` naming the field's path
    /// (`data.object.items.data[0].current_period_end: is required`).
    public static func parse(_ body: some Collection<UInt8>) throws(GatehouseError) -> StripeEvent {
        let value: JSONValue
        do {
            value = try JSONParser.parse(Array(body))
        } catch {
            throw GatehouseError(.badRequest, "Stripe event: \(error)")
        }
        guard let object = value.objectValue else {
            throw GatehouseError(.badRequest, "Stripe event: expected an object, got \(value.typeName)")
        }
        return try StripeEvent(Fields(object))
    }

    init(_ fields: Fields) throws(GatehouseError) {
        id = try fields.string("id")
        guard id.hasPrefix("evt_") else { throw .badField("id", "expected an event id (evt_…)") }
        // A v2 "thin" event (`v2.core.event`) has another shape and is read another way.
        try fields.expectKind("event")
        type = try fields.string("type")
        createdSeconds = try fields.int("created")
        livemode = try fields.bool("livemode")
        apiVersion = try fields.optionalString("api_version")
        guard let used = StripeEventType(rawValue: type) else {
            object = .unused
            return
        }
        object = try Self.object(of: used, in: fields.object("data").object("object"))
    }

    private static func object(of type: StripeEventType, in fields: Fields) throws(GatehouseError) -> Object {
        try fields.expectKind(type.objectKind)
        switch type {
        case .checkoutSessionCompleted: return .checkoutSession(try StripeCheckoutSession(fields))
        case .invoicePaid: return .invoice(try StripeInvoice(fields))
        case .customerSubscriptionCreated, .customerSubscriptionUpdated, .customerSubscriptionDeleted:
            return .subscription(try StripeSubscription(fields))
        case .chargeRefunded: return .charge(try StripeCharge(fields))
        case .chargeDisputeCreated, .chargeDisputeUpdated, .chargeDisputeClosed: return .dispute(try StripeDispute(fields))
        case .invoicePaymentPaid: return .invoicePayment(try StripeInvoicePayment(fields))
        }
    }
}
