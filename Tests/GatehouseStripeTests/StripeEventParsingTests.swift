import GatehouseCore
import GatehouseStripe
import GatehouseTesting
import GatehouseWire
import Testing

/// Stripe events of the pinned version read into typed values, and every malformed body refused
/// as `bad_request` naming where it is wrong.
@Suite struct StripeEventParsingTests {
    typealias Fixtures = StripeFixtures

    static func parse(_ event: JSONObject) throws -> StripeEvent {
        try StripeEvent.parse(Fixtures.body(event))
    }

    @Test func theEnvelopeIsRead() throws {
        let event = try Self.parse(
            Fixtures.event(.customerSubscriptionUpdated, Fixtures.subscription(), id: "evt_1Envelope", createdSeconds: 1_782_900_000,
                livemode: true))
        #expect(event.id == "evt_1Envelope")
        #expect(event.type == "customer.subscription.updated")
        #expect(event.usedType == .customerSubscriptionUpdated)
        #expect(event.createdSeconds == 1_782_900_000)
        #expect(event.livemode)
        #expect(event.apiVersion == StripeAPIVersion.pinned)
    }

    @Test func aCompletedSubscriptionCheckoutSessionIsRead() throws {
        let session = Fixtures.checkoutSession(
            id: "cs_test_1", clientReferenceID: "customer-42", email: "typed@example.com",
            customerEmail: "given@example.com", amountTotal: 1299, currency: "eur", metadata: ["app_user_id": "customer-42"],
            createdSeconds: 1_782_864_100)
        let event = try Self.parse(Fixtures.event(.checkoutSessionCompleted, session))
        guard case .checkoutSession(let read) = event.object else { throw Unexpected(event.object) }
        #expect(read.id == "cs_test_1")
        #expect(read.mode == .subscription)
        #expect(read.status == .complete)
        #expect(read.paymentStatus == .paid)
        #expect(read.clientReferenceID == "customer-42")
        #expect(read.metadata == ["app_user_id": "customer-42"])
        #expect(read.subscriptionID == Fixtures.subscriptionID)
        #expect(read.paymentIntentID == nil)
        #expect(read.customerID == Fixtures.customerID)
        #expect(read.email == "typed@example.com")
        #expect(read.amountTotal == 1299)
        #expect(read.currency == "eur")
        #expect(read.createdSeconds == 1_782_864_100)
    }

    @Test func aPaymentSessionNamesItsPaymentIntentAndFallsBackToTheGivenEmail() throws {
        let session = Fixtures.checkoutSession(
            mode: "payment", paymentStatus: "no_payment_required", email: nil, customerEmail: "given@example.com",
            customerID: nil)
        guard case .checkoutSession(let read) = try Self.parse(Fixtures.event(.checkoutSessionCompleted, session)).object
        else { throw Unexpected(nil) }
        #expect(read.mode == .payment)
        #expect(read.paymentStatus == .noPaymentRequired)
        #expect(read.paymentIntentID == Fixtures.paymentIntentID)
        #expect(read.subscriptionID == nil)
        #expect(read.customerID == nil)
        #expect(read.email == "given@example.com")
    }

    @Test func anExpandedReferenceReadsAsItsID() throws {
        var session = Fixtures.checkoutSession()
        session["subscription"] = ["id": "sub_expanded", "object": "subscription"]
        session["customer"] = ["id": "cus_expanded", "object": "customer"]
        guard case .checkoutSession(let read) = try Self.parse(Fixtures.event(.checkoutSessionCompleted, session)).object
        else { throw Unexpected(nil) }
        #expect(read.subscriptionID == "sub_expanded")
        #expect(read.customerID == "cus_expanded")
    }

