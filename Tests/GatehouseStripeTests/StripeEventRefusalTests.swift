import GatehouseCore
import GatehouseStripe
import GatehouseTesting
import GatehouseWire
import Testing

/// Every body that is not an event of the pinned shape is `bad_request`, naming the field's path.
@Suite struct StripeEventRefusalTests {
    typealias Fixtures = StripeFixtures

    /// `event` with the value at `path` (dotted; a number indexes an array) replaced, or removed
    /// when `value` is nil.
    static func editing(_ event: JSONObject, _ path: String, _ value: JSONValue?) -> JSONObject {
        guard case .object(let edited) = edit(.object(event), path.split(separator: ".").map(String.init)[...], value)
        else { preconditionFailure("an object stays an object") }
        return edited
    }

    private static func edit(_ node: JSONValue, _ path: ArraySlice<String>, _ value: JSONValue?) -> JSONValue {
        guard let head = path.first else { return value ?? .null }
        if case .array(var array) = node, let index = Int(head) {
            array[index] = edit(array[index], path.dropFirst(), value)
            return .array(array)
        }
        guard case .object(let object) = node else { preconditionFailure("no \(head) in \(node)") }
        if path.count == 1, value == nil {
            return .object(JSONObject(members: object.members.filter { $0.key != head }))
        }
        let child = edit(object[head] ?? .null, path.dropFirst(), value)
        return .object(JSONObject(members: object.members.map { $0.key == head ? .init(key: head, value: child) : $0 }))
    }

    /// The error parsing `body` gives (failing the test when it parses).
    static func refusal(_ body: [UInt8]) -> GatehouseError? {
        do {
            let event = try StripeEvent.parse(body)
            Issue.record("parsed: \(event)")
            return nil
        } catch {
            return error
        }
    }

    static func expectRefused(_ event: JSONObject, _ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(refusal(Fixtures.body(event)) == GatehouseError(.badRequest, message), sourceLocation: sourceLocation)
    }

    static let session = Fixtures.event(.checkoutSessionCompleted, Fixtures.checkoutSession())
    static let invoice = Fixtures.event(.invoicePaid, Fixtures.invoice())
    static let subscription = Fixtures.event(.customerSubscriptionUpdated, Fixtures.subscription())
    static let charge = Fixtures.event(.chargeRefunded, Fixtures.charge())
    static let dispute = Fixtures.event(.chargeDisputeClosed, Fixtures.dispute(status: "lost"))
    static let payment = Fixtures.event(.invoicePaymentPaid, Fixtures.invoicePayment())

    @Test func bytesThatAreNotJSONAreRefused() {
        for body in ["", "{", "not json", #"{"id":"evt_1",}"#] {
            let error = Self.refusal(Array(body.utf8))
            #expect(error?.code == .badRequest)
            #expect(error?.message.hasPrefix("Stripe event: ") == true)
        }
        #expect(Self.refusal([0xFF, 0xFE])?.code == .badRequest)
    }

    @Test func jsonThatIsNotAnObjectIsRefused() {
        #expect(Self.refusal(Array("[1]".utf8)) == GatehouseError(.badRequest, "Stripe event: expected an object, got array"))
    }

    @Test func theEnvelopesFieldsAreRequiredAndTyped() {
        Self.expectRefused(Self.editing(Self.invoice, "id", nil), "id: is required")
        Self.expectRefused(Self.editing(Self.invoice, "id", 7), "id: expected a string, got number")
        Self.expectRefused(Self.editing(Self.invoice, "id", "in_1"), "id: expected an event id (evt_…)")
        Self.expectRefused(Self.editing(Self.invoice, "object", nil), "object: is required")
        Self.expectRefused(Self.editing(Self.invoice, "type", nil), "type: is required")
        Self.expectRefused(Self.editing(Self.invoice, "created", "2026-07-01"), "created: expected an integer, got string")
        Self.expectRefused(Self.editing(Self.invoice, "created", 1.5), "created: expected an integer in range -9223372036854775808…9223372036854775807")
        Self.expectRefused(Self.editing(Self.invoice, "livemode", nil), "livemode: is required")
        Self.expectRefused(Self.editing(Self.invoice, "livemode", "false"), "livemode: expected a boolean, got string")
        Self.expectRefused(Self.editing(Self.invoice, "api_version", 2026), "api_version: expected a string, got number")
    }

