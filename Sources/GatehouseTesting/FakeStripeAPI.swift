import GatehouseHTTP
import GatehouseStripe
import GatehouseWire
import Synchronization

/// A local stand-in for Stripe's create-Checkout-Session call (`POST /v1/checkout/sessions`) on
/// 127.0.0.1, which checks what it is sent as Stripe would take it: `Authorization: Bearer
/// <secret key>` (none or another key is Stripe's 401), `Stripe-Version` the pinned version, a
/// form body of known parameters with a `mode`, one price of quantity 1 and a `success_url`
/// (anything else is Stripe's 400, naming the parameter). An `Idempotency-Key` seen before
/// answers the session it made, or Stripe's `idempotency_error` for other parameters. Every
/// request is recorded; ``failNext(_:)`` makes the next ones fail.
public final class FakeStripeAPI: Sendable {
    public enum Fault: Sendable {
        /// Stripe's error body with this status and `error.type`.
        case stripeError(status: Int, type: String, message: String)
        case dropConnection
    }

    /// A request as it arrived, and why it was refused, if it was.
    public struct Seen: Sendable {
        /// 1 for the first request to arrive, then 2…
        public let order: Int
        public let method: String
        public let path: String
        public let authorization: String?
        public let stripeVersion: String?
        public let idempotencyKey: String?
        public let contentType: String?
        /// The form fields in the order sent (empty when the body was not a form).
        public let form: [(key: String, value: String)]
        /// Why the request was refused (`nil`: it was answered with a session).
        public let refusal: String?
        public let status: Int

        public var passed: Bool { refusal == nil }

        /// The value of form field `key`, as sent.
        public func field(_ key: String) -> String? {
            form.first { $0.key == key }?.value
        }
    }

    /// A session the fake made, with what it was asked for.
    public struct Session: Sendable {
        public let id: String
        public let url: String
        public let mode: String
        public let priceID: String
        public let clientReferenceID: String?
        public let customerEmail: String?
        public let metadata: [String: String]
        /// Where Checkout sends the buyer once they paid: `success_url` with
        /// `{CHECKOUT_SESSION_ID}` replaced by the session's id, as Stripe replaces it.
        public let returnURL: String
    }

    public let secretKey: String
    private let routes: Routes
    private let server: LoopbackHTTPServer

    public init(secretKey: String = StripeFixtures.secretKey) throws {
        self.secretKey = secretKey
        routes = Routes(secretKey: secretKey)
        server = try LoopbackHTTPServer { [routes] in routes.handle($0) }
    }

    /// What `--stripe-api-url` names.
    public var baseURL: String { server.baseURL }
    public var seen: [Seen] { routes.state.withLock { $0.seen } }
    public var sessions: [Session] { routes.state.withLock { $0.sessions } }

    public func stop() { server.stop() }

    /// The next requests that pass the key check fail like this, one fault each, in order.
    public func failNext(_ faults: Fault...) {
        routes.state.withLock { $0.faults += faults }
    }
}

extension FakeStripeAPI {
    fileprivate struct State {
        var faults: [Fault] = []
        var seen: [Seen] = []
        var sessions: [Session] = []
        /// Per idempotency key: the form it came with and the answer given.
        var replays: [String: (form: [String], body: [UInt8])] = [:]
    }

    /// A refusal as Stripe words it.
    fileprivate struct Refusal: Error {
        let status: Int
        let type: String
        let code: String?
        let param: String?
        let message: String

        init(_ status: Int, _ message: String, type: String = "invalid_request_error", code: String? = nil, param: String? = nil) {
            self.status = status
            self.type = type
            self.code = code
            self.param = param
            self.message = message
        }

        var body: [UInt8] {
            var error: JSONObject = ["message": .string(message), "type": .string(type)]
            if let code { error["code"] = .string(code) }
            if let param { error["param"] = .string(param) }
            return JSONWriter.serialize(.object(["error": .object(error)]))
        }
    }

