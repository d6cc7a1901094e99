import Foundation
import GatehouseCore
import GatehouseHTTP
import GatehouseServer
import GatehouseStripe
import GatehouseTesting
import GatehouseWire
import Testing

/// Redeeming a web purchase against the real server (DESIGN.md, "Web purchases and redemption
/// links"): a Stripe buyer without an app user id gets a link on the success page, and an app
/// profile takes the purchase with `web.redeem` or `POST /v1/subscribers/redeem_purchase`.
@Suite struct Redemption {
    typealias X = StripeFixtures
    static let hourMs: Int64 = 3_600_000

    static func run(_ body: (StoreFixture, Int64) async throws -> Void) async throws {
        try await withTestServer({
            $0.testClock = true
            $0.publicURL = "https://pay.example.com"
        }) { server in
            let f = try await StoreFixture.make(server)
            try await f.putConfig(HTTPStripe.config())
            try await body(f, f.startMs / 1000)
        }
    }

    /// A paid subscription bought on the web with no app user id; answers its link's token, read
    /// from the success page as the buyer sees it.
    static func webPurchase(_ f: StoreFixture, _ now: Int64, _ n: Int = 1) async throws -> String {
        let session = "cs_test_redeem\(n)"
        let subscription = "sub_redeem\(n)"
        let checkout = X.event(.checkoutSessionCompleted,
                               X.checkoutSession(id: session, subscriptionID: subscription, createdSeconds: now),
                               id: "evt_checkout_\(n)", createdSeconds: now)
        #expect(try await HTTPStripe.post(f, checkout, timestamp: now).body == ["applied": true])
        let invoice = X.event(.invoicePaid, X.invoice(id: "in_redeem\(n)", subscriptionID: subscription, periodStartSeconds: now,
                                                      createdSeconds: now),
                              id: "evt_invoice_\(n)", createdSeconds: now)
        #expect(try await HTTPStripe.post(f, invoice, timestamp: now).body == ["applied": true])
        return try await token(f, session: session)
    }

    static func token(_ f: StoreFixture, session: String) async throws -> String {
        let page = try await HTTPListener.connect(f.server).request("GET", "/pay/success?session_id=\(session)&project=\(f.project)")
        #expect(page.status == 200)
        let html = String(decoding: page.body, as: UTF8.self)
        let found = try #require(html.firstMatch(of: /\/pay\/r\/(rdrt_[A-Za-z0-9_-]{43})/), "the success page holds the link")
        return String(found.1)
    }

    static func redeem(_ client: TestClient, _ profile: String, _ token: String) async throws -> JSONObject {
        try await client.call("web.redeem", ["profile_id": .string(profile), "redemption_token": .string(token)])
    }

    static func rest(_ f: StoreFixture, appUserID: String, token: String) async throws -> (status: Int, body: JSONObject) {
        let body = JSONWriter.serialize(["app_user_id": .string(appUserID), "redemption_token": .string(token)])
        let response = try await HTTPListener.connect(f.server).request(
            "POST", "/v1/subscribers/redeem_purchase",
            headers: [("Authorization", "Bearer \(f.keys.publicKey)"), ("X-Platform", "iOS")], body: body)
        return (response.status, try HTTPListener.json(response))
    }

    static func redeemedEvents(_ f: StoreFixture) async throws -> [JSONObject] {
        try await f.events().filter { $0.string("type") == "PURCHASE_REDEEMED" }
    }

    @Test func anAppProfileRedeemsOverTheLineAndIsEntitledAtOnce() async throws {
        try await Self.run { f, now throws in
            let token = try await Self.webPurchase(f, now)
            let app = try await f.create()
            let answer = try await Self.redeem(f.sdk, app.id, token)
            #expect(answer.isSuccess, "\(answer)")
            #expect(answer.object("profile")?.string("profile_id") == app.id)
            #expect(try await HTTPStripe.entitled(f, app.id))
            let document = try await f.get(app.id)
            #expect(document.object("attributes")?.string("$email") == X.email, "the buyer's email moved to the app profile")
            let redeemed = try await Self.redeemedEvents(f)
            #expect(redeemed.count == 1)
            #expect(redeemed.first?.string("profile_id") == app.id)
            #expect(redeemed.first?.string("product_id") == "pro_monthly")
            #expect(try await f.events().allSatisfy { $0.string("type") != "SUBSCRIBER_ALIAS" })
            // A second redeem by the same profile succeeds and changes nothing.
            let cursor = try await f.feedCursor()
            #expect(try await Self.redeem(f.sdk, app.id, token).isSuccess)
            #expect(try await f.feedCursor() == cursor)
            // Another profile is told it belongs to someone else.
            let other = try await f.create()
            let refused = try await Self.redeem(f.sdk, other.id, token)
            #expect(refused.errorCode == .purchaseBelongsToOtherUser)
            #expect(refused.object("error")?["legacy_code"] == 7852)
            #expect(try await HTTPStripe.entitled(f, other.id) == false)
        }
    }

