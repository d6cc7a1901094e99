import GatehouseBase
import GatehouseCore
import GatehouseHTTP
import GatehouseRuntime
import GatehouseStorage
import GatehouseWire

/// The RevenueCat-compatible REST (HTTP.md, "RevenueCat-compatible REST"): each endpoint a
/// translation onto the op table, run under the request's key as the line runs it, its answer
/// put in the form RevenueCat's SDKs decode. No rule is written here: the ops decide.
extension ServerCore {
    func revenueCat(_ route: RevenueCatRoute, parameters: [String: String], _ http: HTTPRequest, keys: KeyMemo) -> HTTPHandling {
        let request = RevenueCatRequest(http: http, parameters: parameters, nowMs: clock.nowMs())
        let session: Session
        switch revenueCatSession(for: route, http, keys: keys) {
        case .failure(let error): return .respond(request.response(error), .other(error.code))
        case .success(let known): session = known
        }
        switch route {
        case .health:
            return .respond(request.response(200, [:]), .other(nil))
        case .healthReport:
            return .respond(request.response(200, ["report_logs": false]), .other(nil))
        case .events:
            return .respond(request.response(200, [:]), .other(nil))
        case .subscriber:
            if let notModified = revalidate(request, session: session) { return .respond(notModified, .other(nil)) }
            return request.work(self, session) { steps throws(RevenueCatRefusal) in
                let shown = try await steps.findOrCreate(request.appUserID())
                return request.subscriber(shown, status: shown.created ? 201 : 200, steps)
            }
        case .identify:
            return request.work(self, session) { steps throws(RevenueCatRefusal) in try await self.identify(request, steps) }
        case .receipts:
            return request.work(self, session) { steps throws(RevenueCatRefusal) in try await self.receipts(request, steps) }
        case .attributes:
            return request.work(self, session) { steps throws(RevenueCatRefusal) in try await self.attributes(request, steps) }
        case .offerings:
            return request.work(self, session) { steps throws(RevenueCatRefusal) in
                _ = try request.appUserID()
                return request.answer(200, RevenueCatBodies.offerings(try await steps.config()))
            }
        case .productEntitlementMapping:
            return request.work(self, session) { steps throws(RevenueCatRefusal) in
                request.answer(200, RevenueCatBodies.productEntitlementMapping(try await steps.config()))
            }
        case .virtualCurrencies:
            return request.work(self, session) { steps throws(RevenueCatRefusal) in
                let shown = try await steps.findOrCreate(request.appUserID())
                return request.answer(200, RevenueCatBodies.virtualCurrencies(shown.view))
            }
        case .introEligibility:
            return request.work(self, session) { steps throws(RevenueCatRefusal) in try await self.introEligibility(request, steps) }
        case .deleteSubscriber:
            return request.work(self, session) { steps throws(RevenueCatRefusal) in
                let shown = try await steps.find(request.appUserID())
                _ = try await steps.run("profile.delete", ["profile_id": .string(shown.view.profile.id.description)])
                return request.answer(200, ["app_user_id": .string(request.rawAppUserID)])
            }
        case .promotional:
            return request.work(self, session) { steps throws(RevenueCatRefusal) in try await self.promotional(request, steps) }
        case .revokePromotionals:
            return request.work(self, session) { steps throws(RevenueCatRefusal) in
                let shown = try await steps.findOrCreate(request.appUserID())
                let reply = try await steps.run("entitlement.revoke", [
                    "profile_id": .string(shown.view.profile.id.description),
                    "entitlement": .string(request.parameters["entitlement"] ?? ""),
                ])
                return request.subscriber(reply.shown, status: 200, steps)
            }
        case .currencyTransaction:
            return request.work(self, session) { steps throws(RevenueCatRefusal) in try await self.currencyTransaction(request, steps) }
        case .redeemPurchase:
            return request.work(self, session) { steps throws(RevenueCatRefusal) in try await self.redeemPurchase(request, steps) }
        }
    }

