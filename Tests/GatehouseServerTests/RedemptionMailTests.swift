import Foundation
import GatehouseBase
import GatehouseCore
import GatehouseHTTP
import GatehouseOutbound
@testable import GatehouseServer
import GatehouseStripe
import GatehouseTesting
import GatehouseWire
import Testing

// The redemption link's email end to end (DESIGN.md, "Web purchases and redemption links" and
// "Outbound delivery"): the real server takes Stripe's signed Checkout, owes the buyer's email
// and hands it to a real SMTP server (aiosmtpd), read back with Python's `email` package. Retry
// times follow the server's test clock, which the tests move instead of waiting.

/// A server with email on, and the project on it selling through Stripe.
struct MailFixture {
    typealias X = StripeFixtures
    static let from = "noreply@gatehouse.example"
    static let publicURL = "https://pay.example.com"

    let f: StoreFixture
    let mailbox: SMTPMailbox
    var server: TestServer { f.server }

    /// HTTPStripe's project, with its own deep link scheme.
    static func config() -> JSONValue {
        guard case .object(var config) = HTTPStripe.config() else { return HTTPStripe.config() }
        config["web"] = ["app_name": "Scanner", "app_scheme": "scanner", "support_email": "help@example.com"]
        return .object(config)
    }

    /// The test clock, a public URL and, with `mailbox`, email through it.
    static func configure(_ mailbox: SMTPMailbox?) throws -> @Sendable (inout ServerConfiguration) -> Void {
        let smtp = try mailbox.map { try SMTPSettings(url: $0.url, from: from, credentialsFile: nil, insecure: true) }
        return { configuration in
            configuration.testClock = true
            configuration.publicURL = publicURL
            configuration.metricsPublic = true
            configuration.smtp = smtp
        }
    }

    /// Runs `body` with a running mailbox; closes it after.
    static func withMailbox(_ body: (SMTPMailbox) async throws -> Void) async throws {
        let mailbox = try await SMTPMailbox.start()
        do {
            try await body(mailbox)
            await mailbox.close()
        } catch {
            await mailbox.close()
            throw error
        }
    }

    /// A mailbox, a server sending email to it, and the project.
    static func run(_ body: (MailFixture) async throws -> Void) async throws {
        try await withMailbox { mailbox in
            try await withTestServer(try configure(mailbox)) { server in
                let f = try await StoreFixture.make(server)
                try await f.putConfig(config())
                try await body(MailFixture(f: f, mailbox: mailbox))
            }
        }
    }

    /// The server's clock now, in seconds (Stripe's signatures and `created` are in seconds).
    func nowSeconds() async throws -> Int64 { try await f.advance(0) / 1000 }

    /// A completed Checkout with no app user id: a web buyer with `email`.
    func checkout(_ subscription: String = X.subscriptionID, email: String = X.email) async throws {
        let now = try await nowSeconds()
        let session = X.checkoutSession(id: "cs_" + subscription, clientReferenceID: nil, email: email, subscriptionID: subscription,
                                        createdSeconds: now)
        let answer = try await HTTPStripe.post(f, X.event(.checkoutSessionCompleted, session, createdSeconds: now), timestamp: now)
        #expect(answer.status == 200 && answer.body == ["applied": true], "\(answer)")
    }

