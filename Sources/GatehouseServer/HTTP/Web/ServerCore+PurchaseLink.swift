import Foundation
import GatehouseBase
import GatehouseCore
import GatehouseHTTP
import GatehouseOutbound
import GatehouseRuntime
import GatehouseStripe

/// `GET /pay/{project}/{offering}/{package}?app_user_id=…&email=…` (DESIGN.md, "Web purchases
/// and redemption links"): makes a Stripe Checkout Session for the package's product with the
/// project's secret key and sends the buyer there (303). The call to Stripe runs off the loop and
/// off the project's actor; nothing in the project changes (Stripe's events do that).
extension ServerCore {
    func purchaseLink(_ http: HTTPRequest, parameters: [String: String]) -> HTTPHandling {
        let names = (parameters["project"] ?? "", parameters["offering"] ?? "", parameters["package"] ?? "")
        // A query that does not parse is refused, never read as naming nobody: that would sell to
        // a new web profile what the link meant for a customer.
        let query = Self.queryValues(http.query)
        let appUserID = query?["app_user_id"].flatMap { $0.isEmpty ? nil : $0 }
        let email = query?["email"].flatMap { $0.isEmpty ? nil : $0 }
        return .work { [self] in
            do throws(PurchaseLinkRefusal) {
                guard query != nil else { throw PurchaseLinkRefusal(400, .badRequest, "The link's query does not parse.") }
                let checkout = try await checkoutRequest(names, appUserID: appUserID, email: email)
                let url = try await createCheckout(checkout.request, secretKey: checkout.secretKey)
                let response = HTTPResponse(status: 303, contentType: "text/plain; charset=utf-8",
                                            body: Array("See \(url)\n".utf8), headers: [("Location", url), ("Cache-Control", "no-store")])
                return HTTPWorkAnswer(response: response, tally: .other(nil), durableAt: nil)
            } catch {
                // Every 503 says when to try again (HTTP.md, "Answers").
                let headers = [("Cache-Control", "no-store")] + (error.status == 503 ? [HTTPAnswers.retryAfter] : [])
                let response = HTTPResponse(status: error.status, contentType: "text/plain; charset=utf-8",
                                            body: Array((error.message + "\n").utf8), headers: headers)
                return HTTPWorkAnswer(response: response, tally: .other(error.code), durableAt: nil)
            }
        }
    }

    /// The session for the package's product, from the config as it is now.
    private func checkoutRequest(_ names: (project: String, offering: String, package: String), appUserID: String?, email: String?)
        async throws(PurchaseLinkRefusal) -> (request: StripeCheckoutRequest, secretKey: String)
    {
        guard let id = try? ProjectID(validating: names.project), let project = registry.project(id) else {
            throw PurchaseLinkRefusal(404, .notFound, "No such project.")
        }
        let config = await project.config().value
        guard let stripe = config.stores.stripe, let secretKey = stripe.secretKey else {
            throw PurchaseLinkRefusal(404, .notFound, "This project does not sell on the web.")
        }
        guard let package = config.offering(id: names.offering)?.packages.first(where: { $0.id == names.package }),
            let product = config.product(id: package.product), let price = stripe.price(forProduct: product.id)
        else { throw PurchaseLinkRefusal(404, .notFound, "No such offering or package for sale on the web.") }
        if let appUserID, appUserID.count > Self.clientReferenceMax || appUserID.unicodeScalars.contains(where: { $0.value < 0x20 }) {
            throw PurchaseLinkRefusal(400, .badRequest, "app_user_id must be 1–\(Self.clientReferenceMax) characters.")
        }
        if let email, email.count > 254 || !email.contains("@") || email.unicodeScalars.contains(where: { $0.value <= 0x20 }) {
            throw PurchaseLinkRefusal(400, .badRequest, "email must be an email address.")
        }
        guard let base = publicBase else {
            throw PurchaseLinkRefusal(503, .internal, "The server has no public URL (--public-url) to send buyers back to.")
        }
        // The success page is told the project: a session id names none, and the buyer may land
        // there before Stripe's event about the session has arrived.
        let request = StripeCheckoutRequest(
            priceID: price, mode: product.type == .subscription ? .subscription : .payment,
            successURL: base + "/pay/success?session_id={CHECKOUT_SESSION_ID}&project=" + id.description,
            cancelURL: config.web?.appStoreURL ?? base + "/pay/success?canceled=1&project=" + id.description,
            clientReferenceID: appUserID, customerEmail: email,
            metadata: ["gatehouse_project": id.description, "product_id": product.id])
        return (request, secretKey)
    }

    /// The query's values by name (the first of a repeated one), percent-decoded; `nil` when it
    /// does not parse or a name or value holds an escape that decodes to nothing.
    static func queryValues(_ query: String?) -> [String: String]? {
        // Foundation reads a `%` that starts no escape as itself; such a query is refused here.
        let bytes = Array((query ?? "").utf8)
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "%") {
            guard index + 2 < bytes.count, Hex.decode(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self)) != nil
            else { return nil }
        }
        guard let items = URLComponents(string: "/?" + (query ?? ""))?.percentEncodedQueryItems else { return nil }
        var values: [String: String] = [:]
        for item in items {
            guard let name = item.name.removingPercentEncoding, let value = (item.value ?? "").removingPercentEncoding else { return nil }
            if values[name] == nil { values[name] = value }
        }
        return values
    }

    /// Stripe's `client_reference_id` takes at most 200 characters.
    static let clientReferenceMax = 200

    /// Stripe's answer: the Checkout page's address.
    private func createCheckout(_ checkout: StripeCheckoutRequest, secretKey: String) async throws(PurchaseLinkRefusal) -> String {
        let idempotencyKey = "gh_" + Hex.encode(registry.random.randomBytes(count: 16))
        let headers = StripeCheckoutRequest.headers(secretKey: secretKey, idempotencyKey: idempotencyKey)
        let request = OutboundRequest(
            method: "POST", url: configuration.stripeAPIURL + checkout.path, headers: HTTPHeaders(headers.map { ($0.name, $0.value) }),
            body: checkout.formBody(), timeout: .seconds(20))
        switch await outbound.send(request) {
        case .failure(let error):
            logger.warning("stripe checkout: \(error)")
            throw PurchaseLinkRefusal(502, .internal, "Stripe could not be reached; try again in a moment.")
        case .success(let response):
            do throws(StripeAPIError) {
                return try StripeCheckoutAnswer.parse(status: response.status, body: response.body).url
            } catch {
                logger.warning("stripe checkout: \(error)")
                throw PurchaseLinkRefusal(502, .internal, "Stripe refused to start the checkout; try again in a moment.")
            }
        }
    }
}

/// Why a purchase link answers no page: its status, code (for the metrics) and a line for the buyer.
struct PurchaseLinkRefusal: Error {
    let status: Int
    let code: ErrorCode
    let message: String

    init(_ status: Int, _ code: ErrorCode, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }
}
