import GatehouseCore
import GatehouseHTTP
import GatehouseServer
import GatehouseStripe
import GatehouseTesting
import GatehouseWire
import Testing

/// A server that sells on the web, for the buyer's pages: the test clock, `--public-url`, and
/// the project `acme` taking Stripe's events with the `web` config of the app "Scanner".
struct WebShop {
    typealias X = StripeFixtures
    static let publicURL = "https://pay.example.com"
    static let scheme = "scanner"
    static let web: JSONObject = [
        "app_name": "Scanner", "app_scheme": .string(scheme), "support_email": "help@scanner.example",
        "app_store_url": "https://apps.apple.com/app/id123456789",
        "play_store_url": "https://play.google.com/store/apps/details?id=com.example.scanner",
    ]

    let f: StoreFixture
    /// The server's clock when the shop opened, in seconds (Stripe's events are dated by it).
    let now: Int64

    var server: TestServer { f.server }

    static func config(web: JSONObject = web) -> JSONValue {
        guard case .object(var object) = HTTPStripe.config() else { preconditionFailure("an object") }
        object["web"] = .object(web)
        return .object(object)
    }

    /// `body` against a fresh server; `publicURL` `nil` starts it without `--public-url`.
    static func run(web: JSONObject = web, publicURL: String? = publicURL, stripeAPIURL: String? = nil,
                    _ body: (WebShop) async throws -> Void) async throws
    {
        try await withTestServer({
            $0.testClock = true
            $0.publicURL = publicURL
            if let stripeAPIURL { $0.stripeAPIURL = stripeAPIURL }
        }) { server in
            try await body(try await open(server, web: web))
        }
    }

    /// The project `project` on `server`, configured to sell as `web` says.
    static func open(_ server: TestServer, project: String = "acme", web: JSONObject = web) async throws -> WebShop {
        let f = try await StoreFixture.make(server, project: project)
        try await f.putConfig(config(web: web))
        return WebShop(f: f, now: f.startMs / 1000)
    }

    // MARK: Stripe

    /// Stripe's signed `checkout.session.completed` for session `id`, bought by whoever
    /// `reference` names (nobody: a web profile holding `email`).
    func checkout(_ id: String = "cs_test_a1Shop", subscription: String = X.subscriptionID, reference: String? = nil,
                  email: String? = X.email) async throws
    {
        let session = X.checkoutSession(id: id, clientReferenceID: reference, email: email, subscriptionID: subscription,
                                        createdSeconds: now)
        let posted = try await HTTPStripe.post(f, X.event(.checkoutSessionCompleted, session, createdSeconds: now), timestamp: now,
                                               project: f.project)
        #expect(posted.body == ["applied": true], "\(posted.body)")
    }

    // MARK: The pages

    func request(_ method: String, _ target: String) async throws -> HTTPParsedResponse {
        try await HTTPListener.connect(server).request(method, target)
    }

    func get(_ target: String) async throws -> HTTPParsedResponse {
        try await request("GET", target)
    }

    /// The success page's address for `session`, as Checkout returns the buyer to it.
    func successTarget(_ session: String = "cs_test_a1Shop") -> String {
        "/pay/success?session_id=\(session)&project=\(f.project)"
    }

    /// The token of the link the ready success page of `session` shows.
    func token(of session: String = "cs_test_a1Shop") async throws -> String {
        let page = try await get(successTarget(session))
        #expect(page.status == 200)
        return try #require(Self.token(in: page.bodyText), "no link on the success page: \(page.bodyText)")
    }

    /// The first token in an https redemption link in `html`.
    static func token(in html: String) -> String? {
        guard let start = html.firstRange(of: publicURL + "/pay/r/")?.upperBound else { return nil }
        let token = String(html[start...].prefix(RedemptionToken.length))
        return RedemptionToken.isWellFormed(token) ? token : nil
    }

    static func deepLink(_ token: String, scheme: String = scheme) -> String {
        "\(scheme)://redeem_web_purchase?redemption_token=\(token)"
    }

    static func httpsLink(_ token: String) -> String {
        publicURL + "/pay/r/" + token
    }