    /// Exactly `count` messages: waits for them, and fails the test for fewer or more.
    func mails(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [SMTPMailbox.ReceivedMail] {
        let messages = try await mailbox.messages(atLeast: count)
        try #require(messages.count == count, "\(messages.count) messages", sourceLocation: sourceLocation)
        return messages
    }

    /// The token an email's https link carries.
    static func token(_ mail: SMTPMailbox.ReceivedMail) throws -> String {
        let text = try #require(mail.text?.content)
        let marker = try #require(text.range(of: publicURL + "/pay/r/"))
        return String(text[marker.upperBound...].prefix(RedemptionToken.length))
    }

    /// `web.redeem` of `token` by `profile`.
    func redeem(_ profile: String, _ token: String) async throws -> JSONObject {
        try await f.sdk.call("web.redeem", ["profile_id": .string(profile), "redemption_token": .string(token)])
    }

    /// Log records named `event`, once there are `count` (or after 30 s, however many).
    static func records(_ server: TestServer, _ event: String, count: Int) async -> [LogRecord] {
        _ = await eventually(timeout: .seconds(30)) { server.logs.records(event: event).count >= count }
        return server.logs.records(event: event)
    }
}

private typealias M = MailFixture

@Suite(.serialized) struct RedemptionMailDelivery {
    @Test func aWebBuyerGetsTheEmailWithBothLinksAndItsTokenRedeems() async throws {
        try await M.run { m in
            try await m.checkout()
            let mail = try #require(try await m.mails(1).first)
            #expect(mail.header("Subject") == "Your Scanner purchase is ready")
            #expect(mail.header("From") == "Scanner <\(M.from)>")
            #expect(mail.header("To") == M.X.email)
            #expect(mail.header("Reply-To") == "help@example.com")
            #expect(mail.mailFrom == M.from && mail.rcptTo == M.X.email)
            #expect(mail.contentType == "multipart/alternative")
            #expect(mail.defects == [])
            let token = try M.token(mail)
            #expect(RedemptionToken.isWellFormed(token))
            let https = M.publicURL + "/pay/r/" + token
            let deep = "scanner://redeem_web_purchase?redemption_token=" + token
            for part in [mail.text?.content, mail.html?.content] {
                #expect(part?.contains(https) == true)
                #expect(part?.contains(deep) == true)
            }
            #expect(mail.html?.content.contains("href=\"\(https)\"") == true)
            #expect(mail.html?.content.contains("href=\"\(deep)\"") == true)
            let app = try await m.f.create("alice")
            let redeemed = try await m.redeem(app.id, token)
            #expect(redeemed.isSuccess, "\(redeemed)")
            try await m.f.post(HTTPStripe.invoice(try await m.nowSeconds()))
            #expect(try await HTTPStripe.entitled(m.f, app.id))
            let page = try await TestHTTPClient(connectingTo: m.server.httpAddress).request("GET", "/metrics")
            let metrics = String(decoding: page.body, as: UTF8.self)
            #expect(metrics.contains(#"gatehouse_outbox_attempts_total{kind="email",result="delivered"} 1"#), "\(metrics)")
            #expect(metrics.contains(#"gatehouse_outbox_attempt_duration_seconds_count{kind="email"} 1"#))
        }
    }

    @Test func aMailServerThatIsDownDelaysTheEmailAndLosesNothing() async throws {
        try await M.run { m in
            await m.mailbox.stop()
            try await m.checkout()
            let retry = try #require(await M.records(m.server, "mail.retry", count: 1).first)
            #expect(retry.metadata["error"] == "cannot_connect")
            let nextMs = try #require(Int64(retry.metadata["next_attempt_ms"]?.description ?? ""))
            let nowMs = try await m.f.advance(0)
            #expect(nextMs >= nowMs + 4_000 && nextMs <= nowMs + 6_000, "5 s ±20 %: \(nextMs - nowMs)")
            try await m.mailbox.start()
            #expect(try await m.mailbox.messages().isEmpty, "nothing before the retry is due")
            _ = try await m.f.advance(nextMs - nowMs)
            let mail = try #require(try await m.mails(1).first)
            #expect(mail.header("To") == M.X.email)
            #expect(m.server.logs.records(event: "mail.retry").count == 1 && m.server.logs.records(event: "mail.failed").isEmpty)
            let app = try await m.f.create("alice")
            #expect(try await m.redeem(app.id, try M.token(mail)).isSuccess)
        }
    }

