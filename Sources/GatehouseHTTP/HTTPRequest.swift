/// A parsed request, as http_parser read it and the checks of `HTTPRequestParser` let it through.
public struct HTTPRequest: Sendable {
    /// "GET", "POST", …, as http_parser names it.
    public var method: String
    /// The raw request-target.
    public var target: String
    /// `target` up to the first "?", not percent-decoded (`HTTPPath.segments` decodes it).
    public var path: String
    /// What follows the first "?", not decoded; nil without a "?".
    public var query: String?
    public var versionMajor: Int
    public var versionMinor: Int
    public var headers: HTTPHeaders
    /// The body, de-chunked.
    public var body: [UInt8]
    /// Whether the connection may carry another request (http_should_keep_alive: HTTP/1.1
    /// unless `Connection: close`, HTTP/1.0 only with `Connection: keep-alive`).
    public var keepAlive: Bool

    public init(
        method: String, target: String, versionMajor: Int = 1, versionMinor: Int = 1, headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8] = [], keepAlive: Bool = true
    ) {
        self.method = method
        self.target = target
        if let question = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
            path = String(target[..<question])
            query = String(target[target.index(after: question)...])
        } else {
            path = target
            query = nil
        }
        self.versionMajor = versionMajor
        self.versionMinor = versionMinor
        self.headers = headers
        self.body = body
        self.keepAlive = keepAlive
    }
}

/// Why a request was refused, and the status to answer it with before closing.
public struct HTTPParseError: Error, Sendable, Equatable {
    /// 400, 413 or 431.
    public var status: Int
    /// A short sentence for the answer's body.
    public var reason: String

    public init(status: Int, reason: String) {
        self.status = status
        self.reason = reason
    }
}

public enum HTTPParseResult: Sendable {
    case needMoreData
    case request(HTTPRequest)
    case failure(HTTPParseError)
}