    /// `web.redeem` of `token` by `profile`, with the public key.
    func redeem(_ token: String, by profile: String) async throws -> JSONObject {
        try await f.sdk.call("web.redeem", ["profile_id": .string(profile), "redemption_token": .string(token)])
    }

    /// The `data-state` of a page's `<main>`.
    static func state(_ response: HTTPParsedResponse) -> String? {
        let html = response.bodyText
        guard let start = html.firstRange(of: "<main data-state=\"")?.upperBound, let end = html[start...].firstIndex(of: "\"")
        else { return nil }
        return String(html[start..<end])
    }

    /// The `data-page` of a page's `<body>`.
    static func pageName(_ response: HTTPParsedResponse) -> String? {
        let html = response.bodyText
        guard let start = html.firstRange(of: "<body data-page=\"")?.upperBound, let end = html[start...].firstIndex(of: "\"")
        else { return nil }
        return String(html[start..<end])
    }

    /// The headers every page carries.
    static func expectPageHeaders(_ response: HTTPParsedResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.headers["Content-Type"] == "text/html; charset=utf-8", sourceLocation: sourceLocation)
        #expect(response.headers["Content-Security-Policy"] == WebPage.contentSecurityPolicy, sourceLocation: sourceLocation)
        #expect(response.headers["Cache-Control"] == "no-store", sourceLocation: sourceLocation)
        #expect(response.headers["X-Content-Type-Options"] == "nosniff", sourceLocation: sourceLocation)
        #expect(response.headers["Referrer-Policy"] == "no-referrer", sourceLocation: sourceLocation)
        #expect(response.headers["X-Frame-Options"] == "DENY", sourceLocation: sourceLocation)
    }
}

/// `GET /pay/r/{token}` and `GET /pay/success` served (DESIGN.md, "Web purchases and redemption
/// links"; docs/web.md, "The pages"): each state of both pages from what Stripe's events and
/// `web.redeem` made, with the headers of a page, HEAD, and the refusals.
@Suite struct ServedWebPages {
    typealias X = StripeFixtures
    typealias Shop = WebShop

    @Test func aWebBuyersLinkPageIsReadyWithBothFormsAndTheAppsFace() async throws {
        try await Shop.run { shop throws in
            try await shop.checkout()
            let token = try await shop.token()
            let page = try await shop.get("/pay/r/\(token)")
            #expect(page.status == 200)
            Shop.expectPageHeaders(page)
            #expect(Shop.pageName(page) == "redemption")
            #expect(Shop.state(page) == "ready")
            let html = page.bodyText
            #expect(html.contains("href=\"\(Shop.deepLink(token))\""))
            #expect(html.contains("href=\"\(Shop.httpsLink(token))\""))
            #expect(html.contains("<span id=\"app-name\">Scanner</span>"))
            #expect(html.contains("href=\"https://apps.apple.com/app/id123456789\""))
            #expect(html.contains("href=\"https://play.google.com/store/apps/details?id=com.example.scanner\""))
            #expect(html.contains("mailto:help@scanner.example"))

            let head = try await shop.request("HEAD", "/pay/r/\(token)")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            Shop.expectPageHeaders(head)
            let post = try await shop.request("POST", "/pay/r/\(token)")
            #expect(post.status == 405)
            #expect(post.headers["Allow"] == "GET, HEAD")
            #expect(try await shop.request("POST", shop.successTarget()).headers["Allow"] == "GET, HEAD")
        }
    }

    @Test func theDefaultSchemeIsTheProjectsWhenTheConfigNamesNone() async throws {
        var web = Shop.web
        web["app_scheme"] = nil
        try await Shop.run(web: web) { shop throws in
            try await shop.checkout()
            let token = try await shop.token()
            let scheme = WebSettings.defaultScheme(projectID: try ProjectID(validating: "acme"))
            #expect(try await shop.get("/pay/r/\(token)").bodyText.contains("href=\"\(Shop.deepLink(token, scheme: scheme))\""))
        }
    }

