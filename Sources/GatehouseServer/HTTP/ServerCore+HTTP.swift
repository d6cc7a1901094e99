import GatehouseBase
import GatehouseCore
import GatehouseHTTP
import GatehouseRuntime
import GatehouseStorage
import GatehouseWire

/// What the HTTP listener serves (HTTP.md, "Gatehouse's own endpoints" and "Store notifications").
enum HTTPRoute: Sendable {
    case health
    case readiness
    case metrics
    case op
    case appStoreNotification
    case stripeNotification
    case purchaseLink
    case redemptionPage
    case successPage
    case revenueCat(RevenueCatRoute)

    static let router: HTTPRouter<HTTPRoute> = {
        var router = HTTPRouter<HTTPRoute>()
        router.add("GET", "/healthz", .health)
        router.add("GET", "/readyz", .readiness)
        router.add("GET", "/metrics", .metrics)
        router.add("POST", "/v1/op", .op)
        router.add("POST", "/v1/stores/app-store/{project}", .appStoreNotification)
        router.add("POST", "/v1/stores/stripe/{project}", .stripeNotification)
        router.add("GET", "/pay/{project}/{offering}/{package}", .purchaseLink)
        router.add("GET", "/pay/r/{token}", .redemptionPage)
        router.add("GET", "/pay/success", .successPage)
        for (method, pattern, route) in RevenueCatRoute.patterns { router.add(method, pattern, .revenueCat(route)) }
        return router
    }()
}

/// How an HTTP request is answered: at once on the loop, or by an op run on the connection's inbox.
enum HTTPHandling {
    case respond(HTTPResponse, RequestTally)
    /// `answer` turns the op's outcome into the response, on the loop, once the outcome is durable.
    case run(Request, Session, answer: @Sendable (RunOutcome) -> (HTTPResponse, RequestTally))
    /// Several ops, one after another on the connection's inbox (``ServerCore/run(_:session:)``
    /// each); the response goes out once the position it names is durable.
    case work(@Sendable () async -> HTTPWorkAnswer)
}

/// What ``HTTPHandling/work(_:)`` answers.
struct HTTPWorkAnswer: Sendable {
    var response: HTTPResponse
    var tally: RequestTally
    /// The newest change the response shows (of every op it ran), which must be durable first.
    var durableAt: LSN?
}

/// The HTTP routes as translations onto the op table: the same dispatch, roles, limits,
/// durability and answers as the line protocol, never a second implementation of a rule.
extension ServerCore {
    func handle(_ route: HTTPRoute, parameters: [String: String], _ request: HTTPRequest, keys: KeyMemo) -> HTTPHandling {
        switch route {
        case .health:
            return .respond(HTTPAnswers.json(200, ["status": "ok"]), .other(nil))
        case .readiness:
            return .respond(readiness(), .other(nil))
        case .metrics:
            return .respond(metrics(request, keys: keys), .other(nil))
        case .op:
            return op(request, keys: keys)
        case .appStoreNotification:
            return appStoreNotification(request, project: parameters["project"] ?? "")
        case .stripeNotification:
            return stripeNotification(request, project: parameters["project"] ?? "")
        case .purchaseLink:
            return purchaseLink(request, parameters: parameters)
        case .redemptionPage:
            return redemptionPage(token: parameters["token"] ?? "")
        case .successPage:
            return successPage(request)
        case .revenueCat(let route):
            return revenueCat(route, parameters: parameters, request, keys: keys)
        }
    }

    /// `GET /readyz`: ready once recovery is done (the listener opens only then) and writes are taken.
    private func readiness() -> HTTPResponse {
        if isStopping { return HTTPAnswers.json(503, ["status": "stopping"]) }
        if engine.log.isReadOnly { return HTTPAnswers.json(503, ["status": "read_only"]) }
        return HTTPAnswers.json(200, ["status": "ready"])
    }

    /// `GET /metrics`: the admin key's, unless `--metrics-public`. Reads counters and published
    /// state only: it never enters a project's actor or waits for a write.
    private func metrics(_ request: HTTPRequest, keys: KeyMemo) -> HTTPResponse {
        if !configuration.metricsPublic {
            let principal: Principal
            switch authenticate(request, keys: keys) {
            case .failure(let error): return HTTPAnswers.error(error)
            case .success(nil): return HTTPAnswers.error(GatehouseError(.unauthenticated, "GET /metrics needs the admin key"))
            case .success(let known?): principal = known
            }
            guard principal.role == .admin else {
                return HTTPAnswers.error(GatehouseError(.forbidden, "role \(principal.role.rawValue) may not read the metrics"))
            }
        }
        return HTTPResponse(status: 200, contentType: PrometheusText.contentType, body: metricsText())
    }

    /// `POST /v1/op`: the body is one request object, run as the line runs it under the key's
    /// session; without a key the session is the line's before `hello`, so the answer is the
    /// line's `unauthenticated`.
    private func op(_ http: HTTPRequest, keys: KeyMemo) -> HTTPHandling {
        let session = Session()
        switch authenticate(http, keys: keys) {
        case .failure(let error):
            // Answered as the line answers a request after a failed `hello`: with its own id.
            let request = try? Request(line: http.body)
            let op = request.map { Operations.number(of: $0.op) } ?? Operations.otherNumber
            return .respond(HTTPAnswers.op(Answer.failure(id: request?.id ?? .null, error), code: error.code),
                            RequestTally(op: op, code: error.code))
        case .success(let principal):
            if let principal { session.set(principal) }
        }
        let outcome = http.body.withUnsafeBytes { body in
            handleLine(body, session: session, canRunInline: true, heldConnection: false)
        }
        switch outcome {
        case .answer(let bytes, let tally):
            return .respond(HTTPAnswers.op(bytes, code: tally.code), tally)
        case .deferred(let request, let operation):
            let op = operation.number
            return .run(request, session) { outcome in
                (HTTPAnswers.op(outcome.answer, code: outcome.code), RequestTally(op: op, code: outcome.code))
            }
        }
    }

