public import GatehouseHTTP

/// One outgoing HTTP request: what to send, and how long and how much to wait for the answer.
public struct OutboundRequest: Sendable {
    /// The longest response body taken by default; a longer one is
    /// ``OutboundError/Code/responseTooLarge``.
    public static let defaultResponseBytesMax = 1 << 20

    /// `GET`, `POST`, … (upper case, as sent).
    public var method: String
    /// An absolute `http` or `https` URL.
    public var url: String
    /// Header fields sent as given, after the ones libcurl writes (`Host`, `Content-Length`).
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// How long to wait for the connection (and the TLS handshake).
    public var connectTimeout: Duration
    /// How long the whole exchange may take, connecting included.
    public var timeout: Duration
    public var responseBytesMax: Int

    public init(
        method: String = "GET", url: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
        connectTimeout: Duration = .seconds(5), timeout: Duration = .seconds(15),
        responseBytesMax: Int = OutboundRequest.defaultResponseBytesMax
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.connectTimeout = connectTimeout
        self.timeout = timeout
        self.responseBytesMax = responseBytesMax
    }

    /// Why the request cannot be sent as it is, or `nil`: a line break in a header would end it
    /// early and let a value smuggle in a header of its own.
    var refusal: String? {
        if method.isEmpty || method.utf8.contains(where: { !Self.isTokenByte($0) }) { return "method is not a token" }
        if url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) { return "URL holds a space or control character" }
        for (name, value) in headers {
            if name.isEmpty || name.utf8.contains(where: { !Self.isTokenByte($0) }) {
                return "header name \(name.debugDescription) is not a token"
            }
            if value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) { return "header \(name) holds a line break" }
        }
        if timeout <= .zero || connectTimeout <= .zero { return "timeouts must be positive" }
        if responseBytesMax < 0 { return "responseBytesMax is negative" }
        return nil
    }

    /// RFC 9110 §5.6.2 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
