import GatehouseBase
public import GatehouseStripe
public import GatehouseWire

/// Stripe webhook events of the pinned API version, as Stripe sends them: the whole envelope
/// (`object: "event"`, `api_version`, `pending_webhooks`, `request`) and whole objects with the
/// fields Stripe writes at that version, not only those Gatehouse reads, so a test feeds the
/// server what it will meet. Build an object, wrap it in ``event(_:_:id:createdSeconds:livemode:previousAttributes:)``,
/// take its ``body(_:)`` and sign it with ``signatureHeader(body:secret:timestamp:)``.
public enum StripeFixtures {
    public static let webhookSecret = "whsec_test_secret"
    public static let secretKey = "sk_test_51GatehouseTestKey"
    public static let accountID = "acct_1GatehouseTest"
    public static let customerID = "cus_TestBuyer0001"
    public static let priceID = "price_1TestMonthly"
    public static let productID = "prod_TestPro"
    public static let subscriptionID = "sub_1TestSubscription"
    public static let invoiceID = "in_1TestInvoice"
    public static let paymentIntentID = "pi_3TestPaymentIntent"
    public static let chargeID = "ch_3TestCharge"
    public static let email = "buyer@example.com"
    /// 2026-07-01T00:00:00Z, the default time of the objects.
    public static let createdSeconds: Int64 = 1_782_864_000
    public static let monthSeconds: Int64 = 30 * 24 * 3600

    // MARK: Envelope and signature

    /// An event carrying `object`. The id, unless given, is derived from the type, the object's
    /// id and the time, so two different events never share one; `livemode` is set on the
    /// object too.
    public static func event(
        _ type: String, _ object: JSONObject, id: String? = nil, createdSeconds: Int64? = nil, livemode: Bool = false,
        previousAttributes: JSONObject? = nil
    ) -> JSONObject {
        let object = JSONObject(members: object.members.map { member in
            member.key == "livemode" ? .init(key: member.key, value: .bool(livemode)) : member
        })
        let created = createdSeconds ?? object["created"]?.numberValue?.int64 ?? Self.createdSeconds
        let objectID = object["id"]?.stringValue ?? ""
        let eventID = id ?? "evt_" + String(SHA256.hex(Array("\(type)|\(objectID)|\(created)".utf8)).prefix(24))
        var data: JSONObject = ["object": .object(object)]
        if let previousAttributes { data["previous_attributes"] = .object(previousAttributes) }
        return [
            "id": .string(eventID), "object": "event", "api_version": .string(StripeAPIVersion.pinned),
            "created": .int(created), "data": .object(data), "livemode": .bool(livemode), "pending_webhooks": 1,
            "request": ["id": .string("req_" + String(eventID.dropFirst(4).prefix(14))), "idempotency_key": .null],
            "type": .string(type),
        ]
    }

    public static func event(
        _ type: StripeEventType, _ object: JSONObject, id: String? = nil, createdSeconds: Int64? = nil,
        livemode: Bool = false, previousAttributes: JSONObject? = nil
    ) -> JSONObject {
        event(
            type.rawValue, object, id: id, createdSeconds: createdSeconds, livemode: livemode,
            previousAttributes: previousAttributes)
    }

    /// The bytes Stripe posts for `event`.
    public static func body(_ event: JSONObject) -> [UInt8] {
        JSONWriter.serialize(.object(event))
    }

    /// `Stripe-Signature` for `body` signed by `secret` at `timestamp` (unix seconds).
    public static func signatureHeader(
        body: some Collection<UInt8>, secret: String = webhookSecret, timestamp: Int64
    ) -> String {
        "t=\(timestamp),v1=\(StripeSignature.signature(timestamp: timestamp, body: body, secret: secret))"
    }

    // MARK: Events of payments

