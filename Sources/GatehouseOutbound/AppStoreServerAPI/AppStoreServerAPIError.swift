/// Why the App Store Server API gave no usable answer: a stable code, and a message for logs.
public struct AppStoreServerAPIError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// Apple knows no such transaction (404, `errorCode` 4040010 or 4040005): in this
        /// environment, at least.
        case transactionNotFound = "transaction_not_found"
        /// Apple refused the token (401): the key, its id, the issuer id or the bundle id is
        /// wrong, or the key was revoked. Not retried.
        case unauthorized
        /// Apple could not be reached, or kept failing (5xx, 429, a retryable `errorCode`)
        /// until the retries ran out.
        case unavailable
        /// Apple refused the request (another 4xx).
        case rejected
        /// A success whose body is not what the API documents, or is too large.
        case invalidResponse = "invalid_response"
        /// Nothing was sent: a transaction id that cannot be one, or an environment Apple's
        /// API does not serve (`Xcode`, `LocalTesting`).
        case invalidRequest = "invalid_request"
    }

    public var code: Code
    /// What happened, for logs; never parse it.
    public var message: String
    /// The HTTP status of Apple's answer, when there was one.
    public var status: Int?
    /// Apple's `errorCode`, when its answer carried one.
    public var apiErrorCode: Int64?
    /// The outgoing request's failure, when the request failed.
    public var underlying: OutboundError?

    public init(code: Code, message: String, status: Int? = nil, apiErrorCode: Int64? = nil, underlying: OutboundError? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.apiErrorCode = apiErrorCode
        self.underlying = underlying
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
