public import GatehouseHTTP

/// The answer to an ``OutboundRequest``: any status, with its headers and its whole body.
public struct OutboundResponse: Sendable {
    public var status: Int
    /// The header fields of the final response (not those of a `100 Continue` before it).
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// How long the exchange took, from the transfer's start to its end (a monotonic clock).
    public var elapsed: Duration

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], elapsed: Duration = .zero) {
        self.status = status
        self.headers = headers
        self.body = body
        self.elapsed = elapsed
    }

    /// 2xx.
    public var isSuccess: Bool { (200...299).contains(status) }

    /// `Retry-After` in its delay-seconds form (RFC 9110 §10.2.3); `nil` when absent or given
    /// as a date, which no service this server calls sends.
    public var retryAfter: Duration? {
        guard let text = headers["Retry-After"], !text.isEmpty, text.utf8.count <= 9,
            text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let seconds = Int64(text)
        else { return nil }
        return .seconds(seconds)
    }
}