    /// `invoice_payment.paid`: `paymentIntentID` paid `invoiceID` at `createdSeconds`.
    public static func invoicePaymentPaid(
        invoiceID: String = invoiceID, paymentIntentID: String? = paymentIntentID, chargeID: String? = nil,
        amountPaid: Int64 = 999, createdSeconds: Int64 = createdSeconds
    ) -> JSONObject {
        let payment = invoicePayment(
            id: "inpay_" + String(invoiceID.dropFirst(3)), invoiceID: invoiceID, paymentIntentID: paymentIntentID,
            chargeID: chargeID, amountPaid: amountPaid, createdSeconds: createdSeconds)
        return event(.invoicePaymentPaid, payment, createdSeconds: createdSeconds)
    }

    /// `charge.refunded` at `createdSeconds`: of the charge's `amount` (made at
    /// `chargeCreatedSeconds`), `amountRefunded` is refunded so far.
    public static func chargeRefunded(
        amountRefunded: Int64, amount: Int64 = 999, chargeID: String = chargeID, paymentIntentID: String? = paymentIntentID,
        chargeCreatedSeconds: Int64 = createdSeconds, createdSeconds: Int64
    ) -> JSONObject {
        let refunded = charge(
            id: chargeID, amount: amount, amountRefunded: amountRefunded, paymentIntentID: paymentIntentID,
            createdSeconds: chargeCreatedSeconds)
        return event(.chargeRefunded, refunded, createdSeconds: createdSeconds)
    }

    /// A dispute's event at `createdSeconds`: `charge.dispute.closed` unless told otherwise, the
    /// dispute `won`, `lost`, `warning_closed` or `prevented` (`needs_response` for
    /// `charge.dispute.created`).
    public static func disputeEvent(
        _ type: StripeEventType = .chargeDisputeClosed, status: String, chargeID: String = chargeID,
        paymentIntentID: String? = paymentIntentID, disputeCreatedSeconds: Int64 = createdSeconds, createdSeconds: Int64
    ) -> JSONObject {
        let closed = dispute(chargeID: chargeID, paymentIntentID: paymentIntentID, status: status, createdSeconds: disputeCreatedSeconds)
        return event(type, closed, createdSeconds: createdSeconds)
    }

    // MARK: Objects

    /// A completed Checkout Session. `email` is what the buyer typed (`customer_details.email`);
    /// `customerEmail` what the session was made with. A `subscription` session names its
    /// subscription, a `payment` one its payment intent, unless told otherwise.
    public static func checkoutSession(
        id: String = "cs_test_a1TestSession", mode: String = "subscription", status: String = "complete",
        paymentStatus: String = "paid", clientReferenceID: String? = nil, email: String? = email,
        customerEmail: String? = nil, customerID: String? = customerID, subscriptionID: String? = nil,
        paymentIntentID: String? = nil, amountTotal: Int64 = 999, currency: String = "usd",
        metadata: [String: String] = [:], createdSeconds: Int64 = createdSeconds
    ) -> JSONObject {
        let subscription = subscriptionID ?? (mode == "subscription" ? Self.subscriptionID : nil)
        let paymentIntent = paymentIntentID ?? (mode == "payment" ? Self.paymentIntentID : nil)
        var session: JSONObject = [
            "id": .string(id), "object": "checkout.session", "adaptive_pricing": ["enabled": true],
            "after_expiration": .null, "allow_promotion_codes": .null, "amount_subtotal": .int(amountTotal),
            "amount_total": .int(amountTotal), "automatic_tax": automaticTax, "billing_address_collection": .null,
            "cancel_url": "https://gatehouse.test/pay/cancel", "client_reference_id": text(clientReferenceID),
            "client_secret": .null, "collected_information": ["shipping_details": .null], "consent": .null,
            "consent_collection": .null, "created": .int(createdSeconds), "currency": .string(currency),
            "currency_conversion": .null, "custom_fields": [],
            "custom_text": [
                "after_submit": .null, "shipping_address": .null, "submit": .null, "terms_of_service_acceptance": .null,
            ],
            "customer": text(customerID), "customer_account": .null,
            "customer_creation": mode == "payment" ? "if_required" : "always",
            "customer_details": customerDetails(email: email), "customer_email": text(customerEmail), "discounts": [],
            "expires_at": .int(createdSeconds + 24 * 3600),
            "invoice": mode == "subscription" ? .string(invoiceID) : .null,
        ]
        session.append(contentsOf: [
            "invoice_creation": mode == "payment" ? ["enabled": false, "invoice_data": invoiceData] : .null,
            "livemode": false, "locale": .null, "metadata": .object(strings(metadata)), "mode": .string(mode),
            "origin_context": .null, "payment_intent": text(paymentIntent), "payment_link": .null,
            "payment_method_collection": "always", "payment_method_configuration_details": .null,
            "payment_method_options": ["card": ["request_three_d_secure": "automatic"]], "payment_method_types": ["card"],
            "payment_status": .string(paymentStatus), "permissions": .null, "phone_number_collection": ["enabled": false],
            "recovered_from": .null, "saved_payment_method_options": .null, "setup_intent": .null,
            "shipping_address_collection": .null, "shipping_cost": .null, "shipping_options": [],
            "status": .string(status), "submit_type": .null, "subscription": text(subscription),
            "success_url": "https://gatehouse.test/pay/success?session_id={CHECKOUT_SESSION_ID}",
            "total_details": ["amount_discount": 0, "amount_shipping": 0, "amount_tax": 0], "ui_mode": "hosted",
            "url": .null, "wallet_options": .null,
        ])
        return session
    }