    /// The session a route runs under: the principal of its `Authorization: Bearer` key, which
    /// must be a project's (and its secret key where the route needs it); none for the routes
    /// the SDK calls without one.
    private func revenueCatSession(for route: RevenueCatRoute, _ http: HTTPRequest, keys: KeyMemo) -> Result<Session, RevenueCatRefusal> {
        let session = Session()
        if route.key == .none { return .success(session) }
        let principal: Principal
        switch authenticate(http, keys: keys) {
        case .failure(let error): return .failure(RevenueCatRefusal(error))
        case .success(nil): return .failure(RevenueCatRefusal(GatehouseError(.unauthenticated, "Authorization: Bearer <key> is required")))
        case .success(let known?): principal = known
        }
        guard principal.project != nil else {
            return .failure(RevenueCatRefusal(GatehouseError(.forbidden, "the admin key runs no project's endpoints")))
        }
        if route.key == .secret, principal.role != .server {
            return .failure(RevenueCatRefusal(GatehouseError(.forbidden, "this endpoint needs the project's secret key")))
        }
        session.set(principal)
        return .success(session)
    }

    /// Answers a refused path or method in RevenueCat's error form under its paths, and in
    /// Gatehouse's elsewhere.
    func unrouted(_ http: HTTPRequest, _ error: GatehouseError, status: Int? = nil) -> HTTPResponse {
        guard RevenueCatRoute.owns(path: http.path) else { return HTTPAnswers.error(error, status: status) }
        let request = RevenueCatRequest(http: http, parameters: [:], nowMs: clock.nowMs())
        var refusal = RevenueCatRefusal(error)
        if let status { refusal.status = status }
        return request.response(refusal)
    }

    // MARK: Revalidation

    /// `GET /v1/subscribers/{id}` with an `X-RevenueCat-ETag` that still holds: 304, decided on the
    /// loop from what the project's actor published (the profile's document cursor and the
    /// config's), without entering the actor, as `sync` is. `nil`: the full answer is needed.
    private func revalidate(_ request: RevenueCatRequest, session: Session) -> HTTPResponse? {
        guard let sent = request.http.headers["X-RevenueCat-ETag"], !sent.isEmpty, let etag = SubscriberETag(parsing: sent),
            let principal = session.current, let project = principal.project,
            etag.holds(for: request.rawAppUserID, secret: principal.role == .server, board: project.syncBoard, nowMs: request.nowMs)
        else { return nil }
        return request.notModified(sent)
    }

    // MARK: Endpoints of several steps

    /// `POST /v1/subscribers/identify`: `profile.identify` of the profile `app_user_id` names.
    private func identify(_ request: RevenueCatRequest, _ steps: RevenueCatSteps) async throws(RevenueCatRefusal)
        -> HTTPWorkAnswer
    {
        let body = try request.bodyObject()
        let current = try await steps.findOrCreate(request.appUserID(body["app_user_id"]?.stringValue))
        let newID = try RevenueCatRequest.appUserIDText(body["new_app_user_id"]?.stringValue, field: "new_app_user_id")
        let reply = try await steps.run("profile.identify", [
            "profile_id": .string(current.view.profile.id.description), "customer_user_id": .string(newID),
        ])
        // The new id was unseen when the profile in use is a new one, or is the same profile
        // having taken it (it had another id, or none, before).
        let before = current.view.profile.customerUserID
        let unseen = reply.shown?.created == true
            || (reply.result["switched"] == .bool(false) && reply.shown?.view.profile.customerUserID != before)
        return request.subscriber(reply.shown, status: unseen ? 201 : 200, steps)
    }

    /// `POST /v1/subscribers/redeem_purchase`: `web.redeem` of the profile `app_user_id` names
    /// (found or created, as the SDK's other calls do); the subscriber object, or 7849 / 7852 / 7853.
    private func redeemPurchase(_ request: RevenueCatRequest, _ steps: RevenueCatSteps) async throws(RevenueCatRefusal)
        -> HTTPWorkAnswer
    {
        let body = try request.bodyObject()
        let token = try RevenueCatRequest.required(body["redemption_token"]?.stringValue, "redemption_token")
        let current = try await steps.findOrCreate(request.appUserID(body["app_user_id"]?.stringValue))
        let reply = try await steps.run("web.redeem", [
            "profile_id": .string(current.view.profile.id.description), "redemption_token": .string(token),
        ])
        return request.subscriber(reply.shown, status: 200, steps)
    }

