import GatehouseCore
import GatehouseHTTP
import GatehouseServer
import GatehouseStripe
import GatehouseTesting
import GatehouseWire
import Testing

/// Stripe's refunds and disputes over `POST /v1/stores/stripe/{project}` (DESIGN.md, "Web
/// purchases and redemption links"; docs/web.md): `charge.refunded` refunds the term its charge
/// paid for, which `invoice_payment.paid` and `invoice.paid` link it to, in proportion; a lost
/// dispute revokes. The events are signed as Stripe signs them.
@Suite struct HTTPStripeRefunds {
    typealias X = StripeFixtures

    /// `HTTPStripe`'s project, with `pro_monthly` granting 100 COINS on each paid term and
    /// `lifetime` 40 on its purchase.
    static func config() -> JSONValue {
        guard case .object(var object) = HTTPStripe.config() else { return HTTPStripe.config() }
        object["products"] = [
            ["id": "pro_monthly", "type": "subscription", "entitlements": ["pro"],
             "grants": [["currency": "COINS", "amount": 100, "on": "both"]]],
            ["id": "lifetime", "type": "non_consumable", "entitlements": ["pro"],
             "grants": [["currency": "COINS", "amount": 40, "on": "purchase"]]],
        ]
        object["currencies"] = [["code": "COINS", "name": "Coins"]]
        return .object(object)
    }