    /// A subscription with one item, whose current period is `periodStartSeconds` to
    /// `periodEndSeconds` (a month from the start unless given).
    public static func subscription(
        id: String = subscriptionID, customerID: String = customerID, status: String = "active",
        priceID: String = priceID, productID: String = productID, periodStartSeconds: Int64 = createdSeconds,
        periodEndSeconds: Int64? = nil, cancelAtPeriodEnd: Bool = false, cancelAtSeconds: Int64? = nil,
        canceledAtSeconds: Int64? = nil, endedAtSeconds: Int64? = nil, trialEndSeconds: Int64? = nil,
        latestInvoiceID: String? = invoiceID, metadata: [String: String] = [:], unitAmount: Int64 = 999,
        currency: String = "usd", createdSeconds: Int64 = createdSeconds
    ) -> JSONObject {
        let periodEnd = periodEndSeconds ?? periodStartSeconds + monthSeconds
        let item = subscriptionItem(
            subscriptionID: id, priceID: priceID, productID: productID, periodStart: periodStartSeconds,
            periodEnd: periodEnd, unitAmount: unitAmount, currency: currency, created: createdSeconds)
        var subscription: JSONObject = [
            "id": .string(id), "object": "subscription", "application": .null, "application_fee_percent": .null,
            "automatic_tax": ["disabled_reason": .null, "enabled": false, "liability": .null],
            "billing_cycle_anchor": .int(periodStartSeconds), "billing_cycle_anchor_config": .null,
            "billing_mode": ["flexible": ["proration_discounts": "included"], "type": "flexible", "updated_at": .null],
            "billing_schedules": [], "billing_thresholds": .null, "cancel_at": number(cancelAtSeconds),
            "cancel_at_period_end": .bool(cancelAtPeriodEnd), "canceled_at": number(canceledAtSeconds),
            "cancellation_details": [
                "comment": .null, "feedback": .null, "reason": canceledAtSeconds == nil ? .null : "cancellation_requested",
            ],
            "collection_method": "charge_automatically", "created": .int(createdSeconds), "currency": .string(currency),
            "customer": .string(customerID), "customer_account": .null, "days_until_due": .null,
            "default_payment_method": "pm_1TestCard", "default_source": .null, "default_tax_rates": [],
            "description": .null, "discounts": [], "ended_at": number(endedAtSeconds),
            "invoice_settings": ["account_tax_ids": .null, "issuer": ["type": "self"]],
            "items": list([.object(item)], url: "/v1/subscription_items?subscription=\(id)"),
        ]
        subscription.append(contentsOf: [
            "latest_invoice": text(latestInvoiceID), "livemode": false, "managed_payments": .null,
            "metadata": .object(strings(metadata)), "next_pending_invoice_item_invoice": .null, "on_behalf_of": .null,
            "pause_collection": .null, "payment_settings": paymentSettings, "pending_invoice_item_interval": .null,
            "pending_setup_intent": .null, "pending_update": .null, "presentment_details": .null, "schedule": .null,
            "start_date": .int(createdSeconds), "status": .string(status), "test_clock": .null, "transfer_data": .null,
            "trial_end": number(trialEndSeconds),
            "trial_settings": ["end_behavior": ["missing_payment_method": "create_invoice"]],
            "trial_start": trialEndSeconds == nil ? .null : .int(createdSeconds),
        ])
        return subscription
    }

