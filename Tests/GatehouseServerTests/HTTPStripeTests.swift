import GatehouseCore
import GatehouseHTTP
import GatehouseServer
import GatehouseStripe
import GatehouseTesting
import GatehouseWire
import Testing

/// `POST /v1/stores/stripe/{project}` (HTTP.md, "Store notifications"; DESIGN.md, "Web purchases
/// and redemption links"): Stripe's signed events of the pinned API version run `store.notify`;
/// a refused event changes nothing and does not use up its id.
@Suite struct HTTPStripe {
    typealias X = StripeFixtures
    static let secret = X.webhookSecret
    static let rotatedOut = "whsec_rotated_out_secret"

    static func config(livemode: Bool = false, secrets: [String] = [secret, rotatedOut], stripe: Bool = true) -> JSONValue {
        var config = StoreFixture.config()
        guard stripe, case .object(var object) = config else { return config }
        object["stores"] = ["test": true, "stripe": [
            "webhook_secrets": .array(secrets.map(JSONValue.string)), "secret_key": .string(X.secretKey),
            "prices": .object(JSONObject(members: [.init(key: X.priceID, value: "pro_monthly")])), "livemode": .bool(livemode),
        ]]
        object.append("web", ["app_name": "Scanner", "support_email": "help@example.com"])
        config = .object(object)
        return config
    }

