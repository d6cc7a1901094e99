import GatehouseBase
import GatehouseCore
import GatehouseHTTP
import GatehouseWire

/// The HTTP forms of Gatehouse's answers (HTTP.md): the status each error code maps to, and the
/// bodies of the errors HTTP decides before any op runs.
enum HTTPAnswers {
    /// Every 503 tells the client when to come back (HTTP.md, "Transport").
    static let retryAfter = (name: "Retry-After", value: "30")

    /// `POST /v1/op`'s status for an answer: 200 for `ok:true`, else by its error code.
    static func status(for code: ErrorCode?) -> Int {
        guard let code else { return 200 }
        switch code {
        case .badJSON, .badRequest, .invalidCustomerUserID, .invalidSignature, .wrongApp, .invalidToken, .expired: return 400
        case .unauthenticated, .unauthorized: return 401
        case .forbidden, .profileAnonymous: return 403
        case .notFound, .unknownOp: return 404
        case .conflict, .tokenInUse, .ownedByOther, .insufficientFunds, .purchaseBelongsToOtherUser: return 409
        case .lineTooLong: return 413
        case .overloaded, .readOnly: return 503
        case .internal: return 500
        }
    }

    /// An op's answer line as `POST /v1/op` gives it: the same bytes without the newline.
    static func op(_ line: [UInt8], code: ErrorCode?) -> HTTPResponse {
        let body = line.last == UInt8(ascii: "\n") ? Array(line.dropLast()) : line
        return decorated(.json(status(for: code), body))
    }

    /// `{"error":{"code":…,"message":…}}`, with the status of its code (or the one given).
    static func error(_ error: GatehouseError, status: Int? = nil) -> HTTPResponse {
        let body = JSONWriter.serialize(.object(["error": .object(Answer.errorObject(error))]))
        return decorated(.json(status ?? self.status(for: error.code), body))
    }

    static func json(_ status: Int, _ object: JSONObject) -> HTTPResponse {
        let response = HTTPResponse.json(status, JSONWriter.serialize(.object(object)))
        return status == 503 ? adding(retryAfter, to: response) : response
    }

    /// A 401 names the scheme to use (RFC 9110 §11.6.1); a 503 says when to retry.
    private static func decorated(_ response: HTTPResponse) -> HTTPResponse {
        switch response.status {
        case 401: adding((name: "WWW-Authenticate", value: "Bearer"), to: response)
        case 503: adding(retryAfter, to: response)
        default: response
        }
    }

    private static func adding(_ header: (name: String, value: String), to response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.append(header)
        return response
    }
}

/// What one loop's HTTP connections share: the formatted date of this second and the source of
/// request ids. Confined to the loop's thread.
final class HTTPFront {
    private var dates = HTTPDateCache()
    private var ids = HTTPRequestIDGenerator()

    var date: String { dates.string(unixSeconds: WallClock.now().components.seconds) }

    /// The request's own `X-Request-Id` when it is one to keep, else a fresh one.
    func requestID(for request: HTTPRequest) -> String {
        HTTPRequestID.accept(request.headers["X-Request-Id"]) ?? ids.next()
    }

    func freshRequestID() -> String { ids.next() }

    /// A whole response for a connection that is closed after it (the acceptor's 503, off any loop's front).
    static func standalone(_ response: HTTPResponse) -> [UInt8] {
        var ids = HTTPRequestIDGenerator()
        var output: [UInt8] = []
        HTTPResponseEncoder.encode(
            response, requestID: ids.next(), date: HTTPDate.format(unixSeconds: WallClock.now().components.seconds), keepAlive: false,
            requestVersionMinor: 1, headOnly: false, into: &output
        )
        return output
    }
}