    /// A server whose project sells `pro_monthly` on Stripe, and `alice`, who bought it: the
    /// checkout, the first invoice (100 COINS) and, unless told not to, its payment's link.
    static func run(linked: Bool = true, _ body: (StoreFixture, String, Int64) async throws -> Void) async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await StoreFixture.make(server)
            try await f.putConfig(config())
            let now = f.startMs / 1000
            let alice = try await f.create("alice").id
            try await post(f, HTTPStripe.checkout(now, reference: "alice"), now)
            try await post(f, HTTPStripe.invoice(now), now)
            if linked { try await post(f, X.invoicePaymentPaid(createdSeconds: now), now) }
            #expect(try await coins(f, alice) == 100)
            try await body(f, alice, now)
        }
    }

    @discardableResult
    static func post(_ f: StoreFixture, _ event: JSONObject, _ now: Int64) async throws -> (status: Int, body: JSONObject) {
        try await HTTPStripe.post(f, event, timestamp: now)
    }

    static func coins(_ f: StoreFixture, _ profile: String) async throws -> Int64? {
        try await f.get(profile).object("currencies")?.int("COINS")
    }

    static func status(_ f: StoreFixture, _ profile: String) async throws -> String? {
        try await StoreFixture.subscription(f.get(profile), X.subscriptionID)?.string("status")
    }

    static func types(_ f: StoreFixture) async throws -> [String] {
        try await f.events().compactMap { $0.string("type") }
    }

    @Test func aPartialRefundClawsBackItsShareThenTheFullRefundMakesItRefunded() async throws {
        try await Self.run { f, alice, now throws in
            let partial = try await Self.post(f, X.chargeRefunded(amountRefunded: 250, createdSeconds: now + 60), now)
            #expect(partial.status == 200)
            #expect(partial.body == ["applied": true])
            #expect(try await Self.coins(f, alice) == 75, "floor(100 × 250 / 999)")
            #expect(try await Self.status(f, alice) == "active")
            #expect(try await HTTPStripe.entitled(f, alice))
            let refund = try #require(try await f.events().last)
            #expect(refund.string("type") == "VIRTUAL_CURRENCY_TRANSACTION")
            #expect(refund.string("source") == "refund")
            #expect(refund.int("amount") == -25)
            #expect(refund.string("ref") == X.invoiceID)

            // Stripe's next refund of the same charge carries the whole amount refunded so far.
            let full = try await Self.post(f, X.chargeRefunded(amountRefunded: 999, createdSeconds: now + 120), now)
            #expect(full.body == ["applied": true])
            #expect(try await Self.coins(f, alice) == 0)
            #expect(try await Self.status(f, alice) == "refunded")
            #expect(try await !HTTPStripe.entitled(f, alice))
            #expect(try await Self.types(f) == [
                "INITIAL_PURCHASE", "VIRTUAL_CURRENCY_TRANSACTION", "VIRTUAL_CURRENCY_TRANSACTION", "REFUND",
                "VIRTUAL_CURRENCY_TRANSACTION",
            ])
            // A retry of it is not applied again.
            let again = try await Self.post(f, X.chargeRefunded(amountRefunded: 999, createdSeconds: now + 120), now)
            #expect(again.body == ["applied": false])
            #expect(try await Self.types(f).count == 5)
        }
    }

    @Test func aRefundBeforeItsPaymentsLinkIs404ThenAppliesOnceTheLinkCame() async throws {
        try await Self.run(linked: false) { f, alice, now throws in
            let refund = X.chargeRefunded(amountRefunded: 500, createdSeconds: now + 60)
            let early = try await Self.post(f, refund, now)
            #expect(early.status == 404)
            #expect(early.body.object("error")?.string("code") == "not_found")
            #expect(try await Self.coins(f, alice) == 100)
            #expect(try await Self.post(f, X.invoicePaymentPaid(createdSeconds: now), now).body == ["applied": true])
            #expect(try await Self.post(f, refund, now).body == ["applied": true], "the refused event did not use up its id")
            #expect(try await Self.coins(f, alice) == 50)
        }
    }

    /// A charge made without a PaymentIntent is named by its own id, in its invoice payment and
    /// in its refund.
    @Test func aPaymentWithoutAPaymentIntentIsPlacedByItsCharge() async throws {
        try await Self.run(linked: false) { f, alice, now throws in
            let byCharge = X.invoicePaymentPaid(paymentIntentID: nil, chargeID: X.chargeID, createdSeconds: now)
            #expect(try await Self.post(f, byCharge, now).body == ["applied": true])
            let refund = X.chargeRefunded(amountRefunded: 999, paymentIntentID: nil, createdSeconds: now + 60)
            #expect(try await Self.post(f, refund, now).body == ["applied": true])
            #expect(try await Self.status(f, alice) == "refunded")
        }
    }

    @Test func aLostDisputeRevokesAndOtherOutcomesAreNotApplied() async throws {
        try await Self.run { f, alice, now throws in
            let opened = X.disputeEvent(.chargeDisputeCreated, status: "needs_response", createdSeconds: now + 60)
            #expect(try await Self.post(f, opened, now).body == ["applied": false])
            let won = X.disputeEvent(status: "won", createdSeconds: now + 120)
            #expect(try await Self.post(f, won, now).body == ["applied": false])
            #expect(try await HTTPStripe.entitled(f, alice))
            #expect(try await Self.coins(f, alice) == 100)

            let lost = X.disputeEvent(status: "lost", createdSeconds: now + 180)
            #expect(try await Self.post(f, lost, now).body == ["applied": true])
            #expect(try await Self.status(f, alice) == "revoked")
            #expect(try await !HTTPStripe.entitled(f, alice))
            #expect(try await Self.coins(f, alice) == 0)
            let events = try await f.events()
            #expect(events.compactMap { $0.string("type") }.suffix(2) == ["EXPIRATION", "VIRTUAL_CURRENCY_TRANSACTION"])
            #expect(events.last?.string("source") == "revoke")
        }
    }

    @Test func aOneTimePurchaseIsRefundedThroughItsPaymentIntent() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await StoreFixture.make(server)
            try await f.putConfig(Self.config())
            let now = f.startMs / 1000
            let alice = try await f.create("alice").id
            let session = X.checkoutSession(mode: "payment", clientReferenceID: "alice", amountTotal: 2900,
                                            metadata: ["product_id": "lifetime"], createdSeconds: now)
            try await Self.post(f, X.event(.checkoutSessionCompleted, session, createdSeconds: now), now)
            #expect(try await Self.coins(f, alice) == 40)
            try await Self.post(f, X.chargeRefunded(amountRefunded: 725, amount: 2900, createdSeconds: now + 60), now)
            #expect(try await Self.coins(f, alice) == 30)
            #expect(try await HTTPStripe.entitled(f, alice), "a partial refund leaves the purchase")
            try await Self.post(f, X.chargeRefunded(amountRefunded: 2900, amount: 2900, createdSeconds: now + 120), now)
            #expect(try await Self.coins(f, alice) == 0)
            #expect(try await !HTTPStripe.entitled(f, alice))
            #expect(try await f.get(alice)["purchases"]?.arrayValue?.first?.objectValue?["refunded"] == true)
        }
    }

    @Test func theLinksOutliveARestartFromTheLogAndFromASnapshot() async throws {
        var server = try await TestServer.start { $0.testClock = true }
        var f = try await StoreFixture.make(server)
        try await f.putConfig(Self.config())
        let now = f.startMs / 1000
        let alice = try await f.create("alice").id
        try await Self.post(f, HTTPStripe.checkout(now, reference: "alice"), now)
        try await Self.post(f, HTTPStripe.invoice(now), now)
        try await Self.post(f, X.invoicePaymentPaid(createdSeconds: now), now)
        for (index, checkpoint) in [false, true].enumerated() {
            if checkpoint { #expect(try await f.admin.call("server.checkpoint").isSuccess) }
            server = try await server.restart { $0.testClock = true }
            f = try await f.reconnected(to: server)
            let step = Int64(index + 1)
            let refund = X.chargeRefunded(amountRefunded: 250 * step, createdSeconds: now + 60 * step)
            #expect(try await HTTPStripe.post(f, refund, timestamp: f.startMs / 1000).body == ["applied": true],
                    checkpoint ? "from a snapshot" : "from the log")
            #expect(try await Self.coins(f, alice) == (checkpoint ? 50 : 75))
        }
        await server.stop()
    }
}