    @Test func aRedeemedLinkSaysSoAndItsSuccessPageIsOnTheAccount() async throws {
        try await Shop.run { shop throws in
            try await shop.checkout()
            let token = try await shop.token()
            let app = try await shop.f.create("alice")
            let redeemed = try await shop.redeem(token, by: app.id)
            #expect(redeemed.isSuccess, "\(redeemed)")
            let page = try await shop.get("/pay/r/\(token)")
            #expect(page.status == 200)
            Shop.expectPageHeaders(page)
            #expect(Shop.state(page) == "redeemed")
            #expect(page.bodyText.contains("Already unlocked"))
            #expect(!page.bodyText.contains(token), "a redeemed page shows the link no more")
            let success = try await shop.get(shop.successTarget())
            #expect(success.status == 200)
            #expect(Shop.pageName(success) == "success")
            #expect(Shop.state(success) == "linked-to-account")
            #expect(!success.bodyText.contains(token))
        }
    }

    @Test func anExpiredLinkNamesTheAddressAndTheRedeemsFreshLinkIsReady() async throws {
        try await Shop.run { shop throws in
            try await shop.checkout()
            let old = try await shop.token()
            try await shop.f.advance(WebSettings.defaultRedemptionLinkHours * 3_600_000)
            let page = try await shop.get("/pay/r/\(old)")
            #expect(page.status == 200)
            Shop.expectPageHeaders(page)
            #expect(Shop.state(page) == "expired")
            #expect(page.bodyText.contains("<span id=\"obfuscated-email\" class=\"address\">b****@e*****e.com</span>"))
            #expect(!page.bodyText.contains(old))
            let success = try await shop.get(shop.successTarget())
            #expect(success.status == 200)
            #expect(Shop.pageName(success) == "redemption", "the success page shows the link's own expired page")
            #expect(Shop.state(success) == "expired")

            // The app's redeem of the old link issues a fresh one: the success page shows it,
            // it is ready, and the old one stays expired.
            let app = try await shop.f.create("alice")
            #expect(try await shop.redeem(old, by: app.id).errorCode == .expired)
            let fresh = try await shop.token()
            #expect(fresh != old)
            #expect(Shop.state(try await shop.get("/pay/r/\(fresh)")) == "ready")
            #expect(Shop.state(try await shop.get("/pay/r/\(old)")) == "expired")
        }
    }

    @Test func aLinkNobodyIssuedIsInvalidAnd404() async throws {
        try await Shop.run { shop throws in
            try await shop.checkout()
            let token = try await shop.token()
            var tampered = Array(token)
            tampered[tampered.count - 1] = tampered.last == "A" ? "B" : "A"
            let unknown = RedemptionToken.prefix + String(repeating: "A", count: 43)
            for candidate in ["rdrt_short", String(tampered), unknown, token + "A", "%72drt", "not-a-token"] {
                let page = try await shop.get("/pay/r/\(candidate)")
                #expect(page.status == 404, "\(candidate)")
                Shop.expectPageHeaders(page)
                #expect(Shop.state(page) == "invalid", "\(candidate)")
                #expect(page.bodyText.contains("This link is not valid"))
                #expect(page.bodyText.contains("<span id=\"app-name\">Scanner</span>"), "the one app the server sells")
            }
            #expect(try await shop.get("/pay/r/").status == 404)
            #expect(try await shop.request("HEAD", "/pay/r/\(unknown)").status == 404)
        }
    }

    @Test func eachProjectsLinkOpensInItsOwnAppAndSessionsStayInTheirProject() async throws {
        try await Shop.run { acme throws in
            var notesWeb = Shop.web
            notesWeb["app_name"] = "Notes"
            notesWeb["app_scheme"] = "notes"
            let notes = try await Shop.open(acme.server, project: "notes", web: notesWeb)
            try await acme.checkout()
            try await notes.checkout("cs_test_a1Notes", subscription: "sub_1Notes")
            let notesToken = try await notes.token(of: "cs_test_a1Notes")
            let page = try await acme.get("/pay/r/\(notesToken)")
            #expect(Shop.state(page) == "ready")
            #expect(page.bodyText.contains("<span id=\"app-name\">Notes</span>"))
            #expect(page.bodyText.contains("href=\"\(Shop.deepLink(notesToken, scheme: "notes"))\""))
            #expect(try await acme.redeem(notesToken, by: try await acme.f.create("alice").id).errorCode == .invalidToken)

            // Another project's session is not acme's: acme waits for it as for any session.
            let crossed = try await acme.get("/pay/success?session_id=cs_test_a1Notes&project=acme")
            #expect(Shop.state(crossed) == "pending")
            #expect(!crossed.bodyText.contains(notesToken))
            // Two apps on one server: a link nobody issued is named by the public URL's host.
            let invalid = try await acme.get("/pay/r/rdrt_short")
            #expect(invalid.bodyText.contains("<span id=\"app-name\">pay.example.com</span>"))
            // A deleted project's links are no one's.
            #expect(try await acme.f.admin.call("project.delete", ["project": "notes"]).isSuccess)
            let deleted = try await acme.get("/pay/r/\(notesToken)")
            #expect(deleted.status == 404)
            #expect(Shop.state(deleted) == "invalid")
            #expect(deleted.bodyText.contains("<span id=\"app-name\">Scanner</span>"), "one app is left")
        }
    }

