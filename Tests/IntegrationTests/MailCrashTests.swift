import Foundation
import GatehouseHTTP
import GatehousePosix
import GatehouseTesting
import GatehouseWire
import Testing

/// The real binary, killed with SIGKILL while a redemption link's email is owed and its mail
/// server is down, sends that email once the server and the mail server are back (DESIGN.md,
/// "Web purchases and redemption links": a mail server that is down delays the email and loses
/// nothing).
@Suite struct MailCrashRecovery {
    typealias X = StripeFixtures
    static let from = "noreply@gatehouse.example"

    static let config: JSONValue = [
        "entitlements": [["id": "pro"]],
        "products": [["id": "pro_monthly", "type": "subscription", "entitlements": ["pro"]]],
        "stores": ["stripe": [
            "webhook_secrets": [.string(X.webhookSecret)], "secret_key": .string(X.secretKey),
            "prices": .object(JSONObject(members: [.init(key: X.priceID, value: "pro_monthly")])), "livemode": false,
        ]],
        "web": ["app_name": "Scanner", "app_scheme": "scanner", "support_email": "help@example.com"],
    ]

    static func start(_ dataDirectory: String, mailbox: SMTPMailbox) async throws -> ServerProcess {
        try await ServerProcess.start(dataDirectory: dataDirectory, extraArguments: [
            "--test-clock", "--public-url=https://pay.example.com", "--smtp=\(mailbox.url)", "--smtp-from=\(from)", "--smtp-insecure",
        ])
    }

    @Test func sigkillWhileAnEmailIsOwedToADownMailServerLosesNoEmail() async throws {
        let mailbox = try await SMTPMailbox.start()
        await mailbox.stop()
        do {
            try await withTemporaryDirectory { directory in
                let dataDirectory = directory.appending("data")
                let first = try await Self.start(dataDirectory, mailbox: mailbox)
                let secret = try await Self.setUp(first)
                _ = await first.kill9()
                try await mailbox.start()
                let second = try await Self.start(dataDirectory, mailbox: mailbox)
                // The clock starts again from the wall clock: whether or not the first attempt's
                // outcome reached the log, the email is due again within 6 s of it.
                let advanced = try await second.admin().call("clock.advance", ["ms": 10_000])
                #expect(advanced.isSuccess, "\(advanced)")
                let mails = try await mailbox.messages(atLeast: 1)
                try #require(mails.count == 1)
                #expect(mails[0].header("To") == X.email && mails[0].header("Subject") == "Your Scanner purchase is ready")
                let text = try #require(mails[0].text?.content)
                let marker = try #require(text.range(of: "https://pay.example.com/pay/r/"))
                let token = String(text[marker.upperBound...].prefix(48))
                let backend = try TestClient(connectingTo: second.address)
                try await backend.hello(secret)
                let app = try #require(try await backend.call("profile.create", ["customer_user_id": "alice"]).object("profile")?
                    .string("profile_id"))
                let redeemed = try await backend.call("web.redeem", ["profile_id": .string(app), "redemption_token": .string(token)])
                #expect(redeemed.isSuccess, "\(redeemed)")
                #expect(await second.stop().status == 0)
            }
            await mailbox.close()
        } catch {
            await mailbox.close()
            throw error
        }
    }

    /// The project and its config, and a Checkout by a buyer the app did not name; answers the
    /// project's secret key.
    static func setUp(_ server: ServerProcess) async throws -> String {
        let created = try await server.admin().call("project.create", ["project": "shop"])
        let secret = try #require(created.object("keys")?.string("secret"))
        let backend = try TestClient(connectingTo: server.address)
        let now = try #require(try await backend.hello(secret).int("time_ms")) / 1000
        let put = try await backend.call("config.put", ["config": config])
        #expect(put.isSuccess, "\(put)")
        let event = X.event("checkout.session.completed", X.checkoutSession(createdSeconds: now), createdSeconds: now)
        let body = X.body(event)
        let client = try TestHTTPClient(connectingTo: try #require(server.httpAddress))
        let response = try await client.request("POST", "/v1/stores/stripe/shop",
                                                headers: [("Stripe-Signature", X.signatureHeader(body: body, timestamp: now))], body: body)
        #expect(response.status == 200, "\(response.bodyText)")
        return secret
    }
}