    /// `POST /v1/stores/app-store/{project}`: Apple's body, run as `store.notify` with the
    /// project's secret role; Apple's signature is what authenticates it.
    private func appStoreNotification(_ http: HTTPRequest, project name: String) -> HTTPHandling {
        guard let project = notifiedProject(name) else { return Self.unknownProject(name) }
        let payload: JSONValue
        do {
            payload = try http.body.withUnsafeBytes { body throws(JSONParseError) in try JSONParser.parse(body) }
        } catch {
            let refusal = GatehouseError(.badRequest, "the body is not JSON: \(error)")
            return .respond(HTTPAnswers.error(refusal), Self.notifyTally(refusal.code))
        }
        return notify(project, ["store": .string(TestStore.appStoreName), "signed_payload": payload])
    }

    /// `POST /v1/stores/stripe/{project}`: Stripe's event, byte for byte, and its
    /// `Stripe-Signature`, run as `store.notify`; the signature is what authenticates it.
    private func stripeNotification(_ http: HTTPRequest, project name: String) -> HTTPHandling {
        guard let project = notifiedProject(name) else { return Self.unknownProject(name) }
        var fields: JSONObject = ["store": .string(TestStore.stripeName), "payload": .string(String(decoding: http.body, as: UTF8.self))]
        if let signature = http.headers["Stripe-Signature"] { fields.append("stripe_signature", .string(signature)) }
        return notify(project, fields)
    }

    private func notifiedProject(_ name: String) -> Project? {
        guard let id = try? ProjectID(validating: name) else { return nil }
        return registry.project(id)
    }

    private static func unknownProject(_ name: String) -> HTTPHandling {
        let error = GatehouseError.notFound("project \"\(name.prefix(64))\"")
        return .respond(HTTPAnswers.error(error), notifyTally(error.code))
    }

    /// A store's notification, run as `store.notify` with the project's secret role.
    private func notify(_ project: Project, _ fields: JSONObject) -> HTTPHandling {
        let session = Session()
        session.set(.project(project, .secret, generation: project.published.generation(of: .secret)))
        let request = Request(id: .null, op: PurchaseOperations.notify.name, fields: Fields(fields))
        return .run(request, session) { outcome in (Self.storeAnswer(outcome), Self.notifyTally(outcome.code)) }
    }

    private static func notifyTally(_ code: ErrorCode?) -> RequestTally {
        RequestTally(op: PurchaseOperations.notifyNumber, code: code)
    }

    /// A store's answer (HTTP.md, "Store notifications"): 200 for applied and for a duplicate,
    /// so the store stops retrying; 404 for a store the project has not enabled.
    private static func storeAnswer(_ outcome: RunOutcome) -> HTTPResponse {
        switch outcome.result {
        case .success(let reply):
            return HTTPAnswers.json(200, ["applied": reply.result["applied"] ?? .bool(false)])
        case .failure(let error):
            if error == TestStore.notEnabled(TestStore.appStoreName) || error == TestStore.notEnabled(TestStore.stripeName) {
                return HTTPAnswers.error(GatehouseError(.notFound, error.message))
            }
            switch error.code {
            case .badJSON, .badRequest, .invalidSignature, .wrongApp, .notFound, .readOnly, .overloaded: return HTTPAnswers.error(error)
            default: return HTTPAnswers.error(error, status: 500)
            }
        }
    }

    /// The principal of the request's `Authorization: Bearer` key, checked as `hello` checks it;
    /// `nil` without one. A key that is not valid is `unauthorized`. The key the connection
    /// presented last is not checked again while its principal is current (``KeyMemo``).
    func authenticate(_ request: HTTPRequest, keys: KeyMemo) -> Result<Principal?, GatehouseError> {
        guard let authorization = request.headers["Authorization"] else { return .success(nil) }
        if let principal = keys.principal(for: authorization) { return .success(principal) }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            return .failure(GatehouseError(.unauthenticated, "Authorization must be \"Bearer <key>\""))
        }
        guard let principal = registry.authenticate(key: String(parts[1])) else {
            return .failure(GatehouseError(.unauthorized, "the key is not valid"))
        }
        keys.remember(authorization, as: principal)
        return .success(principal)
    }
}

/// The last `Authorization` an HTTP connection sent and the principal it stood for. A
/// keep-alive client sends the same key with every request, and checking it again (a parse, a
/// lookup and a SHA-256) was a quarter of a revalidation's time on the loop. It is used only while
/// the principal is current: a rotated key or a deleted project is checked again, and refused.
/// Confined to the connection's loop thread.
final class KeyMemo {
    private var authorization: String?
    private var principal: Principal?

    func principal(for authorization: String) -> Principal? {
        guard authorization == self.authorization, let principal, principal.isCurrent else { return nil }
        return principal
    }

    func remember(_ authorization: String, as principal: Principal) {
        self.authorization = authorization
        self.principal = principal
    }
}
