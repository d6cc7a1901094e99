import Foundation
import GatehouseCore
import GatehouseHTTP
import GatehouseOutbound
import GatehouseServer
import GatehouseStripe
import GatehouseTesting
import GatehouseWire
import Testing

/// The whole web purchase in one test (issue 21; DESIGN.md, "Web purchases and redemption
/// links"), every part real but Stripe: a purchase link makes a Checkout Session at a local fake
/// of Stripe's API; the buyer comes back to the success page; Stripe's signed events arrive; the
/// email reaches a real SMTP server (aiosmtpd); an app profile redeems the emailed link over
/// RevenueCat's REST; `sync` shows the entitlement; a real webhook receiver (Python's
/// `standardwebhooks`) gets `PURCHASE_REDEEMED`.
@Suite(.serialized) struct WebPurchaseEndToEnd {
    typealias X = StripeFixtures

    @Test func aBuyerPaysOnTheWebGetsTheEmailAndTheAppRedeemsIt() async throws {
        let stripe = try FakeStripeAPI()
        defer { stripe.stop() }
        let receiver = try await WebhookReceiver.start(secrets: [OutboxFixture.secret])
        try await MailFixture.withMailbox { mailbox in
            let mail = try MailFixture.configure(mailbox)
            try await withTestServer({
                mail(&$0)
                $0.stripeAPIURL = stripe.baseURL
                $0.outboundAllowPrivate = true
            }) { server in
                let f = try await StoreFixture.make(server)
                guard case .object(var config) = PurchaseLinks.config() else { preconditionFailure("an object") }
                config["web"] = ["app_name": "Scanner", "app_scheme": "scanner", "support_email": "help@example.com"]
                config.append("webhooks", [OutboxFixture.webhook("backend", receiver.url, events: ["PURCHASE_REDEEMED"])])
                try await f.putConfig(.object(config))
                let now = try await f.advance(0) / 1000

                // 1. The purchase link, without an app user id: a Checkout Session, and the buyer sent there.
                let http = try HTTPListener.connect(server)
                let link = try await http.request("GET", "/pay/acme/default/monthly?email=\(X.email.replacing("@", with: "%40"))")
                #expect(link.status == 303)
                let session = try #require(stripe.sessions.last)
                #expect(link.headers["Location"] == session.url)
                #expect(session.clientReferenceID == nil)

                // 2. Checkout completes: the buyer lands on the success page before Stripe's events.
                let landing = String(session.returnURL[try #require(session.returnURL.firstRange(of: "/pay/success")).lowerBound...])
                let pending = try await http.request("GET", landing)
                #expect(pending.status == 200)
                #expect(String(decoding: pending.body, as: UTF8.self).contains("http-equiv=\"refresh\""), "pending: it reloads itself")

                // 3. Stripe's events, signed as Stripe signs them: the session, then the first invoice.
                let subscription = "sub_e2e"
                let completed = X.checkoutSession(id: session.id, clientReferenceID: nil, email: X.email, subscriptionID: subscription,
                                                  metadata: session.metadata, createdSeconds: now)
                #expect(try await HTTPStripe.post(f, X.event(.checkoutSessionCompleted, completed, createdSeconds: now),
                                                  timestamp: now).body == ["applied": true])
                let invoice = X.event(.invoicePaid, X.invoice(id: "in_e2e", subscriptionID: subscription, periodStartSeconds: now,
                                                              createdSeconds: now), createdSeconds: now)
                #expect(try await HTTPStripe.post(f, invoice, timestamp: now).body == ["applied": true])
                let ready = String(decoding: try await http.request("GET", landing).body, as: UTF8.self)
                #expect(ready.contains("scanner://redeem_web_purchase?redemption_token=rdrt_"))

                // 4. The email arrives, with both links.
                let messages = try await mailbox.messages(atLeast: 1)
                try #require(messages.count == 1)
                let email = messages[0]
                #expect(email.header("Subject") == "Your Scanner purchase is ready")
                #expect(email.header("Reply-To") == "help@example.com")
                let token = try MailFixture.token(email)
                for part in [email.text?.content, email.html?.content] {
                    #expect(part?.contains("scanner://redeem_web_purchase?redemption_token=\(token)") == true)
                    #expect(part?.contains(MailFixture.publicURL + "/pay/r/" + token) == true)
                }
                #expect(ready.contains(token), "the success page and the email show the same link")

                // 5. The app, installed after paying, starts (RevenueCat's SDK gets its subscriber, the
                // line's client its first sync), then redeems the emailed link through RevenueCat's REST.
                let install = RevenueCatFixture.installID(0xE2E)
                let headers = [("Authorization", "Bearer \(f.keys.publicKey)"), ("X-Platform", "iOS")]
                #expect(try await http.request("GET", "/v1/subscribers/\(install)", headers: headers).status == 201)
                let first = try await f.sdk.call("sync", ["profile_id": .string(install)])
                #expect(first.object("entitlements")?.object("pro") == nil, "not entitled before redeeming")
                let cursor = try #require(first.int("cursor"))
                let redeem = try await http.request(
                    "POST", "/v1/subscribers/redeem_purchase", headers: headers,
                    body: JSONWriter.serialize(["app_user_id": .string(install), "redemption_token": .string(token)]))
                #expect(redeem.status == 200)
                let subscriber = try HTTPListener.json(redeem).object("subscriber")
                #expect(subscriber?.object("entitlements")?.object("pro")?.string("product_identifier") == "pro_monthly")

                // 6. `sync` on the line, from the app's cursor, shows the entitlement.
                let sync = try await f.sdk.call("sync", ["profile_id": .string(install), "cursor": .int(cursor)])
                #expect(sync["changed"]?.arrayValue?.contains("entitlements") == true, "\(sync)")
                #expect(sync.object("entitlements")?.object("pro")?["is_active"] == true, "\(sync)")

                // 7. The webhook receives PURCHASE_REDEEMED, once, signed.
                // Real sockets take real time: the receiver is polled until the delivery is there.
                let deadline = ContinuousClock.now + .seconds(30)
                var delivered = try await receiver.deliveries()
                while delivered.isEmpty, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                    delivered = try await receiver.deliveries()
                }
                try #require(delivered.count == 1)
                #expect(delivered[0].error == nil, "\(delivered[0])")
                let event = try #require(delivered[0].event)
                #expect(event.string("type") == "PURCHASE_REDEEMED")
                #expect(event.string("app_user_id") == install)
                #expect(event.string("store") == "STRIPE")
                #expect(event.string("product_id") == "pro_monthly")
                #expect(event["entitlement_ids"] == ["pro"])
            }
        }
        await receiver.stop()
    }
}