    @Test func aUsedTypeNeedsItsObject() {
        Self.expectRefused(Self.editing(Self.invoice, "data", nil), "data: is required")
        Self.expectRefused(Self.editing(Self.invoice, "data.object", nil), "data.object: is required")
        Self.expectRefused(Self.editing(Self.invoice, "data.object", "in_1"), "data.object: expected an object, got string")
        Self.expectRefused(
            Self.editing(Self.invoice, "data.object.object", "charge"), #"data.object.object: expected "invoice", got "charge""#)
    }

    @Test func aSessionsFieldsAreRequiredAndTyped() {
        Self.expectRefused(Self.editing(Self.session, "data.object.mode", nil), "data.object.mode: is required")
        Self.expectRefused(
            Self.editing(Self.session, "data.object.payment_status", true),
            "data.object.payment_status: expected a string, got boolean")
        Self.expectRefused(
            Self.editing(Self.session, "data.object.subscription", 5),
            "data.object.subscription: expected an id or an object, got number")
        Self.expectRefused(
            Self.editing(Self.session, "data.object.customer", ["object": "customer"]), "data.object.customer.id: is required")
        Self.expectRefused(
            Self.editing(Self.session, "data.object.metadata", ["plan": 3]), "data.object.metadata.plan: expected a string, got number")
        Self.expectRefused(
            Self.editing(Self.session, "data.object.customer_details.email", 1),
            "data.object.customer_details.email: expected a string, got number")
        Self.expectRefused(Self.editing(Self.session, "data.object.created", nil), "data.object.created: is required")
    }

    @Test func anInvoicesFieldsAreRequiredAndTyped() {
        Self.expectRefused(Self.editing(Self.invoice, "data.object.amount_paid", nil), "data.object.amount_paid: is required")
        Self.expectRefused(Self.editing(Self.invoice, "data.object.currency", nil), "data.object.currency: is required")
        Self.expectRefused(Self.editing(Self.invoice, "data.object.lines", nil), "data.object.lines: is required")
        Self.expectRefused(
            Self.editing(Self.invoice, "data.object.lines.data.0.period.end", "soon"),
            "data.object.lines.data[0].period.end: expected an integer, got string")
        Self.expectRefused(
            Self.editing(Self.invoice, "data.object.lines.data.0.pricing.price_details.price", 9),
            "data.object.lines.data[0].pricing.price_details.price: expected an id or an object, got number")
        Self.expectRefused(
            Self.editing(Self.invoice, "data.object.parent.subscription_details.metadata", ["n": 1]),
            "data.object.parent.subscription_details.metadata.n: expected a string, got number")
    }

    @Test func aSubscriptionsFieldsAreRequiredAndTyped() {
        Self.expectRefused(Self.editing(Self.subscription, "data.object.status", nil), "data.object.status: is required")
        Self.expectRefused(
            Self.editing(Self.subscription, "data.object.cancel_at_period_end", nil),
            "data.object.cancel_at_period_end: is required")
        Self.expectRefused(
            Self.editing(Self.subscription, "data.object.items.data.0.current_period_end", nil),
            "data.object.items.data[0].current_period_end: is required")
        Self.expectRefused(
            Self.editing(Self.subscription, "data.object.items.data.0.price", "price_1"),
            "data.object.items.data[0].price: expected an object, got string")
        Self.expectRefused(
            Self.editing(Self.subscription, "data.object.items.data", "none"), "data.object.items.data: expected an array, got string")
        Self.expectRefused(Self.editing(Self.subscription, "data.object.start_date", nil), "data.object.start_date: is required")
    }

    @Test func aChargesDisputesAndPaymentsFieldsAreRequiredAndTyped() {
        Self.expectRefused(Self.editing(Self.charge, "data.object.amount_refunded", nil), "data.object.amount_refunded: is required")
        Self.expectRefused(Self.editing(Self.charge, "data.object.refunded", 1), "data.object.refunded: expected a boolean, got number")
        Self.expectRefused(Self.editing(Self.dispute, "data.object.charge", nil), "data.object.charge: is required")
        Self.expectRefused(Self.editing(Self.dispute, "data.object.status", nil), "data.object.status: is required")
        Self.expectRefused(Self.editing(Self.payment, "data.object.payment", nil), "data.object.payment: is required")
        Self.expectRefused(Self.editing(Self.payment, "data.object.invoice", nil), "data.object.invoice: is required")
        Self.expectRefused(
            Self.editing(Self.payment, "data.object.payment.payment_intent", 1),
            "data.object.payment.payment_intent: expected an id or an object, got number")
    }

    @Test func nullReadsAsAbsent() {
        Self.expectRefused(Self.editing(Self.invoice, "type", .null), "type: is required")
        let event = Self.editing(Self.session, "data.object.metadata", .null)
        #expect(throws: Never.self) { try StripeEvent.parse(Fixtures.body(event)) }
    }
}
