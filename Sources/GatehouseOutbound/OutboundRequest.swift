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
    /// Whether a body longer than `responseBytesMax` is cut there, the answer keeping its status
    /// and the first `responseBytesMax` bytes, rather than failing as
    /// ``OutboundError/Code/responseTooLarge``: for answers read only for their status.
    public var discardsLongBodies: Bool
    /// The URL schemes the request may use, of `http` and `https`. Redirects are never followed.
    public var schemes: [String]
    /// Which addresses the connection may go to, checked on each address libcurl connects to.
    public var addressPolicy: AddressPolicy

    /// Which peers a request may connect to.
    public enum AddressPolicy: Sendable, Equatable {
        /// Any address the name resolves to.
        case any
        /// Public addresses only: a loopback, private, link-local, multicast, unspecified or
        /// broadcast address is ``OutboundError/Code/addressRefused`` (the targets an operator's
        /// users name, which must not reach into the server's own network). Proxies from the
        /// environment are not used, since the address connected to would then be the proxy's.
        case publicOnly
    }

    public init(
        method: String = "GET", url: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
        connectTimeout: Duration = .seconds(5), timeout: Duration = .seconds(15),
        responseBytesMax: Int = OutboundRequest.defaultResponseBytesMax, discardsLongBodies: Bool = false,
        schemes: [String] = ["http", "https"], addressPolicy: AddressPolicy = .any
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.connectTimeout = connectTimeout
        self.timeout = timeout
        self.responseBytesMax = responseBytesMax
        self.discardsLongBodies = discardsLongBodies
        self.schemes = schemes
        self.addressPolicy = addressPolicy
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
        if schemes.isEmpty || schemes.contains(where: { $0 != "http" && $0 != "https" }) {
            return "schemes must be some of http and https"
        }
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
