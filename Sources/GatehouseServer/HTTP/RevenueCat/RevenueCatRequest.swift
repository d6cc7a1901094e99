import GatehouseBase
import GatehouseCore
import GatehouseHTTP
import GatehouseRuntime
import GatehouseWire

/// One RevenueCat REST request as its endpoint reads it, and the answers it is given: JSON
/// bodies, each with `X-RevenueCat-Request-Time` (HTTP.md, "Answers").
struct RevenueCatRequest: Sendable {
    let http: HTTPRequest
    /// The path's captures, percent-decoded segment by segment.
    let parameters: [String: String]
    /// The server's time when the request was read: its `X-RevenueCat-Request-Time`.
    let nowMs: Int64

    /// `{app_user_id}` as the path gave it.
    var rawAppUserID: String { parameters["app_user_id"] ?? "" }

    /// `{app_user_id}` of the path.
    func appUserID() throws(RevenueCatRefusal) -> AppUserID {
        AppUserID(try Self.appUserIDText(rawAppUserID, field: "app_user_id"))
    }

    /// An app user id of the body.
    func appUserID(_ text: String?) throws(RevenueCatRefusal) -> AppUserID {
        AppUserID(try Self.appUserIDText(text, field: "app_user_id"))
    }

    /// An app user id that is there and not blank; what else it must be, the op it reaches decides.
    static func appUserIDText(_ text: String?, field: String) throws(RevenueCatRefusal) -> String {
        guard let text, !text.allSatisfy({ $0 == " " }) else {
            throw RevenueCatRefusal(.emptyAppUserID, "\(field) is required")
        }
        return text
    }

    static func required(_ value: String?, _ field: String) throws(RevenueCatRefusal) -> String {
        guard let value, !value.isEmpty else { throw RevenueCatRefusal(GatehouseError.badField(field, "is required")) }
        return value
    }

    /// The body, which must be a JSON object.
    func bodyObject() throws(RevenueCatRefusal) -> JSONObject {
        let value: JSONValue
        do {
            value = try http.body.withUnsafeBytes { body throws(JSONParseError) in try JSONParser.parse(body) }
        } catch {
            throw RevenueCatRefusal(GatehouseError(.badJSON, "the body is not JSON: \(error)"))
        }
        guard case .object(let object) = value else { throw RevenueCatRefusal(GatehouseError(.badJSON, "the body must be a JSON object")) }
        return object
    }

    /// `X-Platform`, compared without case (the iOS SDK sends `iOS`).
    var platform: String? { http.headers["X-Platform"] }

    /// Whether the app runs on one of Apple's platforms, whose purchases are the App Store's.
    var isApplePlatform: Bool {
        guard let platform = platform?.lowercased() else { return false }
        return ["ios", "ipados", "macos", "tvos", "watchos", "visionos", "mac catalyst", "maccatalyst"].contains(platform)
    }

    // MARK: Answers

    func response(_ status: Int, _ body: JSONObject, etag: String? = nil) -> HTTPResponse {
        var response = HTTPResponse.json(status, JSONWriter.serialize(.object(body)), headers: [requestTimeHeader])
        if let etag { response.headers.append((name: SubscriberETag.header, value: etag)) }
        return response
    }

    func response(_ refusal: RevenueCatRefusal) -> HTTPResponse {
        let error = refusal.error
        var response = HTTPResponse.json(error.status, JSONWriter.serialize(.object(error.json)), headers: [requestTimeHeader])
        if error.status == RevenueCatError.unavailableStatus { response.headers.append(HTTPAnswers.retryAfter) }
        if error.status == 401 { response.headers.append((name: "WWW-Authenticate", value: "Bearer")) }
        return response
    }

    /// 304: the subscriber object the client holds is still the one it would get.
    func notModified(_ etag: String) -> HTTPResponse {
        HTTPResponse(status: 304, headers: [requestTimeHeader, (name: SubscriberETag.header, value: etag)])
    }

    /// The tally is the work's to set (``work(_:_:_:)``).
    func answer(_ status: Int, _ body: JSONObject) -> HTTPWorkAnswer {
        HTTPWorkAnswer(response: response(status, body), tally: .other(nil))
    }

    /// The subscriber object of the profile an op showed; a `GET`'s carries its ETag (a `POST`
    /// is never revalidated).
    func subscriber(_ shown: ShownProfile?, status: Int, _ steps: RevenueCatSteps) -> HTTPWorkAnswer {
        guard let shown else { preconditionFailure("the op answers the profile it acted on") }
        let etag = http.method == "GET"
            ? steps.board.map { SubscriberETag(shown.view, requested: rawAppUserID, secret: steps.isSecret, board: $0) } : nil
        let body = RevenueCatBodies.customerInfo(shown.view, secret: steps.isSecret)
        return HTTPWorkAnswer(response: response(status, body, etag: etag?.text), tally: .other(nil))
    }

    private var requestTimeHeader: (name: String, value: String) { (name: "X-RevenueCat-Request-Time", value: String(nowMs)) }
}

/// What `fetch_token` must look like to be a StoreKit 2 signed transaction: a JWS in its
/// compact form, three base64url parts (a StoreKit 1 receipt is one base64 blob).
enum SignedTransactionShape {
    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    static func looksLikeJWS(_ token: String) -> Bool {
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return parts.count == 3 && parts.allSatisfy { part in
            !part.isEmpty && part.allSatisfy(isBase64URL)
        }
    }
}