    @Test func aServerThatSaysNotNowIsTriedAgainAndOneThatRefusesTheRecipientIsNot() async throws {
        try await M.run { m in
            try await m.checkout("sub_1Deferred", email: "deferred-buyer@example.com")
            try await m.checkout("sub_1Refused", email: "refused-buyer@example.com")
            let failed = try #require(await M.records(m.server, "mail.failed", count: 1).first)
            #expect(failed.metadata["error"] == "refused (550)")
            let retry = try #require(await M.records(m.server, "mail.retry", count: 1).first)
            #expect(retry.metadata["error"] == "deferred (451)")
            // Past the deferred one's retry: it is tried (and deferred) again, the refused one never.
            let nextMs = try #require(Int64(retry.metadata["next_attempt_ms"]?.description ?? ""))
            _ = try await m.f.advance(nextMs - (try await m.f.advance(0)))
            #expect(await M.records(m.server, "mail.retry", count: 2).count == 2)
            try await m.checkout("sub_1Welcome", email: "welcome@example.com")
            let mails = try await m.mails(1)
            #expect(mails.first?.header("To") == "welcome@example.com")
            #expect(m.server.logs.records(event: "mail.failed").count == 1)
        }
    }

    @Test func anExpiredLinkBringsAFreshEmailAtMostHourlyAndTheOldTokenStaysExpired() async throws {
        try await M.run { m in
            try await m.checkout()
            let first = try M.token(try #require(try await m.mails(1).first))
            let app = try await m.f.create("alice")
            _ = try await m.f.advance(25 * 3_600_000)
            let expired = try await m.redeem(app.id, first)
            #expect(expired.errorCode == .expired, "\(expired)")
            #expect(expired.object("error")?.string("obfuscated_email") == "b****@e*****e.com")
            let second = try M.token(try await m.mails(2)[1])
            #expect(second != first)
            // Within the hour: expired again, and no email.
            _ = try await m.f.advance(30 * 60_000)
            let again = try await m.redeem(app.id, first)
            #expect(again.errorCode == .expired && again.object("error")?.string("obfuscated_email") == "b****@e*****e.com")
            // An hour after the last email: another, with another link. It is the third message:
            // the redeem within the hour sent none.
            _ = try await m.f.advance(31 * 60_000)
            #expect(try await m.redeem(app.id, first).errorCode == .expired)
            let third = try M.token(try await m.mails(3)[2])
            #expect(third != second && third != first)
            for old in [first, second] {
                #expect(try await m.redeem(app.id, old).errorCode == .expired, "a replaced link stays expired")
            }
            #expect(try await m.redeem(app.id, third).isSuccess)
            #expect(try await m.mailbox.messages().count == 3)
        }
    }

    @Test func emailOwedWithoutSMTPWaitsAndGoesOnceARestartNamesTheMailServer() async throws {
        try await M.withMailbox { mailbox in
            var server = try await TestServer.start(try M.configure(nil))
            do {
                let f = try await StoreFixture.make(server)
                try await f.putConfig(M.config())
                try await M(f: f, mailbox: mailbox).checkout()
                server = try await server.restart(try M.configure(nil))
                let owed = try #require(await M.records(server, "mail.owed_without_smtp", count: 1).first)
                #expect(owed.metadata["project"] == "acme" && owed.metadata["emails"] == 1)
                #expect(try await mailbox.messages().isEmpty)
                server = try await server.restart(try M.configure(mailbox))
                let mails = try await mailbox.messages(atLeast: 1)
                try #require(mails.count == 1)
                let mail = mails[0]
                #expect(mail.header("Subject") == "Your Scanner purchase is ready")
                #expect(server.logs.records(event: "mail.owed_without_smtp").isEmpty)
                let m = M(f: try await f.reconnected(to: server), mailbox: mailbox)
                let app = try await m.f.create("alice")
                #expect(try await m.redeem(app.id, try M.token(mail)).isSuccess)
                await server.stop()
            } catch {
                await server.stop()
                throw error
            }
        }
    }

    @Test func anEmailWhoseRetryWasDueWhenTheServerStoppedGoesAfterTheRestart() async throws {
        try await M.withMailbox { mailbox in
            await mailbox.stop()
            var server = try await TestServer.start(try M.configure(mailbox))
            do {
                let f = try await StoreFixture.make(server)
                try await f.putConfig(M.config())
                try await M(f: f, mailbox: mailbox).checkout()
                _ = await M.records(server, "mail.retry", count: 1)
                server = try await server.restart(try M.configure(mailbox))
                try await mailbox.start()
                // The restarted clock starts from the wall clock; the retry is due within 6 s of the first attempt.
                _ = try await f.reconnected(to: server).advance(10_000)
                let mails = try await mailbox.messages(atLeast: 1)
                try #require(mails.count == 1)
                let mail = mails[0]
                #expect(mail.header("To") == M.X.email)
                await server.stop()
            } catch {
                await server.stop()
                throw error
            }
        }
    }
}

extension StoreFixture {
    /// Posts a signed Stripe event, signed at the server's clock.
    func post(_ event: JSONObject) async throws {
        let now = try await advance(0) / 1000
        let answer = try await HTTPStripe.post(self, event, timestamp: now)
        #expect(answer.status == 200, "\(answer)")
    }
}

@Suite struct SMTPServeOptions {
    static func configuration(_ arguments: [String]) throws -> ServerConfiguration {
        try ServeCommand.makeConfiguration(try ServeCommand.parser.parse(arguments), environment: [:])
    }

