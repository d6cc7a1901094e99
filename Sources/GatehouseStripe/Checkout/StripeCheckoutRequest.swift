/// Stripe's create-Checkout-Session call (`POST /v1/checkout/sessions`) for one price, quantity 1.
public struct StripeCheckoutRequest: Sendable, Equatable {
    public enum Mode: String, Sendable, CaseIterable {
        case subscription, payment
    }

    public static let path = "/v1/checkout/sessions"

    public var priceID: String
    public var mode: Mode
    /// Where Checkout sends the buyer after paying; Stripe fills in `{CHECKOUT_SESSION_ID}`.
    public var successURL: String
    public var cancelURL: String
    public var clientReferenceID: String?
    public var customerEmail: String?
    /// Put on the session and also on what it creates (the subscription, or the payment),
    /// so the later events of either carry it too.
    public var metadata: [String: String]

    public init(
        priceID: String, mode: Mode, successURL: String, cancelURL: String, clientReferenceID: String? = nil,
        customerEmail: String? = nil, metadata: [String: String] = [:]
    ) {
        self.priceID = priceID
        self.mode = mode
        self.successURL = successURL
        self.cancelURL = cancelURL
        self.clientReferenceID = clientReferenceID
        self.customerEmail = customerEmail
        self.metadata = metadata
    }

    public var path: String { Self.path }

    /// The form fields in the order sent, metadata keys sorted so a body is a function of the request.
    public var formFields: [(key: String, value: String)] {
        var fields: [(key: String, value: String)] = [
            ("mode", mode.rawValue), ("line_items[0][price]", priceID), ("line_items[0][quantity]", "1"),
            ("success_url", successURL), ("cancel_url", cancelURL),
        ]
        if let clientReferenceID { fields.append(("client_reference_id", clientReferenceID)) }
        if let customerEmail { fields.append(("customer_email", customerEmail)) }
        let sorted = metadata.sorted { $0.key < $1.key }
        let created = mode == .subscription ? "subscription_data" : "payment_intent_data"
        for prefix in ["metadata", "\(created)[metadata]"] {
            for (key, value) in sorted { fields.append(("\(prefix)[\(key)]", value)) }
        }
        return fields
    }

    /// The body, `application/x-www-form-urlencoded` in Stripe's bracket notation.
    public func formBody() -> [UInt8] {
        StripeForm.encode(formFields)
    }

    /// The header fields a call of Stripe's API carries: the secret key, the pinned version (so
    /// the answer has the shape read here), and an idempotency key, which makes a retry of the
    /// same call answer the same session rather than make a second one.
    public static func headers(secretKey: String, idempotencyKey: String) -> [(name: String, value: String)] {
        [
            ("Authorization", "Bearer \(secretKey)"), ("Stripe-Version", StripeAPIVersion.pinned),
            ("Idempotency-Key", idempotencyKey), ("Content-Type", "application/x-www-form-urlencoded"),
        ]
    }
}
