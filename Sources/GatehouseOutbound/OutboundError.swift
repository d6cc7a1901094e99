/// Why an outgoing request has no answer worth reading: a stable code, and a message for logs.
public struct OutboundError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The host's name did not resolve, or nothing accepted the connection.
        case cannotConnect = "cannot_connect"
        /// The connection or the whole exchange took longer than the request allows.
        case timedOut = "timed_out"
        /// The connection broke before the answer was complete (or no answer came at all).
        case connectionLost = "connection_lost"
        /// The TLS handshake failed or the peer's certificate was refused.
        case tls
        /// An answer came, with a status the caller does not take (after any retries).
        case httpStatus = "http_status"
        /// The body was longer than the request's `responseBytesMax`.
        case responseTooLarge = "response_too_large"
        /// The request cannot be sent (a bad URL, a header with a line break).
        case invalidRequest = "invalid_request"
        /// Every address the host resolved to was one the request's address policy refuses.
        case addressRefused = "address_refused"
        /// Any other failure of the transfer.
        case transport
        /// The client was closed before the request was answered.
        case closed
        /// The task that waited was cancelled.
        case cancelled
    }

    public var code: Code
    /// What happened, for logs; never parse it.
    public var message: String
    /// The answer, for ``Code/httpStatus``.
    public var response: OutboundResponse?
    /// How long the attempt ran before it failed, when one had started (a monotonic clock).
    public var elapsed: Duration?

    public init(code: Code, message: String, response: OutboundResponse? = nil, elapsed: Duration? = nil) {
        self.code = code
        self.message = message
        self.response = response
        self.elapsed = elapsed
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// Failures that may pass by themselves: another attempt can succeed.
    public var isTransient: Bool {
        switch code {
        case .cannotConnect, .timedOut, .connectionLost, .transport: true
        case .httpStatus: response.map { RetryPolicy.isRetryableStatus($0.status) } ?? false
        case .tls, .responseTooLarge, .invalidRequest, .addressRefused, .closed, .cancelled: false
        }
    }

    /// The error for an answer whose status the caller does not take, with the start of its
    /// body (printable ASCII only: a body is not trusted to be text).
    public static func httpStatus(_ response: OutboundResponse) -> OutboundError {
        OutboundError(
            code: .httpStatus, message: "HTTP \(response.status)\(excerpt(response.body))", response: response,
            elapsed: response.elapsed)
    }

    static let excerptBytesMax = 200

    private static func excerpt(_ body: [UInt8]) -> String {
        guard !body.isEmpty else { return "" }
        let shown = body.prefix(excerptBytesMax).map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }
        let more = body.count > excerptBytesMax ? "… (\(body.count) bytes)" : ""
        return ": " + String(decoding: shown, as: UTF8.self) + more
    }
}