    @Test func aPaidInvoiceIsRead() throws {
        let invoice = Fixtures.invoice(
            id: "in_1", email: "buyer@example.com", subscriptionID: "sub_1", subscriptionMetadata: ["app_user_id": "c-1"],
            amountPaid: 499, currency: "gbp", billingReason: "subscription_cycle", priceID: "price_1", productID: "prod_1",
            periodStartSeconds: 1_785_542_400, periodEndSeconds: 1_788_220_800, createdSeconds: 1_785_542_500)
        guard case .invoice(let read) = try Self.parse(Fixtures.event(.invoicePaid, invoice)).object
        else { throw Unexpected(nil) }
        #expect(read.id == "in_1")
        #expect(read.status == "paid")
        #expect(read.customerID == Fixtures.customerID)
        #expect(read.email == "buyer@example.com")
        #expect(read.amountPaid == 499)
        #expect(read.currency == "gbp")
        #expect(read.billingReason == "subscription_cycle")
        #expect(read.subscriptionID == "sub_1")
        #expect(read.subscriptionMetadata == ["app_user_id": "c-1"])
        #expect(
            read.lines == [
                StripeInvoice.Line(
                    priceID: "price_1", productID: "prod_1", periodStartSeconds: 1_785_542_400,
                    periodEndSeconds: 1_788_220_800)
            ])
        #expect(read.createdSeconds == 1_785_542_500)
    }

    @Test func anInvoiceOfNoSubscriptionHasNone() throws {
        guard case .invoice(let read) = try Self.parse(Fixtures.event(.invoicePaid, Fixtures.invoice(subscriptionID: nil))).object
        else { throw Unexpected(nil) }
        #expect(read.subscriptionID == nil)
        #expect(read.subscriptionMetadata == [:])
    }

    @Test(arguments: [
        StripeEventType.customerSubscriptionCreated, .customerSubscriptionUpdated, .customerSubscriptionDeleted,
    ])
    func aSubscriptionIsRead(_ type: StripeEventType) throws {
        let subscription = Fixtures.subscription(
            id: "sub_2", customerID: "cus_2", status: "past_due", priceID: "price_2", productID: "prod_2",
            periodStartSeconds: 1_782_864_000, periodEndSeconds: 1_785_542_400, cancelAtPeriodEnd: true,
            cancelAtSeconds: 1_785_542_400, canceledAtSeconds: 1_783_000_000, endedAtSeconds: nil,
            trialEndSeconds: 1_783_468_800, latestInvoiceID: "in_2", metadata: ["app_user_id": "c-2"],
            createdSeconds: 1_782_000_000)
        guard case .subscription(let read) = try Self.parse(Fixtures.event(type, subscription)).object
        else { throw Unexpected(nil) }
        #expect(read.id == "sub_2")
        #expect(read.customerID == "cus_2")
        #expect(read.status == .pastDue)
        #expect(read.cancelAtPeriodEnd)
        #expect(read.cancelAtSeconds == 1_785_542_400)
        #expect(read.canceledAtSeconds == 1_783_000_000)
        #expect(read.endedAtSeconds == nil)
        #expect(read.latestInvoiceID == "in_2")
        #expect(read.metadata == ["app_user_id": "c-2"])
        #expect(
            read.items == [
                StripeSubscription.Item(
                    priceID: "price_2", productID: "prod_2", currentPeriodStartSeconds: 1_782_864_000,
                    currentPeriodEndSeconds: 1_785_542_400)
            ])
        #expect(read.trialEndSeconds == 1_783_468_800)
        #expect(read.startDateSeconds == 1_782_000_000)
    }

    @Test func everySubscriptionStatusOfStripesIsKnownAndANewOneIsKeptAsWritten() throws {
        let known: [(String, StripeSubscription.Status)] = [
            ("incomplete", .incomplete), ("incomplete_expired", .incompleteExpired), ("trialing", .trialing),
            ("active", .active), ("past_due", .pastDue), ("canceled", .canceled), ("unpaid", .unpaid),
            ("paused", .paused), ("frozen", .unknown("frozen")),
        ]
        for (written, status) in known {
            let event = Fixtures.event(.customerSubscriptionUpdated, Fixtures.subscription(status: written))
            guard case .subscription(let read) = try Self.parse(event).object else { throw Unexpected(nil) }
            #expect(read.status == status)
        }
    }

    @Test func aRefundedChargeIsRead() throws {
        let charge = Fixtures.charge(
            id: "ch_1", amount: 999, amountRefunded: 999, currency: "usd", paymentIntentID: "pi_1", customerID: "cus_1")
        guard case .charge(let read) = try Self.parse(Fixtures.event(.chargeRefunded, charge)).object
        else { throw Unexpected(nil) }
        #expect(read.id == "ch_1")
        #expect(read.amount == 999)
        #expect(read.amountRefunded == 999)
        #expect(read.refunded)
        #expect(read.currency == "usd")
        #expect(read.paymentIntentID == "pi_1")
        #expect(read.customerID == "cus_1")
    }

    @Test func aPartlyRefundedChargeIsNotRefunded() throws {
        guard case .charge(let read) = try Self.parse(Fixtures.event(.chargeRefunded, Fixtures.charge(amountRefunded: 300))).object
        else { throw Unexpected(nil) }
        #expect(read.amountRefunded == 300)
        #expect(!read.refunded)
    }

    /// A payment made without a PaymentIntent: the charge names none, and its invoice payment
    /// names the charge (`payment.type: charge`).
    @Test func aPaymentWithoutAPaymentIntentIsReadByItsCharge() throws {
        guard case .charge(let charge) = try Self.parse(Fixtures.chargeRefunded(
            amountRefunded: 100, chargeID: "ch_5", paymentIntentID: nil, createdSeconds: Fixtures.createdSeconds)).object
        else { throw Unexpected(nil) }
        #expect(charge.id == "ch_5")
        #expect(charge.paymentIntentID == nil)
        guard case .invoicePayment(let payment) = try Self.parse(Fixtures.invoicePaymentPaid(
            invoiceID: "in_5", paymentIntentID: nil, chargeID: "ch_5")).object
        else { throw Unexpected(nil) }
        #expect(payment.paymentIntentID == nil)
        #expect(payment.chargeID == "ch_5")
        #expect(payment.invoiceID == "in_5")
    }

    @Test(arguments: [StripeEventType.chargeDisputeCreated, .chargeDisputeUpdated, .chargeDisputeClosed])
    func aDisputeIsRead(_ type: StripeEventType) throws {
        let dispute = Fixtures.dispute(id: "du_1", chargeID: "ch_9", paymentIntentID: "pi_9", amount: 500, status: "lost")
        guard case .dispute(let read) = try Self.parse(Fixtures.event(type, dispute)).object
        else { throw Unexpected(nil) }
        #expect(read.id == "du_1")
        #expect(read.chargeID == "ch_9")
        #expect(read.paymentIntentID == "pi_9")
        #expect(read.amount == 500)
        #expect(read.status == .lost)
    }

    @Test func anInvoicePaymentIsRead() throws {
        let payment = Fixtures.invoicePayment(
            id: "inpay_1", invoiceID: "in_7", paymentIntentID: "pi_7", chargeID: "ch_7", amountPaid: 999)
        guard case .invoicePayment(let read) = try Self.parse(Fixtures.event(.invoicePaymentPaid, payment)).object
        else { throw Unexpected(nil) }
        #expect(read.id == "inpay_1")
        #expect(read.invoiceID == "in_7")
        #expect(read.paymentIntentID == "pi_7")
        #expect(read.chargeID == "ch_7")
        #expect(read.amountPaid == 999)
        #expect(read.status == "paid")
    }

    @Test(arguments: [
        "invoice.payment_failed", "customer.subscription.trial_will_end", "checkout.session.expired", "charge.succeeded",
        "customer.created", "payment_intent.succeeded",
    ])
    func anUnusedTypeParsesAsUnusedWithoutReadingItsObject(_ type: String) throws {
        let event = try Self.parse(Fixtures.event(type, ["id": "x_1", "object": "something.else", "amount": "not read"]))
        #expect(event.object == .unused)
        #expect(event.type == type)
        #expect(event.usedType == nil)
    }

    // MARK: The shared payloads

    @Test func theSharedPayloadsWithoutATypeAreRefusedNamingIt() throws {
        for name in ["payload-stripe-node-EVENT_PAYLOAD_STRING.json", "payload-stripe-python-DUMMY_WEBHOOK_PAYLOAD.json"] {
            let error = StripeEventRefusalTests.refusal(try StripeVectors.bytes(name))
            #expect(error == GatehouseError(.badRequest, "type: is required"), "\(name)")
        }
    }

    @Test func theSharedV2EventIsRefusedAsNotAV1Event() throws {
        let error = StripeEventRefusalTests.refusal(try StripeVectors.bytes("payload-stripe-python-DUMMY_V2_WEBHOOK_PAYLOAD.json"))
        #expect(error == GatehouseError(.badRequest, #"object: expected "event", got "v2.core.event""#))
    }

    @Test func theSharedTerminalReaderPayloadWithATypeOfItsOwnIsUnused() throws {
        var payload = try #require(JSONParser.parse(StripeVectors.bytes("payload-stripe-python-DUMMY_WEBHOOK_PAYLOAD.json")).objectValue)
        payload["type"] = "terminal.reader.action_succeeded"
        payload["created"] = 12345
        payload["livemode"] = false
        let event = try Self.parse(payload)
        #expect(event.id == "evt_test_webhook")
        #expect(event.object == .unused)
        #expect(event.apiVersion == nil)
    }
}

struct Unexpected: Error {
    let object: StripeEvent.Object?
    init(_ object: StripeEvent.Object?) { self.object = object }
}