    /// A paid invoice of one line for `priceID` over `periodStartSeconds`–`periodEndSeconds`.
    /// `subscriptionID: nil` makes an invoice of no subscription (`parent: null`).
    public static func invoice(
        id: String = invoiceID, customerID: String = customerID, email: String? = email,
        subscriptionID: String? = subscriptionID, subscriptionMetadata: [String: String] = [:],
        amountPaid: Int64 = 999, currency: String = "usd", billingReason: String = "subscription_create",
        status: String = "paid", priceID: String = priceID, productID: String = productID,
        periodStartSeconds: Int64 = createdSeconds, periodEndSeconds: Int64? = nil, createdSeconds: Int64 = createdSeconds
    ) -> JSONObject {
        let periodEnd = periodEndSeconds ?? periodStartSeconds + monthSeconds
        let line = invoiceLine(
            invoiceID: id, subscriptionID: subscriptionID, priceID: priceID, productID: productID,
            periodStart: periodStartSeconds, periodEnd: periodEnd, amount: amountPaid, currency: currency)
        let paid = status == "paid"
        var invoice: JSONObject = [
            "id": .string(id), "object": "invoice", "account_country": "US", "account_name": "Gatehouse Test",
            "account_tax_ids": .null, "amount_due": .int(amountPaid), "amount_overpaid": 0,
            "amount_paid": .int(paid ? amountPaid : 0), "amount_remaining": .int(paid ? 0 : amountPaid),
            "amount_shipping": 0, "application": .null, "attempt_count": 1, "attempted": true, "auto_advance": false,
            "automatic_tax": automaticTax, "automatically_finalizes_at": .null, "billing_reason": .string(billingReason),
            "collection_method": "charge_automatically", "created": .int(createdSeconds), "currency": .string(currency),
            "custom_fields": .null, "customer": .string(customerID), "customer_account": .null,
            "customer_address": .null, "customer_email": text(email), "customer_name": .null, "customer_phone": .null,
            "customer_shipping": .null, "customer_tax_exempt": "none", "customer_tax_ids": [],
            "default_payment_method": .null, "default_source": .null, "default_tax_rates": [], "description": .null,
            "discounts": [], "due_date": .null, "effective_at": .int(createdSeconds), "ending_balance": 0,
            "footer": .null, "from_invoice": .null,
            "hosted_invoice_url": .string("https://invoice.stripe.com/i/\(accountID)/test_\(id)"),
            "invoice_pdf": .string("https://pay.stripe.com/invoice/\(accountID)/test_\(id)/pdf"),
            "issuer": ["type": "self"], "last_finalization_error": .null, "latest_revision": .null,
            "lines": list([.object(line)], url: "/v1/invoices/\(id)/lines"),
        ]
        invoice.append(contentsOf: [
            "livemode": false, "metadata": [:], "next_payment_attempt": .null, "number": "GATE-0001",
            "on_behalf_of": .null, "parent": invoiceParent(subscriptionID: subscriptionID, metadata: subscriptionMetadata),
            "payment_settings": ["default_mandate": .null, "payment_method_options": .null, "payment_method_types": .null],
            "period_end": .int(createdSeconds), "period_start": .int(createdSeconds),
            "post_payment_credit_notes_amount": 0, "pre_payment_credit_notes_amount": 0, "receipt_number": .null,
            "rendering": .null, "shipping_cost": .null, "shipping_details": .null, "starting_balance": 0,
            "statement_descriptor": .null, "status": .string(status),
            "status_transitions": [
                "finalized_at": .int(createdSeconds), "marked_uncollectible_at": .null,
                "paid_at": paid ? .int(createdSeconds) : .null, "voided_at": .null,
            ],
            "subtotal": .int(amountPaid), "subtotal_excluding_tax": .int(amountPaid), "test_clock": .null,
            "total": .int(amountPaid), "total_discount_amounts": [], "total_excluding_tax": .int(amountPaid),
            "total_pretax_credit_amounts": [], "total_taxes": [], "webhooks_delivered_at": .int(createdSeconds),
        ])
        return invoice
    }