    /// What the server thread runs for each request.
    fileprivate final class Routes: Sendable {
        let secretKey: String
        let state = Mutex(State())

        init(secretKey: String) {
            self.secretKey = secretKey
        }

        func handle(_ request: HTTPRequest) -> LoopbackReply {
            let form = StripeForm.decode(request.body) ?? []
            return state.withLock { state in
                let (reply, status, refusal) = outcome(of: request, form: form, state: &state)
                state.seen.append(
                    Seen(
                        order: state.seen.count + 1, method: request.method, path: request.path,
                        authorization: request.headers["Authorization"], stripeVersion: request.headers["Stripe-Version"],
                        idempotencyKey: request.headers["Idempotency-Key"], contentType: request.headers["Content-Type"],
                        form: form, refusal: refusal, status: status))
                return reply
            }
        }

        /// The reply, the status it carries (0 for none) and why the request was refused.
        private func outcome(of request: HTTPRequest, form: [(key: String, value: String)], state: inout State)
            -> (LoopbackReply, Int, String?)
        {
            do throws(Refusal) {
                try checkRoute(request)
                try checkKey(request)
                if !state.faults.isEmpty {
                    switch state.faults.removeFirst() {
                    case .stripeError(let status, let type, let message):
                        return (.respond(.json(status, Refusal(status, message, type: type).body)), status, "scripted fault")
                    case .dropConnection:
                        return (.drop, 0, "scripted fault")
                    }
                }
                return (.respond(.json(200, try answer(request, form: form, state: &state))), 200, nil)
            } catch {
                return (.respond(.json(error.status, error.body)), error.status, error.message)
            }
        }

        private func checkRoute(_ request: HTTPRequest) throws(Refusal) {
            guard request.method == "POST", request.path == StripeCheckoutRequest.path else {
                throw Refusal(404, "Unrecognized request URL (\(request.method): \(request.path)).")
            }
        }

        private func checkKey(_ request: HTTPRequest) throws(Refusal) {
            guard let authorization = request.headers["Authorization"], authorization.hasPrefix("Bearer ") else {
                throw Refusal(
                    401,
                    "You did not provide an API key. You need to provide your API key in the Authorization header, "
                        + "using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').")
            }
            let key = authorization.dropFirst("Bearer ".count)
            guard key == secretKey else {
                // Stripe shows only the key's prefix and last four characters.
                throw Refusal(401, "Invalid API Key provided: \(key.prefix(8))****\(key.suffix(4))", code: "api_key_invalid")
            }
        }

        /// A new session's body, or the one an idempotency key already got.
        private func answer(_ request: HTTPRequest, form: [(key: String, value: String)], state: inout State)
            throws(Refusal) -> [UInt8]
        {
            guard request.headers["Stripe-Version"] == StripeAPIVersion.pinned else {
                throw Refusal(400, "Invalid Stripe API version: \(request.headers["Stripe-Version"] ?? "(none)")")
            }
            guard request.headers["Content-Type"]?.hasPrefix("application/x-www-form-urlencoded") == true,
                StripeForm.decode(request.body) != nil
            else { throw Refusal(400, "Invalid request: the body is not application/x-www-form-urlencoded") }
            let signature = form.map { "\($0.key)=\($0.value)" }
            let key = request.headers["Idempotency-Key"]
            if let key, let earlier = state.replays[key] {
                guard earlier.form == signature else {
                    throw Refusal(
                        400,
                        "Keys for idempotent requests can only be used with the same parameters they were first used "
                            + "with. Try using a key other than '\(key)' if you meant to execute a different request.",
                        type: "idempotency_error")
                }
                return earlier.body
            }
            let session = try Self.session(from: form, number: state.sessions.count + 1)
            let body = Self.body(of: session, form: form)
            state.sessions.append(session)
            if let key { state.replays[key] = (signature, body) }
            return body
        }
    }
}

extension FakeStripeAPI.Routes {
    typealias Refusal = FakeStripeAPI.Refusal