    @Test func theSuccessPageIsPendingUntilStripesEventThenShowsTheLink() async throws {
        let fake = try FakeStripeAPI()
        defer { fake.stop() }
        try await Shop.run(stripeAPIURL: fake.baseURL) { shop throws in
            guard case .object(var config) = PurchaseLinks.config() else { preconditionFailure("an object") }
            config["web"] = .object(Shop.web)
            try await shop.f.putConfig(.object(config))
            // The purchase link sends the buyer to Checkout, which returns them here.
            let link = try await shop.get("/pay/acme/default/monthly")
            #expect(link.status == 303)
            let session = try #require(fake.sessions.last)
            let target = try #require(session.returnURL.firstRange(of: Shop.publicURL).map { String(session.returnURL[$0.upperBound...]) })
            #expect(target == shop.successTarget(session.id))
            let pending = try await shop.get(target)
            #expect(pending.status == 200)
            Shop.expectPageHeaders(pending)
            #expect(Shop.state(pending) == "pending")
            #expect(pending.bodyText.contains("<meta http-equiv=\"refresh\" content=\"3\">"))
            #expect(Shop.token(in: pending.bodyText) == nil)

            try await shop.checkout(session.id)
            let ready = try await shop.get(target)
            #expect(ready.status == 200)
            Shop.expectPageHeaders(ready)
            #expect(Shop.pageName(ready) == "success")
            #expect(Shop.state(ready) == "ready")
            #expect(!ready.bodyText.contains("http-equiv=\"refresh\""))
            let token = try #require(Shop.token(in: ready.bodyText))
            #expect(ready.bodyText.contains("href=\"\(Shop.deepLink(token))\""))
            #expect(Shop.state(try await shop.get("/pay/r/\(token)")) == "ready")
            let head = try await shop.request("HEAD", target)
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
        }
    }

    @Test func aSessionThatNamedACustomerIsOnTheirAccountWithNothingToRedeem() async throws {
        try await Shop.run { shop throws in
            _ = try await shop.f.create("alice")
            try await shop.checkout(reference: "alice")
            let page = try await shop.get(shop.successTarget())
            #expect(page.status == 200)
            Shop.expectPageHeaders(page)
            #expect(Shop.state(page) == "linked-to-account")
            #expect(!page.bodyText.contains("id=\"open-app\""))
            #expect(Shop.token(in: page.bodyText) == nil)
        }
    }

    @Test func aSuccessPageOfNoSessionOrNoProjectIsUnknownAnd404() async throws {
        try await Shop.run { shop throws in
            try await shop.checkout()
            let noWeb = try await StoreFixture.make(shop.server, project: "plain")
            for target in [
                "/pay/success", "/pay/success?session_id=cs_test_a1Shop", "/pay/success?project=acme",
                "/pay/success?session_id=cs_test_a1Shop&project=nobody", "/pay/success?session_id=cs_test_a1Shop&project=Not%20an%20id",
                "/pay/success?session_id={CHECKOUT_SESSION_ID}&project=acme", "/pay/success?session_id=cs_&project=acme",
                "/pay/success?session_id=pi_123&project=acme", "/pay/success?session_id=cs_test_a1Shop&project=\(noWeb.project)",
                "/pay/success?session_id=%zz&project=acme", "/pay/success?canceled=1&project=nobody",
                "/pay/success?canceled=1&project=\(noWeb.project)", "/pay/success?canceled=yes&project=acme",
            ] {
                let page = try await shop.get(target)
                #expect(page.status == 404, "\(target)")
                Shop.expectPageHeaders(page)
                #expect(Shop.state(page) == "unknown", "\(target)")
            }
            let named = try await shop.get("/pay/success?session_id=nope&project=acme")
            #expect(named.bodyText.contains("<span id=\"app-name\">Scanner</span>"))
            // Checkout's cancel_url: the buyer left without paying, in the app's name.
            let canceled = try await shop.get("/pay/success?canceled=1&project=acme")
            #expect(canceled.status == 200)
            Shop.expectPageHeaders(canceled)
            #expect(Shop.state(canceled) == "canceled")
            #expect(canceled.bodyText.contains("Nothing was charged"))
            #expect(canceled.bodyText.contains("<span id=\"app-name\">Scanner</span>"))
            #expect(try await shop.get("/pay/success/").status == 404)
        }
    }