    /// A card charge of `amount`, of which `amountRefunded` has been refunded (`refunded` once
    /// it is all of it).
    public static func charge(
        id: String = chargeID, amount: Int64 = 999, amountRefunded: Int64 = 0, currency: String = "usd",
        paymentIntentID: String? = paymentIntentID, customerID: String? = customerID, email: String? = email,
        createdSeconds: Int64 = createdSeconds
    ) -> JSONObject {
        var charge: JSONObject = [
            "id": .string(id), "object": "charge", "amount": .int(amount), "amount_captured": .int(amount),
            "amount_refunded": .int(amountRefunded), "application": .null, "application_fee": .null,
            "application_fee_amount": .null, "balance_transaction": "txn_3TestBalance",
            "billing_details": [
                "address": address, "email": text(email), "name": .null, "phone": .null, "tax_id": .null,
            ],
            "calculated_statement_descriptor": "GATEHOUSE TEST", "captured": true, "created": .int(createdSeconds),
            "currency": .string(currency), "customer": text(customerID), "description": "Subscription creation",
            "disputed": false, "failure_balance_transaction": .null, "failure_code": .null, "failure_message": .null,
            "fraud_details": [:], "livemode": false, "metadata": [:], "on_behalf_of": .null,
        ]
        charge.append(contentsOf: [
            "outcome": [
                "advice_code": .null, "network_advice_code": .null, "network_decline_code": .null,
                "network_status": "approved_by_network", "reason": .null, "risk_level": "normal", "risk_score": 32,
                "seller_message": "Payment complete.", "type": "authorized",
            ],
            "paid": true, "payment_intent": text(paymentIntentID), "payment_method": "pm_1TestCard",
            "payment_method_details": ["card": card, "type": "card"], "presentment_details": .null,
            "radar_options": [:], "receipt_email": text(email), "receipt_number": .null,
            "receipt_url": .string("https://pay.stripe.com/receipts/payment/test_\(id)"),
            "refunded": .bool(amountRefunded >= amount), "review": .null, "shipping": .null, "source": .null,
            "source_transfer": .null, "statement_descriptor": .null, "statement_descriptor_suffix": .null,
            "status": "succeeded", "transfer_data": .null, "transfer_group": .null,
        ])
        return charge
    }

    /// A dispute of `chargeID` (statuses `needs_response`, `under_review`, `won`, `lost`, …).
    public static func dispute(
        id: String = "du_1TestDispute", chargeID: String = chargeID, paymentIntentID: String? = paymentIntentID,
        amount: Int64 = 999, currency: String = "usd", status: String = "needs_response",
        reason: String = "fraudulent", createdSeconds: Int64 = createdSeconds
    ) -> JSONObject {
        let closed = ["won", "lost", "warning_closed", "prevented"].contains(status)
        return [
            "id": .string(id), "object": "dispute", "amount": .int(amount), "balance_transactions": [],
            "charge": .string(chargeID), "created": .int(createdSeconds), "currency": .string(currency),
            "enhanced_eligibility_types": [],
            "evidence": [
                "access_activity_log": .null, "billing_address": .null, "cancellation_policy": .null,
                "customer_email_address": .null, "customer_name": .null, "product_description": .null,
                "receipt": .null, "refund_policy": .null, "service_date": .null, "uncategorized_text": .null,
            ],
            "evidence_details": [
                "due_by": .int(createdSeconds + 21 * 24 * 3600), "enhanced_eligibility": [:], "has_evidence": false,
                "past_due": false, "submission_count": .int(closed ? 1 : 0),
            ],
            "is_charge_refundable": false, "livemode": false, "metadata": [:], "network_reason_code": "10.4",
            "payment_intent": text(paymentIntentID),
            "payment_method_details": [
                "card": ["brand": "visa", "case_type": "chargeback", "network_reason_code": "10.4"], "type": "card",
            ],
            "reason": .string(reason), "status": .string(status),
        ]
    }