    /// A server with the project configured for Stripe; `now` is the server's clock in seconds.
    static func run(livemode: Bool = false, _ body: (StoreFixture, Int64) async throws -> Void) async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await StoreFixture.make(server)
            try await f.putConfig(config(livemode: livemode))
            try await body(f, f.startMs / 1000)
        }
    }

    @discardableResult
    static func post(_ f: StoreFixture, _ event: JSONObject, secret: String = secret, timestamp: Int64, project: String = "acme",
                     signature: String? = nil) async throws -> (status: Int, body: JSONObject)
    {
        let body = X.body(event)
        let header = signature ?? X.signatureHeader(body: body, secret: secret, timestamp: timestamp)
        let client = try HTTPListener.connect(f.server)
        let response = try await client.request("POST", "/v1/stores/stripe/\(project)", headers: [("Stripe-Signature", header)], body: body)
        return (response.status, try HTTPListener.json(response))
    }

    static func checkout(_ now: Int64, reference: String? = nil, id: String? = nil) -> JSONObject {
        X.event(.checkoutSessionCompleted, X.checkoutSession(clientReferenceID: reference, createdSeconds: now), id: id, createdSeconds: now)
    }

    static func invoice(_ now: Int64, id: String = X.invoiceID, reason: String = "subscription_create", startSeconds: Int64? = nil)
        -> JSONObject
    {
        let start = startSeconds ?? now
        return X.event(.invoicePaid, X.invoice(id: id, billingReason: reason, periodStartSeconds: start, createdSeconds: start),
                       createdSeconds: start)
    }

    static func entitled(_ f: StoreFixture, _ profile: String) async throws -> Bool {
        try await StoreFixture.entitlement(f.get(profile))?["is_active"] == true
    }

    @Test func aCheckoutAndItsInvoiceEntitleTheNamedCustomerAndARepeatIsNotApplied() async throws {
        try await Self.run { f, now throws in
            let alice = try await f.create("alice")
            let checkout = try await Self.post(f, Self.checkout(now, reference: "alice"), timestamp: now)
            #expect(checkout.status == 200)
            #expect(checkout.body == ["applied": true])
            #expect(try await Self.post(f, Self.invoice(now), timestamp: now).body == ["applied": true])
            #expect(try await Self.entitled(f, alice.id))
            #expect(try await f.events().compactMap { $0.string("type") } == ["INITIAL_PURCHASE"])
            let again = try await Self.post(f, Self.invoice(now), timestamp: now)
            #expect(again.status == 200)
            #expect(again.body == ["applied": false])
            #expect(try await f.events().count == 1)
        }
    }

    @Test func aBuyerWithoutAnAppUserIDGetsAWebProfileHoldingTheirEmail() async throws {
        try await Self.run { f, now throws in
            try await Self.post(f, Self.checkout(now), timestamp: now)
            try await Self.post(f, Self.invoice(now), timestamp: now)
            let event = try #require(try await f.events().first)
            #expect(event.string("type") == "INITIAL_PURCHASE")
            let buyer = try #require(event.string("profile_id"), "the event names the web profile the checkout made")
            let document = try await f.get(buyer)
            #expect(document.string("customer_user_id") == nil)
            #expect(document.object("attributes")?.string("$email") == X.email)
            #expect(try await Self.entitled(f, buyer))
        }
    }

    @Test func theLineOpTakesTheSameEventByteForByte() async throws {
        try await Self.run { f, now throws in
            let body = X.body(Self.invoice(now))
            let answer = try await f.backend.call("store.notify", [
                "store": "stripe", "payload": .string(String(decoding: body, as: UTF8.self)),
                "stripe_signature": .string(X.signatureHeader(body: body, timestamp: now)),
            ])
            #expect(answer.isSuccess, "\(answer)")
            #expect(answer["applied"] == true)
            #expect(try await Self.post(f, Self.invoice(now), timestamp: now).body == ["applied": false])
        }
    }

    @Test func aTamperedBodyAnOldTimestampAndAWrongSecretAre400AndChangeNothing() async throws {
        try await Self.run { f, now throws in
            let body = X.body(Self.invoice(now))
            let signature = X.signatureHeader(body: body, timestamp: now)
            var tampered = body
            tampered[tampered.firstIndex(of: UInt8(ascii: "9"))!] = UInt8(ascii: "8")
            let client = try HTTPListener.connect(f.server)
            let response = try await client.request("POST", "/v1/stores/stripe/acme", headers: [("Stripe-Signature", signature)], body: tampered)
            #expect(response.status == 400)
            #expect(try HTTPListener.json(response).object("error")?.string("code") == "invalid_signature")
            let old = try await Self.post(f, Self.invoice(now), timestamp: now - 301)
            #expect(old.status == 400)
            #expect(old.body.object("error")?.string("code") == "invalid_signature")
            let stranger = try await Self.post(f, Self.invoice(now), secret: "whsec_somebody_else", timestamp: now)
            #expect(stranger.status == 400)
            let unsigned = try await Self.post(f, Self.invoice(now), timestamp: now, signature: "")
            #expect(unsigned.status == 400)
            #expect(try await f.events().isEmpty)
            // None used up the event's id.
            #expect(try await Self.post(f, Self.invoice(now), timestamp: now - 300).body == ["applied": true])
        }
    }

    @Test func anEventSignedWithTheSecretBeingRotatedOutIsTaken() async throws {
        try await Self.run { f, now throws in
            #expect(try await Self.post(f, Self.invoice(now), secret: Self.rotatedOut, timestamp: now).body == ["applied": true])
        }
    }

    @Test func anUpdateBeforeItsInvoiceIs404ThenAppliesOnceTheInvoiceCame() async throws {
        try await Self.run { f, now throws in
            let alice = try await f.create("alice")
            try await Self.post(f, Self.checkout(now, reference: "alice"), timestamp: now)
            let cancel = X.event(.customerSubscriptionUpdated, X.subscription(periodStartSeconds: now, cancelAtPeriodEnd: true),
                                 createdSeconds: now + 1)
            let early = try await Self.post(f, cancel, timestamp: now)
            #expect(early.status == 404)
            #expect(early.body.object("error")?.string("code") == "not_found")
            try await Self.post(f, Self.invoice(now), timestamp: now)
            #expect(try await Self.post(f, cancel, timestamp: now).body == ["applied": true])
            let subscription = try #require(StoreFixture.subscription(try await f.get(alice.id), X.subscriptionID))
            #expect(subscription["will_renew"] == false)
            #expect(try await f.events().compactMap { $0.string("type") } == ["INITIAL_PURCHASE", "CANCELLATION"])
        }
    }

    @Test func theNewPeriodItsInvoiceAndTheDeletionFollowTheSubscriptionsLife() async throws {
        try await Self.run { f, now throws in
            let alice = try await f.create("alice")
            try await Self.post(f, Self.checkout(now, reference: "alice"), timestamp: now)
            try await Self.post(f, Self.invoice(now), timestamp: now)
            let month = X.monthSeconds
            // Stripe moves the subscription into its next period, and pays that period's invoice
            // about an hour later: it stays entitled in between.
            let nextPeriod = X.event(.customerSubscriptionUpdated, X.subscription(periodStartSeconds: now + month),
                                     createdSeconds: now + month - 1)
            try await f.advance(month * 1000 - 1000)
            #expect(try await Self.post(f, nextPeriod, timestamp: now + month).body == ["applied": true])
            try await f.advance(3_601_000)
            #expect(try await Self.entitled(f, alice.id))
            let renewal = Self.invoice(now, id: "in_1Renewal", reason: "subscription_cycle", startSeconds: now + month)
            #expect(try await Self.post(f, renewal, timestamp: now + month + 3600).body == ["applied": true])
            #expect(try await Self.entitled(f, alice.id))
            let deleted = X.event(.customerSubscriptionDeleted,
                                  X.subscription(status: "canceled", periodStartSeconds: now + month, endedAtSeconds: now + month + 7200),
                                  createdSeconds: now + month + 7200)
            #expect(try await Self.post(f, deleted, timestamp: now + month + 3600).body == ["applied": true])
            #expect(try await !Self.entitled(f, alice.id))
            // The feed keeps a week: the first purchase has left it by now.
            let types = try await f.events().compactMap { $0.string("type") }
            #expect(types == ["RENEWAL", "EXPIRATION"])
        }
    }

    @Test func anEventOfTheOtherModeATypeNotUsedAndAPriceNotSoldAreNotApplied() async throws {
        try await Self.run { f, now throws in
            let live = X.event(.invoicePaid, X.invoice(periodStartSeconds: now), createdSeconds: now, livemode: true)
            #expect(try await Self.post(f, live, timestamp: now).body == ["applied": false])
            let other = X.event("customer.created", ["id": "cus_1", "object": "customer"], createdSeconds: now)
            #expect(try await Self.post(f, other, timestamp: now).body == ["applied": false])
            let unsold = X.event(.invoicePaid, X.invoice(id: "in_2", priceID: "price_1NotOurs", periodStartSeconds: now), createdSeconds: now)
            #expect(try await Self.post(f, unsold, timestamp: now).body == ["applied": false])
            #expect(try await f.events().isEmpty)
        }
    }

    @Test func anUnknownProjectAProjectWithoutStripeAndAMalformedBodyAreRefused() async throws {
        try await Self.run { f, now throws in
            #expect(try await Self.post(f, Self.invoice(now), timestamp: now, project: "nobody").status == 404)
            let client = try HTTPListener.connect(f.server)
            let garbage = Array("{not json".utf8)
            let malformed = try await client.request("POST", "/v1/stores/stripe/acme",
                                                     headers: [("Stripe-Signature", X.signatureHeader(body: garbage, timestamp: now))], body: garbage)
            #expect(malformed.status == 400)
            #expect(try HTTPListener.json(malformed).object("error")?.string("code") == "bad_request")
            try await f.putConfig(Self.config(stripe: false))
            let disabled = try await Self.post(f, Self.invoice(now), timestamp: now)
            #expect(disabled.status == 404)
            #expect(try await f.events().isEmpty)
        }
    }
}