    private static let metadataPrefixes = ["metadata[", "subscription_data[metadata][", "payment_intent_data[metadata]["]

    /// The session a valid form asks for; Stripe's 400 naming the parameter otherwise.
    static func session(from form: [(key: String, value: String)], number: Int) throws(Refusal) -> FakeStripeAPI.Session {
        let fields = Dictionary(form.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        let known: Set = [
            "mode", "line_items[0][price]", "line_items[0][quantity]", "success_url", "cancel_url", "client_reference_id",
            "customer_email",
        ]
        for field in form where !known.contains(field.key) && !metadataPrefixes.contains(where: field.key.hasPrefix) {
            throw Refusal(400, "Received unknown parameter: \(field.key)", code: "parameter_unknown", param: field.key)
        }
        guard let mode = fields["mode"] else { throw missing("mode") }
        guard mode == "subscription" || mode == "payment" else {
            throw Refusal(400, "Invalid mode: must be one of payment, setup, or subscription", param: "mode")
        }
        let other = mode == "subscription" ? "payment_intent_data" : "subscription_data"
        if let field = form.first(where: { $0.key.hasPrefix(other) }) {
            throw Refusal(400, "You can not pass `\(other)` in `\(mode)` mode.", param: field.key)
        }
        guard let price = fields["line_items[0][price]"] else { throw missing("line_items[0][price]") }
        guard fields["line_items[0][quantity]"] == "1" else {
            throw Refusal(400, "Quantity must be 1 for this fake", param: "line_items[0][quantity]")
        }
        guard let success = fields["success_url"] else { throw missing("success_url") }
        guard success.hasPrefix("https://") || success.hasPrefix("http://") else {
            throw Refusal(400, "Not a valid URL", code: "url_invalid", param: "success_url")
        }
        let id = "cs_test_a1Fake\(number)"
        return FakeStripeAPI.Session(
            id: id, url: "https://checkout.stripe.com/c/pay/\(id)", mode: mode, priceID: price,
            clientReferenceID: fields["client_reference_id"], customerEmail: fields["customer_email"],
            metadata: metadata(in: form, prefix: "metadata["), returnURL: success.replacing("{CHECKOUT_SESSION_ID}", with: id))
    }

    private static func missing(_ parameter: String) -> Refusal {
        Refusal(400, "Missing required param: \(parameter).", code: "parameter_missing", param: parameter)
    }

    private static func metadata(in form: [(key: String, value: String)], prefix: String) -> [String: String] {
        var metadata: [String: String] = [:]
        for field in form where field.key.hasPrefix(prefix) && field.key.hasSuffix("]") {
            metadata[String(field.key.dropFirst(prefix.count).dropLast())] = field.value
        }
        return metadata
    }

    /// An open session as Stripe answers its creation.
    static func body(of session: FakeStripeAPI.Session, form: [(key: String, value: String)]) -> [UInt8] {
        let text = { (value: String?) in JSONValue.optional(value) { .string($0) } }
        let metadata = JSONObject(
            members: session.metadata.sorted { $0.key < $1.key }.map { .init(key: $0.key, value: .string($0.value)) })
        let fields = Dictionary(form.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        let object: JSONObject = [
            "id": .string(session.id), "object": "checkout.session", "amount_subtotal": .null, "amount_total": .null,
            "cancel_url": text(fields["cancel_url"]), "client_reference_id": text(session.clientReferenceID),
            "created": .int(StripeFixtures.createdSeconds), "currency": .null, "customer": .null,
            "customer_email": text(session.customerEmail), "expires_at": .int(StripeFixtures.createdSeconds + 24 * 3600),
            "livemode": false, "metadata": .object(metadata), "mode": .string(session.mode), "payment_intent": .null,
            "payment_status": "unpaid", "status": "open", "subscription": .null,
            "success_url": text(fields["success_url"]), "ui_mode": "hosted", "url": .string(session.url),
        ]
        return JSONWriter.serialize(.object(object))
    }
}
