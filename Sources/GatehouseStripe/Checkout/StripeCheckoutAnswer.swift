import GatehouseWire

/// What Stripe answers a create-Checkout-Session call with, reduced to where the buyer goes.
public struct StripeCheckoutAnswer: Sendable, Equatable {
    /// `cs_…`.
    public var id: String
    /// The hosted Checkout page.
    public var url: String

    public init(id: String, url: String) {
        self.id = id
        self.url = url
    }

    /// Reads an answer: a 2xx must be a `checkout.session` with an `id` and a `url`; anything
    /// else throws, with Stripe's own message when the body is Stripe's error.
    public static func parse(status: Int, body: some Collection<UInt8>) throws(StripeAPIError) -> StripeCheckoutAnswer {
        let object = (try? JSONParser.parse(Array(body)))?.objectValue
        guard (200..<300).contains(status) else { throw stripeError(status: status, object: object) }
        guard let object else { throw StripeAPIError(status: status, message: "the answer is not a JSON object") }
        guard object["object"]?.stringValue == "checkout.session" else {
            throw StripeAPIError(status: status, message: "the answer is not a checkout.session")
        }
        guard let id = object["id"]?.stringValue, !id.isEmpty else {
            throw StripeAPIError(status: status, message: "the answer has no session id")
        }
        guard let url = object["url"]?.stringValue, url.hasPrefix("https://") else {
            throw StripeAPIError(status: status, message: "the answer has no https url")
        }
        return StripeCheckoutAnswer(id: id, url: url)
    }

    private static func stripeError(status: Int, object: JSONObject?) -> StripeAPIError {
        guard let error = object?["error"]?.objectValue, let message = error["message"]?.stringValue else {
            return StripeAPIError(status: status, message: "the answer is not a Stripe error")
        }
        return StripeAPIError(
            status: status, type: error["type"]?.stringValue, code: error["code"]?.stringValue, message: message)
    }
}