    @Test func restAnswersTheSubscriberThen7852ForAnotherUser() async throws {
        try await Self.run { f, now throws in
            let token = try await Self.webPurchase(f, now)
            let redeemed = try await Self.rest(f, appUserID: "alice", token: token)
            #expect(redeemed.status == 200)
            let entitlement = redeemed.body.object("subscriber")?.object("entitlements")?.object("pro")
            #expect(entitlement?.string("product_identifier") == "pro_monthly")
            #expect(try await Self.rest(f, appUserID: "alice", token: token).status == 200, "a retry is safe")
            let other = try await Self.rest(f, appUserID: "bob", token: token)
            #expect(other.status == 400)
            #expect(other.body.int("code") == 7852)
            #expect(try await Self.redeemedEvents(f).count == 1)
        }
    }

    /// Many rounds of two profiles on two connections redeeming one link at the same moment:
    /// each round exactly one wins.
    @Test func ofTwoRedeemingAtOnceExactlyOneWins() async throws {
        try await Self.run { f, now throws in
            let other = try f.server.connect()
            try await other.hello(f.keys.publicKey)
            for round in 1...8 {
                let token = try await Self.webPurchase(f, now, round)
                let a = try await f.create()
                let b = try await f.create()
                async let first = Self.redeem(f.sdk, a.id, token)
                async let second = Self.redeem(other, b.id, token)
                let answers = try await [first, second]
                #expect(answers.filter(\.isSuccess).count == 1, "round \(round): \(answers)")
                #expect(answers.filter { $0.errorCode == .purchaseBelongsToOtherUser }.count == 1)
                let winner = answers[0].isSuccess ? a.id : b.id
                #expect(try await HTTPStripe.entitled(f, winner))
            }
            #expect(try await Self.redeemedEvents(f).count == 8)
        }
    }

    @Test func anExpiredLinkIsRefusedWithTheObfuscatedEmailAndItsFreshLinkRedeems() async throws {
        try await Self.run { f, now throws in
            let old = try await Self.webPurchase(f, now)
            _ = try await f.advance(24 * Self.hourMs)
            let expired = try await Self.rest(f, appUserID: "alice", token: old)
            #expect(expired.status == 400)
            #expect(expired.body.int("code") == 7853)
            #expect(expired.body.object("purchase_redemption_error_info") == ["obfuscated_email": "b****@e*****e.com"])
            let line = try await Self.redeem(f.sdk, try await f.create().id, old)
            #expect(line.errorCode == .expired)
            #expect(line.object("error")?.string("obfuscated_email") == "b****@e*****e.com")
            // The success page now shows the fresh link, which redeems.
            let fresh = try await Self.token(f, session: "cs_test_redeem1")
            #expect(fresh != old)
            #expect(try await Self.rest(f, appUserID: "alice", token: fresh).status == 200)
            #expect(try await Self.rest(f, appUserID: "alice", token: old).status == 200, "redeemed by alice: a retry is safe")
        }
    }

    @Test func aRedemptionSurvivesARestart() async throws {
        var server = try await TestServer.start {
            $0.testClock = true
            $0.publicURL = "https://pay.example.com"
        }
        let f = try await StoreFixture.make(server)
        try await f.putConfig(HTTPStripe.config())
        let now = f.startMs / 1000
        let token = try await Self.webPurchase(f, now)
        let app = try await f.create()
        #expect(try await Self.redeem(f.sdk, app.id, token).isSuccess)
        server = try await server.restart {
            $0.testClock = true
            $0.publicURL = "https://pay.example.com"
        }
        let g = try await f.reconnected(to: server)
        #expect(try await HTTPStripe.entitled(g, app.id))
        #expect(try await Self.redeem(g.sdk, app.id, token).isSuccess, "the link still knows its redeemer")
        #expect(try await Self.redeem(g.sdk, try await g.create().id, token).errorCode == .purchaseBelongsToOtherUser)
        #expect(try await Self.redeemedEvents(g).count == 1)
        await server.stop()
    }
}