    /// `POST /v1/receipts`: a StoreKit 2 signed transaction, reported or (for a restore) restored.
    private func receipts(_ request: RevenueCatRequest, _ steps: RevenueCatSteps) async throws(RevenueCatRefusal)
        -> HTTPWorkAnswer
    {
        let body = try request.bodyObject()
        let token = try RevenueCatRequest.required(body["fetch_token"]?.stringValue, "fetch_token")
        guard request.isApplePlatform else {
            throw RevenueCatRefusal(.invalidPlatform,
                                  "only purchases made through the App Store are taken (X-Platform \(request.platform ?? "absent"))")
        }
        guard SignedTransactionShape.looksLikeJWS(token) else {
            throw RevenueCatRefusal(.invalidReceipt,
                                  "fetch_token is not a StoreKit 2 signed transaction; StoreKit 1 receipts are not taken")
        }
        let restoring = body["is_restore"] == .bool(true) || body["initiation_source"] == .string("restore")
        let shown = try await steps.findOrCreate(request.appUserID(body["app_user_id"]?.stringValue))
        let profile = JSONValue.string(shown.view.profile.id.description)
        let reply: Reply
        if restoring {
            reply = try await steps.run("purchase.restore", [
                "profile_id": profile, "store": .string(TestStore.appStoreName), "signed_transactions": [.string(token)],
            ])
        } else {
            reply = try await steps.run("purchase.report", [
                "profile_id": profile, "store": .string(TestStore.appStoreName), "signed_transaction": .string(token),
            ])
        }
        return request.subscriber(reply.shown, status: 200, steps)
    }

    /// `POST /v1/subscribers/{id}/attributes`: `profile.attributes` with RevenueCat's
    /// `{key: {value, updated_at_ms}}`, which the op takes as it is.
    private func attributes(_ request: RevenueCatRequest, _ steps: RevenueCatSteps) async throws(RevenueCatRefusal) -> HTTPWorkAnswer {
        let body = try request.bodyObject()
        guard case .object(let attributes)? = body["attributes"] else {
            throw RevenueCatRefusal(.invalidSubscriberAttributes,
                                  "attributes: expected an object of {value, updated_at_ms}")
        }
        let shown = try await steps.findOrCreate(request.appUserID())
        _ = try await steps.run("profile.attributes", [
            "profile_id": .string(shown.view.profile.id.description), "attributes": .object(attributes),
        ])
        return request.answer(200, [:])
    }

    /// `POST /v1/subscribers/{id}/intro_eligibility`.
    private func introEligibility(_ request: RevenueCatRequest, _ steps: RevenueCatSteps) async throws(RevenueCatRefusal)
        -> HTTPWorkAnswer
    {
        let body = try request.bodyObject()
        guard case .array(let values)? = body["product_identifiers"] else {
            throw RevenueCatRefusal(GatehouseError.badField("product_identifiers", "expected a list of product ids"))
        }
        var products: [String] = []
        for value in values {
            guard case .string(let product) = value else {
                throw RevenueCatRefusal(GatehouseError.badField("product_identifiers", "expected strings"))
            }
            products.append(product)
        }
        let shown = try await steps.findOrCreate(request.appUserID())
        return request.answer(200, RevenueCatBodies.introEligibility(products, shown.view))
    }

    /// `POST /v1/subscribers/{id}/entitlements/{entitlement}/promotional`: `entitlement.grant`
    /// until `end_time_ms`, or for one of RevenueCat's durations.
    private func promotional(_ request: RevenueCatRequest, _ steps: RevenueCatSteps) async throws(RevenueCatRefusal)
        -> HTTPWorkAnswer
    {
        let body = try request.bodyObject()
        var grant: JSONObject = ["entitlement": .string(request.parameters["entitlement"] ?? "")]
        if let end = body["end_time_ms"], !end.isNull {
            grant.append("expires_ms", end)
        } else if case .string(let duration)? = body["duration"] {
            grant.append("duration", .string(duration))
        } else {
            throw RevenueCatRefusal(GatehouseError.badField("end_time_ms", "is required (or duration)"))
        }
        let shown = try await steps.findOrCreate(request.appUserID())
        grant.prepend("profile_id", .string(shown.view.profile.id.description))
        let reply = try await steps.run("entitlement.grant", grant)
        return request.subscriber(reply.shown, status: 201, steps)
    }