    /// The payment of `invoiceID` by `paymentIntentID` (or by `chargeID`, when there is no intent).
    public static func invoicePayment(
        id: String = "inpay_1TestInvoicePayment", invoiceID: String = invoiceID,
        paymentIntentID: String? = paymentIntentID, chargeID: String? = nil, amountPaid: Int64 = 999,
        currency: String = "usd", status: String = "paid", createdSeconds: Int64 = createdSeconds
    ) -> JSONObject {
        var payment: JSONObject = ["type": paymentIntentID == nil ? "charge" : "payment_intent"]
        if let paymentIntentID { payment["payment_intent"] = .string(paymentIntentID) }
        if let chargeID { payment["charge"] = .string(chargeID) }
        let paid = status == "paid"
        return [
            "id": .string(id), "object": "invoice_payment", "amount_paid": paid ? .int(amountPaid) : .null,
            "amount_requested": .int(amountPaid), "created": .int(createdSeconds), "currency": .string(currency),
            "invoice": .string(invoiceID), "is_default": true, "livemode": false, "payment": .object(payment),
            "status": .string(status),
            "status_transitions": ["canceled_at": .null, "paid_at": paid ? .int(createdSeconds) : .null],
        ]
    }
}

// MARK: Parts the objects share

extension StripeFixtures {
    private static func text(_ value: String?) -> JSONValue { .optional(value) { .string($0) } }
    private static func number(_ value: Int64?) -> JSONValue { .optional(value) { .int($0) } }

    private static func strings(_ values: [String: String]) -> JSONObject {
        JSONObject(members: values.sorted { $0.key < $1.key }.map { .init(key: $0.key, value: .string($0.value)) })
    }

    private static func list(_ data: [JSONValue], url: String) -> JSONValue {
        ["object": "list", "data": .array(data), "has_more": false, "total_count": .int(data.count), "url": .string(url)]
    }

    private static let automaticTax: JSONValue = [
        "disabled_reason": .null, "enabled": false, "liability": .null, "provider": .null, "status": .null,
    ]

    private static let address: JSONValue = [
        "city": .null, "country": "US", "line1": .null, "line2": .null, "postal_code": "94103", "state": .null,
    ]

    private static let card: JSONValue = [
        "amount_authorized": 999, "brand": "visa", "country": "US", "exp_month": 12, "exp_year": 2030,
        "fingerprint": "TestFingerprint", "funding": "credit", "last4": "4242", "network": "visa",
        "three_d_secure": .null, "wallet": .null,
    ]

    private static let paymentSettings: JSONValue = [
        "payment_method_options": [
            "acss_debit": .null, "bancontact": .null, "card": ["network": .null, "request_three_d_secure": "automatic"],
            "customer_balance": .null, "konbini": .null, "sepa_debit": .null, "us_bank_account": .null,
        ],
        "payment_method_types": .null, "save_default_payment_method": "off",
    ]

    private static let invoiceData: JSONValue = [
        "account_tax_ids": .null, "custom_fields": .null, "description": .null, "footer": .null, "issuer": .null,
        "metadata": [:], "rendering_options": .null,
    ]

    private static func customerDetails(email: String?) -> JSONValue {
        [
            "address": address, "business_name": .null, "email": text(email), "individual_name": .null,
            "name": "Test Buyer", "phone": .null, "tax_exempt": "none", "tax_ids": [],
        ]
    }