    @Test func theRedirectModeSendsTheLinkToTheRedirectURL() async throws {
        var web = Shop.web
        web["success_mode"] = "redirect"
        web["redirect_url"] = "https://scanner.example/welcome?from=pay#top"
        try await Shop.run(web: web) { shop throws in
            try await shop.checkout()
            let page = try await shop.get(shop.successTarget())
            #expect(page.status == 303)
            #expect(page.headers["Cache-Control"] == "no-store")
            #expect(page.headers["Referrer-Policy"] == "no-referrer")
            let location = try #require(page.headers["Location"])
            let prefix = "https://scanner.example/welcome?from=pay&redemption_url=https%3A%2F%2Fpay.example.com%2Fpay%2Fr%2F"
            #expect(location.hasPrefix(prefix), "\(location)")
            #expect(location.hasSuffix("#top"))
            let token = String(location.dropFirst(prefix.count).dropLast("#top".count))
            #expect(RedemptionToken.isWellFormed(token))
            #expect(Shop.state(try await shop.get("/pay/r/\(token)")) == "ready")

            // Pending still shows the page, which reloads itself until it can redirect.
            let pending = try await shop.get(shop.successTarget("cs_test_a1Later"))
            #expect(pending.status == 200)
            #expect(Shop.state(pending) == "pending")

            // On an account: the redirect without the link; a redirect URL without a query gets one.
            web["redirect_url"] = "https://scanner.example/welcome"
            try await shop.f.putConfig(Shop.config(web: web))
            _ = try await shop.f.create("alice")
            try await shop.checkout("cs_test_a1Alice", subscription: "sub_1Alice", reference: "alice")
            let onAccount = try await shop.get(shop.successTarget("cs_test_a1Alice"))
            #expect(onAccount.status == 303)
            #expect(onAccount.headers["Location"] == "https://scanner.example/welcome")
            let second = try await shop.get(shop.successTarget())
            #expect(second.headers["Location"] == "https://scanner.example/welcome?redemption_url="
                + "https%3A%2F%2Fpay.example.com%2Fpay%2Fr%2F\(token)")
        }
    }

    @Test func withoutAPublicURLThePagesAre503() async throws {
        try await Shop.run(publicURL: nil) { shop throws in
            try await shop.checkout()
            for target in [shop.successTarget(), "/pay/r/" + RedemptionToken.prefix + String(repeating: "A", count: 43)] {
                let page = try await shop.get(target)
                #expect(page.status == 503, "\(target)")
                #expect(page.headers["Retry-After"] == "30")
            }
        }
    }

    @Test(arguments: [false, true]) func aLinkStillOpensAfterARestart(checkpoint: Bool) async throws {
        let first = try await TestServer.start {
            $0.testClock = true
            $0.publicURL = Shop.publicURL
        }
        let shop = try await Shop.open(first)
        try await shop.checkout()
        let token = try await shop.token()
        if checkpoint { #expect(try await shop.f.admin.call("server.checkpoint").isSuccess) }
        let second = try await first.restart {
            $0.testClock = true
            $0.publicURL = Shop.publicURL
        }
        let page = try await HTTPListener.connect(second).request("GET", "/pay/r/\(token)")
        #expect(Shop.state(page) == "ready")
        #expect(page.bodyText.contains("href=\"\(Shop.deepLink(token))\""))
        await second.stop()
    }
}