    /// `POST /v1/virtual-currencies/{app_user_id}/{code}/transactions`: `currency.transact`.
    private func currencyTransaction(_ request: RevenueCatRequest, _ steps: RevenueCatSteps) async throws(RevenueCatRefusal)
        -> HTTPWorkAnswer
    {
        let body = try request.bodyObject()
        var fields = try request.appUserID().lookupFields
        fields.append("currency", .string(request.parameters["code"] ?? ""))
        for key in ["amount", "idempotency_key", "reason"] {
            if let value = body[key] { fields.append(key, value) }
        }
        let reply = try await steps.run("currency.transact", fields)
        return request.answer(200, reply.result)
    }
}

/// The ops one REST request runs, one after another on the connection's inbox, under its
/// session: each failure becomes RevenueCat's error, and the answer waits for the newest change
/// any of them showed.
final class RevenueCatSteps: @unchecked Sendable {
    private let core: ServerCore
    private let session: Session
    /// Written only by the one task that runs the steps, in order.
    private(set) var durableAt: LSN?
    /// The last op run, which the request metrics count the request under.
    private(set) var lastOp = Operations.otherNumber

    init(core: ServerCore, session: Session) {
        self.core = core
        self.session = session
    }

    /// The project's published cursors (every REST route that runs steps has a project key).
    var board: SyncBoard? { session.current?.project?.syncBoard }

    /// Whether the secret key asks (its subscriber object shows the attributes).
    var isSecret: Bool { session.current?.role == .server }

    func run(_ op: String, _ fields: JSONObject) async throws(RevenueCatRefusal) -> Reply {
        let outcome = await core.run(Request(id: .null, op: op, fields: Fields(fields)), session: session)
        lastOp = Operations.number(of: op)
        if let position = outcome.durableAt { durableAt = max(durableAt ?? 0, position) }
        switch outcome.result {
        case .success(let reply): return reply
        case .failure(let error): throw RevenueCatRefusal(error)
        }
    }

    /// The profile `id` names, created when it is an install id or customer user id not seen before.
    func findOrCreate(_ id: AppUserID) async throws(RevenueCatRefusal) -> ShownProfile {
        let (op, fields) = id.findOrCreate
        return try shown(try await run(op, fields))
    }

    /// The profile `id` names, never created (the secret key's endpoints that remove).
    func find(_ id: AppUserID) async throws(RevenueCatRefusal) -> ShownProfile {
        try shown(try await run("profile.get", id.lookupFields))
    }

    func config() async throws(RevenueCatRefusal) -> ProjectConfig {
        guard let config = try await run("config.get", [:]).config else {
            preconditionFailure("config.get answers the config it shows")
        }
        return config
    }

    private func shown(_ reply: Reply) throws(RevenueCatRefusal) -> ShownProfile {
        guard let shown = reply.shown else { preconditionFailure("a profile op answers the profile it shows") }
        return shown
    }
}

extension RevenueCatRequest {
    /// Runs `body` on the connection's inbox; what it throws is answered as RevenueCat's error.
    func work(
        _ core: ServerCore, _ session: Session,
        _ body: @escaping @Sendable (RevenueCatSteps) async throws(RevenueCatRefusal) -> HTTPWorkAnswer
    ) -> HTTPHandling {
        .work { [self] in
            let steps = RevenueCatSteps(core: core, session: session)
            var answer: HTTPWorkAnswer
            do throws(RevenueCatRefusal) {
                answer = try await body(steps)
                answer.tally = RequestTally(op: steps.lastOp, code: nil)
            } catch {
                answer = HTTPWorkAnswer(response: response(error), tally: RequestTally(op: steps.lastOp, code: error.code))
            }
            answer.durableAt = steps.durableAt
            return answer
        }
    }
}