    private static func price(id: String, productID: String, unitAmount: Int64, currency: String, created: Int64)
        -> JSONObject
    {
        [
            "id": .string(id), "object": "price", "active": true, "billing_scheme": "per_unit", "created": .int(created),
            "currency": .string(currency), "custom_unit_amount": .null, "livemode": false, "lookup_key": .null,
            "metadata": [:], "nickname": .null, "product": .string(productID),
            "recurring": [
                "interval": "month", "interval_count": 1, "meter": .null, "trial_period_days": .null,
                "usage_type": "licensed",
            ],
            "tax_behavior": "unspecified", "tiers_mode": .null, "transform_quantity": .null, "type": "recurring",
            "unit_amount": .int(unitAmount), "unit_amount_decimal": .string(String(unitAmount)),
        ]
    }

    /// The legacy `plan` Stripe still writes beside each item's `price`.
    private static func plan(id: String, productID: String, unitAmount: Int64, currency: String, created: Int64)
        -> JSONObject
    {
        [
            "id": .string(id), "object": "plan", "active": true, "amount": .int(unitAmount),
            "amount_decimal": .string(String(unitAmount)), "billing_scheme": "per_unit", "created": .int(created),
            "currency": .string(currency), "interval": "month", "interval_count": 1, "livemode": false,
            "metadata": [:], "meter": .null, "nickname": .null, "product": .string(productID), "tiers_mode": .null,
            "transform_usage": .null, "trial_period_days": .null, "usage_type": "licensed",
        ]
    }

    private static func subscriptionItem(
        subscriptionID: String, priceID: String, productID: String, periodStart: Int64, periodEnd: Int64,
        unitAmount: Int64, currency: String, created: Int64
    ) -> JSONObject {
        [
            "id": .string("si_" + String(subscriptionID.dropFirst(4))), "object": "subscription_item",
            "billing_thresholds": .null, "created": .int(created), "current_period_end": .int(periodEnd),
            "current_period_start": .int(periodStart), "discounts": [], "metadata": [:],
            "plan": .object(plan(id: priceID, productID: productID, unitAmount: unitAmount, currency: currency, created: created)),
            "price": .object(price(id: priceID, productID: productID, unitAmount: unitAmount, currency: currency, created: created)),
            "quantity": 1, "subscription": .string(subscriptionID), "tax_rates": [],
        ]
    }

    private static func invoiceLine(
        invoiceID: String, subscriptionID: String?, priceID: String, productID: String, periodStart: Int64,
        periodEnd: Int64, amount: Int64, currency: String
    ) -> JSONObject {
        let parent: JSONValue = subscriptionID.map { subscription in
            [
                "invoice_item_details": .null,
                "subscription_item_details": [
                    "invoice_item": .null, "proration": false, "proration_details": ["credited_items": .null],
                    "subscription": .string(subscription),
                    "subscription_item": .string("si_" + String(subscription.dropFirst(4))),
                ],
                "type": "subscription_item_details",
            ]
        } ?? .null
        return [
            "id": .string("il_" + String(invoiceID.dropFirst(3))), "object": "line_item", "amount": .int(amount),
            "currency": .string(currency), "description": .string("1 × Pro (at \(amount) / month)"), "discount_amounts": [],
            "discountable": true, "discounts": [], "invoice": .string(invoiceID), "livemode": false, "metadata": [:],
            "parent": parent, "period": ["end": .int(periodEnd), "start": .int(periodStart)],
            "pretax_credit_amounts": [],
            "pricing": [
                "price_details": ["price": .string(priceID), "product": .string(productID)], "type": "price_details",
                "unit_amount_decimal": .string(String(amount)),
            ],
            "quantity": 1, "quantity_decimal": "1", "subscription": text(subscriptionID), "subtotal": .int(amount),
            "taxes": [],
        ]
    }

    private static func invoiceParent(subscriptionID: String?, metadata: [String: String]) -> JSONValue {
        guard let subscriptionID else { return .null }
        return [
            "quote_details": .null,
            "subscription_details": [
                "metadata": .object(strings(metadata)), "subscription": .string(subscriptionID),
                "subscription_proration_date": .null,
            ],
            "type": "subscription_details",
        ]
    }
}
