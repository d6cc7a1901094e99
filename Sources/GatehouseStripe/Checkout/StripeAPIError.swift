/// Why a call of Stripe's API gave no usable answer: Stripe's own error body
/// (`{"error":{"type","message",…}}`), or an answer that is not what Stripe sends.
public struct StripeAPIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status of the answer.
    public var status: Int
    /// Stripe's `error.type` (`invalid_request_error`, `api_error`, `card_error`, …); `nil`
    /// when the answer was not a Stripe error body.
    public var type: String?
    /// Stripe's `error.code` (`resource_missing`, `parameter_missing`, …), when it gave one.
    public var code: String?
    /// Stripe's `error.message`, or what was wrong with the answer.
    public var message: String

    public init(status: Int, type: String? = nil, code: String? = nil, message: String) {
        self.status = status
        self.type = type
        self.code = code
        self.message = message
    }

    /// Whether the same call may succeed later: Stripe's advice is to retry a 409 (a concurrent
    /// request with the same idempotency key), a 429 and any 5xx, with the same key.
    public var isRetryable: Bool { status == 409 || status == 429 || status >= 500 }

    public var description: String {
        let kind = [type, code].compactMap { $0 }.joined(separator: "/")
        return "Stripe answered \(status)\(kind.isEmpty ? "" : " (\(kind))"): \(message)"
    }
}