    static let mailServer = ["--public-url=https://pay.example.com", "--smtp=smtp://mail.example.com", "--smtp-from=noreply@example.com"]

    @Test func theFlagsMakeTheSettingsAndNoneMeansNoEmail() async throws {
        #expect(try Self.configuration([]).smtp == nil)
        let settings = try #require(try Self.configuration(Self.mailServer).smtp)
        #expect(settings.url == "smtp://mail.example.com:587" && settings.from.value == "noreply@example.com")
        #expect(settings.requireTLS && settings.username == nil)
        try await withTemporaryDirectory { directory in
            let path = directory.appending("smtp-credentials")
            try await TestFiles.write(Data("mailer\ns3cret pass\n".utf8), to: path)
            let login = try #require(try Self.configuration(Self.mailServer + ["--smtp-credentials", path, "--smtp-insecure"]).smtp)
            #expect(login.username == "mailer" && login.password == "s3cret pass" && !login.requireTLS)
        }
    }

    @Test(arguments: [
        (["--public-url=https://pay.example.com", "--smtp=smtp://mail.example.com"], "--smtp needs --smtp-from"),
        (["--smtp=smtp://mail.example.com", "--smtp-from=noreply@example.com"], "--smtp needs --public-url"),
        (["--smtp-from=noreply@example.com"], "--smtp-from needs --smtp"),
        (["--smtp-credentials=/nowhere"], "--smtp-credentials needs --smtp"),
        (["--smtp-insecure"], "--smtp-insecure needs --smtp"),
        (["--public-url=https://pay.example.com", "--smtp=http://mail.example.com", "--smtp-from=noreply@example.com"], "--smtp: "),
        (["--public-url=https://pay.example.com", "--smtp=smtp://mail.example.com:0", "--smtp-from=noreply@example.com"], "--smtp: "),
        (["--public-url=https://pay.example.com", "--smtp=smtp://mail.example.com", "--smtp-from=no reply"], "--smtp-from: "),
        (mailServer + ["--smtp-credentials=/nowhere/at/all"], "--smtp-credentials: cannot read"),
    ])
    func aMailServerTheServerCouldNotUseStopsTheStart(arguments: [String], message: String) {
        do {
            _ = try Self.configuration(arguments)
            Issue.record("\(arguments) were taken")
        } catch {
            #expect("\(error)".hasPrefix(message), "\(error)")
        }
    }

    @Test func aServerConfiguredWithEmailButNoPublicURLDoesNotStart() async throws {
        let settings = try SMTPSettings(url: "smtp://mail.example.com", from: "noreply@example.com", credentialsFile: nil, insecure: false)
        await #expect(throws: GatehouseStartupError.self) {
            try await withTestServer({ $0.smtp = settings }) { _ in }
        }
    }
}
