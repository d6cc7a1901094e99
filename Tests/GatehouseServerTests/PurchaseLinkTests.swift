import GatehouseCore
import GatehouseHTTP
import GatehouseServer
import GatehouseStripe
import GatehouseTesting
import GatehouseWire
import Testing

/// `GET /pay/{project}/{offering}/{package}` (DESIGN.md, "Web purchases and redemption links"):
/// a Checkout Session made through Stripe's API (a local fake that checks what it is sent) with
/// the project's secret key, and a 303 to it.
@Suite struct PurchaseLinks {
    typealias X = StripeFixtures

    static func config(secretKey: String? = X.secretKey) -> JSONValue {
        guard case .object(var object) = StoreFixture.config() else { preconditionFailure("an object") }
        var stripe: JSONObject = ["webhook_secrets": [.string(X.webhookSecret)],
                                  "prices": .object(JSONObject(members: [.init(key: X.priceID, value: "pro_monthly"),
                                                                         .init(key: "price_1Lifetime", value: "lifetime")]))]
        if let secretKey { stripe.append("secret_key", .string(secretKey)) }
        object["stores"] = ["test": true, "stripe": .object(stripe)]
        object.append("web", ["app_name": "Scanner", "app_store_url": "https://apps.apple.com/app/id1"])
        object.append("offerings", [["id": "default", "is_default": true, "packages": [
            ["id": "monthly", "type": "monthly", "product": "pro_monthly"], ["id": "life", "type": "lifetime", "product": "lifetime"],
            ["id": "extra", "product": "extra_monthly"],
        ]]])
        return .object(object)
    }

    static func run(publicURL: String? = "https://pay.example.com", _ body: (StoreFixture, FakeStripeAPI) async throws -> Void)
        async throws
    {
        let fake = try FakeStripeAPI()
        defer { fake.stop() }
        try await withTestServer({
            $0.stripeAPIURL = fake.baseURL
            $0.publicURL = publicURL
        }) { server in
            let f = try await StoreFixture.make(server)
            try await f.putConfig(config())
            try await body(f, fake)
        }
    }

    static func get(_ f: StoreFixture, _ target: String) async throws -> HTTPParsedResponse {
        try await HTTPListener.connect(f.server).request("GET", target)
    }

    @Test func aLinkMakesACheckoutSessionAndSendsTheBuyerThere() async throws {
        try await Self.run { f, fake throws in
            let response = try await Self.get(f, "/pay/acme/default/monthly?app_user_id=alice%2B1&email=a%40example.com")
            #expect(response.status == 303)
            let session = try #require(fake.sessions.last)
            #expect(response.headers["Location"] == session.url)
            #expect(session.mode == "subscription")
            #expect(session.priceID == X.priceID)
            #expect(session.clientReferenceID == "alice+1")
            #expect(session.customerEmail == "a@example.com")
            #expect(session.metadata == ["gatehouse_project": "acme", "product_id": "pro_monthly"])
            let seen = try #require(fake.seen.last)
            #expect(seen.passed, "\(seen.refusal ?? "")")
            #expect(seen.authorization == "Bearer \(X.secretKey)")
            #expect(seen.stripeVersion == StripeAPIVersion.pinned)
            #expect(seen.idempotencyKey?.hasPrefix("gh_") == true)
            #expect(seen.field("success_url") == "https://pay.example.com/pay/success?session_id={CHECKOUT_SESSION_ID}&project=acme")
            #expect(session.returnURL == "https://pay.example.com/pay/success?session_id=\(session.id)&project=acme")
            #expect(seen.field("cancel_url") == "https://apps.apple.com/app/id1")
            #expect(seen.field("subscription_data[metadata][product_id]") == "pro_monthly")
        }
    }

    @Test func aOneTimeProductIsAPaymentAndALinkWithoutAnAppUserIDNamesNobody() async throws {
        try await Self.run { f, fake throws in
            #expect(try await Self.get(f, "/pay/acme/default/life").status == 303)
            let session = try #require(fake.sessions.last)
            #expect(session.mode == "payment")
            #expect(session.clientReferenceID == nil)
            #expect(session.customerEmail == nil)
            #expect(fake.seen.last?.field("payment_intent_data[metadata][product_id]") == "lifetime")
        }
    }

    @Test func unknownProjectsOfferingsPackagesAndUnsoldProductsAre404() async throws {
        try await Self.run { f, fake throws in
            for target in ["/pay/nobody/default/monthly", "/pay/acme/other/monthly", "/pay/acme/default/weekly", "/pay/acme/default/extra"] {
                #expect(try await Self.get(f, target).status == 404, "\(target)")
            }
            try await f.putConfig(Self.config(secretKey: nil))
            #expect(try await Self.get(f, "/pay/acme/default/monthly").status == 404, "no secret key: no purchase links")
            #expect(fake.seen.isEmpty)
        }
    }

    @Test func aBadAppUserIDOrEmailIs400() async throws {
        try await Self.run { f, fake throws in
            let long = String(repeating: "a", count: 201)
            #expect(try await Self.get(f, "/pay/acme/default/monthly?app_user_id=\(long)").status == 400)
            #expect(try await Self.get(f, "/pay/acme/default/monthly?email=nobody").status == 400)
            #expect(try await Self.get(f, "/pay/acme/default/monthly?app_user_id=%zz").status == 400, "never read as naming nobody")
            #expect(fake.seen.isEmpty)
        }
    }

    @Test func stripeRefusingOrUnreachableIs502AndWithoutAPublicURLNothingIsAsked() async throws {
        try await Self.run { f, fake throws in
            fake.failNext(.dropConnection)
            #expect(try await Self.get(f, "/pay/acme/default/monthly").status == 502)
            try await f.putConfig(Self.config(secretKey: "sk_test_wrong_key"))
            #expect(try await Self.get(f, "/pay/acme/default/monthly").status == 502)
            #expect(fake.sessions.isEmpty)
        }
        try await Self.run(publicURL: nil) { f, fake throws in
            let unavailable = try await Self.get(f, "/pay/acme/default/monthly")
            #expect(unavailable.status == 503)
            #expect(unavailable.headers["Retry-After"] == "30", "every 503 says when to try again")
            #expect(fake.seen.isEmpty)
        }
    }
}
