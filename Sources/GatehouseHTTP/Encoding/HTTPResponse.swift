/// An answer before encoding. `HTTPResponseEncoder` adds what every answer carries (`Date`,
/// `X-Request-Id`, `Content-Length`, `Connection`), so `headers` holds only the others.
public struct HTTPResponse: Sendable {
    public var status: Int
    /// Extra headers (`Allow`, `Retry-After`, …), written after the standard ones in this order.
    public var headers: [(name: String, value: String)]
    public var contentType: String?
    public var body: [UInt8]

    public init(status: Int, contentType: String? = nil, body: [UInt8] = [], headers: [(name: String, value: String)] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    public static let jsonContentType = "application/json; charset=utf-8"
    public static let textContentType = "text/plain; charset=utf-8"

    public static func json(_ status: Int, _ body: [UInt8], headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, contentType: jsonContentType, body: body, headers: headers)
    }

    public static func text(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, contentType: textContentType, body: Array(text.utf8))
    }
}
