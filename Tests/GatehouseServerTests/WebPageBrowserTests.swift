import Foundation
import GatehouseCore
import GatehousePosix
import GatehouseTesting
import GatehouseWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

private let deepLink = "scanner://redeem_web_purchase?redemption_token=rdrt_q8XcVb2nM4kLp0sT7wY1zA3dF6gH9jK2lN5oP8rS1uW"
private let httpsLink = "https://pay.example.com/pay/r/rdrt_q8XcVb2nM4kLp0sT7wY1zA3dF6gH9jK2lN5oP8rS1uW"
private let scanner = WebAppFace(
    appName: "Scanner", supportEmail: "help@scanner.example", appStoreURL: "https://apps.apple.com/app/id123456789",
    playStoreURL: "https://play.google.com/store/apps/details?id=com.example.scanner&hl=en"
)

/// `html` as headless Chromium with JavaScript off builds it, read from a file.
private func openInBrowser(_ html: String, javaScript: Bool = false) async throws -> DOMElements {
    try await withTemporaryDirectory(prefix: "gh-page") { directory in
        let page = directory.appending("page.html")
        try await TestFiles.write(Data(html.utf8), to: page)
        return try await HeadlessChromium(javaScript: javaScript).elements(url: HeadlessChromium.fileURL(page))
    }
}

/// The `<main>`'s `data-state`, which each page state sets.
private func state(_ dom: DOMElements) -> String? {
    dom.elements(tag: "main").first?.attributes["data-state"]
}

/// The buyer's pages in a real browser with JavaScript off: rendered from strings for every
/// state and face, and served by a real server (`GET /pay/r/…`, `GET /pay/success`) for the
/// states a buyer meets. Each browser is a few processes; one at a time leaves the two cores to
/// the rest of the suite.
@Suite(.serialized, .enabled(if: HeadlessChromium.isInstalled, "needs /usr/bin/chromium (scripts/install-packages.sh installs it)"))
struct WebPagesInABrowser {
    @Test func theHarnessRunsPageScriptsOnlyWhenAsked() async throws {
        let page = "<!doctype html><html><body><p id=\"before\">static</p><script>"
            + "document.body.insertAdjacentHTML('beforeend','<p id=\"scripted\">ran</p>')</script></body></html>"
        let withoutScripts = try await openInBrowser(page)
        #expect(withoutScripts.element(id: "before") != nil)
        #expect(withoutScripts.element(id: "scripted") == nil)
        let withScripts = try await openInBrowser(page, javaScript: true)
        #expect(withScripts.text(id: "scripted") == "ran")
    }

    @Test func aBrowserThatOutlivesItsTimeoutIsKilled() async throws {
        let browser = HeadlessChromium(timeout: .milliseconds(1))
        let failure = await #expect(throws: HeadlessChromium.Failure.self) {
            try await browser.dumpDOM(url: "about:blank")
        }
        #expect(failure?.description.contains("was killed") == true)
    }

    @Test func readyRedemptionPageOpensTheAppWithoutScript() async throws {
        let dom = try await openInBrowser(RedemptionPage.render(scanner, state: .ready(deepLink: deepLink, httpsLink: httpsLink)))
        #expect(state(dom) == "ready")
        #expect(dom.elements(tag: "html").first?.attributes["lang"] == "en")
        #expect(dom.elements(tag: "title").first?.text == "Your Scanner purchase is ready")
        #expect(dom.text(id: "app-name") == "Scanner")
        let openApp = try #require(dom.element(id: "open-app"))
        #expect(openApp.tag == "a")
        #expect(openApp.attributes["href"] == deepLink)
        #expect(dom.text(id: "open-app") == "Open the app")
        #expect(dom.element(id: "https-link")?.attributes["href"] == httpsLink)
        #expect(dom.text(id: "https-link") == httpsLink)
        #expect(dom.element(id: "app-store")?.attributes["href"] == "https://apps.apple.com/app/id123456789")
        #expect(dom.element(id: "play-store")?.attributes["href"] == "https://play.google.com/store/apps/details?id=com.example.scanner&hl=en")
        #expect(dom.elements(tag: "script").isEmpty)
    }

    @Test func readyRedemptionPageWithoutStoresHasNoStoreButtons() async throws {
        let dom = try await openInBrowser(
            RedemptionPage.render(WebAppFace(appName: "Scanner"), state: .ready(deepLink: deepLink, httpsLink: httpsLink))
        )
        #expect(dom.element(id: "open-app") != nil)
        #expect(dom.element(id: "app-store") == nil)
        #expect(dom.element(id: "play-store") == nil)
    }

    @Test func redeemedRedemptionPageSaysAlreadyUnlocked() async throws {
        let dom = try await openInBrowser(RedemptionPage.render(scanner, state: .redeemed))
        #expect(state(dom) == "redeemed")
        #expect(dom.elements(tag: "h1").first?.text == "Already unlocked")
        #expect(dom.element(id: "open-app") == nil)
    }

    @Test func expiredRedemptionPageNamesTheAddress() async throws {
        let dom = try await openInBrowser(RedemptionPage.render(scanner, state: .expired(obfuscatedEmail: "t***@e*****e.com")))
        #expect(state(dom) == "expired")
        #expect(dom.text(id: "obfuscated-email") == "t***@e*****e.com")
        #expect(dom.element(id: "open-app") == nil)
    }

    @Test func expiredRedemptionPageWithoutAnAddressNamesSupport() async throws {
        let dom = try await openInBrowser(RedemptionPage.render(scanner, state: .expired(obfuscatedEmail: nil)))
        #expect(state(dom) == "expired")
        #expect(dom.element(id: "obfuscated-email") == nil)
        #expect(dom.element(id: "support-email")?.attributes["href"] == "mailto:help@scanner.example")
    }

    @Test func invalidRedemptionPageSaysSo() async throws {
        let dom = try await openInBrowser(RedemptionPage.render(scanner, state: .invalid))
        #expect(state(dom) == "invalid")
        #expect(dom.elements(tag: "h1").first?.text == "This link is not valid")
    }

    @Test func aHostileAppNameIsTextInTheBrowser() async throws {
        let name = "<img src=x><script>document.title='owned'</script>"
        let dom = try await openInBrowser(RedemptionPage.render(WebAppFace(appName: name), state: .invalid))
        #expect(dom.text(id: "app-name") == name)
        #expect(dom.elements(tag: "img").isEmpty)
        #expect(dom.elements(tag: "script").isEmpty)
    }

    @Test func readySuccessPageOffersTheAppTheLinkAndTheStores() async throws {
        let dom = try await openInBrowser(SuccessPage.render(scanner, state: .ready(deepLink: deepLink, httpsLink: httpsLink)))
        #expect(dom.elements(tag: "body").first?.attributes["data-page"] == "success")
        #expect(state(dom) == "ready")
        #expect(dom.element(id: "open-app")?.attributes["href"] == deepLink)
        #expect(dom.element(id: "https-link")?.attributes["href"] == httpsLink)
        #expect(dom.element(id: "app-store") != nil)
        #expect(dom.element(id: "play-store") != nil)
    }

    @Test func linkedToAccountSuccessPageHasNothingToRedeem() async throws {
        let dom = try await openInBrowser(SuccessPage.render(scanner, state: .linkedToAccount))
        #expect(state(dom) == "linked-to-account")
        #expect(dom.element(id: "open-app") == nil)
        #expect(dom.element(id: "https-link") == nil)
    }

    @Test func pendingSuccessPageRefreshesItself() async throws {
        let dom = try await openInBrowser(SuccessPage.render(scanner, state: .pending))
        #expect(state(dom) == "pending")
        let refresh = dom.elements(tag: "meta").first { $0.attributes["http-equiv"] == "refresh" }
        #expect(refresh?.attributes["content"] == "3")
    }

    @Test func unknownSuccessPageSaysSo() async throws {
        let dom = try await openInBrowser(SuccessPage.render(scanner, state: .unknown))
        #expect(state(dom) == "unknown")
        #expect(dom.element(id: "open-app") == nil)
    }

    // MARK: The pages as the server serves them

    /// `target` on `shop`'s HTTP listener, as headless Chromium with JavaScript off builds it.
    private func openServed(_ shop: WebShop, _ target: String) async throws -> DOMElements {
        try await HeadlessChromium().elements(url: Self.url(shop, target))
    }

    private static func url(_ shop: WebShop, _ target: String) -> String {
        "http://\(shop.server.httpAddress.host):\(shop.server.httpAddress.port)\(target)"
    }

    @Test func aServedReadyLinkPageOpensTheAppWithoutScript() async throws {
        try await WebShop.run { shop throws in
            try await shop.checkout()
            let token = try await shop.token()
            let dom = try await openServed(shop, "/pay/r/\(token)")
            #expect(dom.elements(tag: "body").first?.attributes["data-page"] == "redemption")
            #expect(state(dom) == "ready")
            #expect(dom.elements(tag: "title").first?.text == "Your Scanner purchase is ready")
            #expect(dom.text(id: "app-name") == "Scanner")
            #expect(dom.element(id: "open-app")?.attributes["href"] == WebShop.deepLink(token))
            #expect(dom.text(id: "open-app") == "Open the app")
            #expect(dom.element(id: "https-link")?.attributes["href"] == WebShop.httpsLink(token))
            #expect(dom.element(id: "app-store")?.attributes["href"] == "https://apps.apple.com/app/id123456789")
            #expect(dom.element(id: "play-store")?.attributes["href"] == "https://play.google.com/store/apps/details?id=com.example.scanner")
            #expect(dom.elements(tag: "script").isEmpty)
        }
    }

    @Test func servedRedeemedAndExpiredLinkPagesSayWhy() async throws {
        try await WebShop.run { shop throws in
            try await shop.checkout("cs_test_a1Redeemed", subscription: "sub_1Redeemed")
            try await shop.checkout("cs_test_a1Expired", subscription: "sub_1Expired", email: "test@example.com")
            let redeemed = try await shop.token(of: "cs_test_a1Redeemed")
            let expired = try await shop.token(of: "cs_test_a1Expired")
            #expect(try await shop.redeem(redeemed, by: try await shop.f.create("alice").id).isSuccess)
            try await shop.f.advance(WebSettings.defaultRedemptionLinkHours * 3_600_000)

            let redeemedDOM = try await openServed(shop, "/pay/r/\(redeemed)")
            #expect(state(redeemedDOM) == "redeemed")
            #expect(redeemedDOM.elements(tag: "h1").first?.text == "Already unlocked")
            #expect(redeemedDOM.element(id: "open-app") == nil)
            let expiredDOM = try await openServed(shop, "/pay/r/\(expired)")
            #expect(state(expiredDOM) == "expired")
            #expect(expiredDOM.text(id: "obfuscated-email") == "t***@e*****e.com")
            #expect(expiredDOM.element(id: "open-app") == nil)
            #expect(expiredDOM.element(id: "support-email")?.attributes["href"] == "mailto:help@scanner.example")
        }
    }

    @Test func aServedSuccessPageWaitsForStripeThenOffersTheLink() async throws {
        try await WebShop.run { shop throws in
            let pending = try await openServed(shop, shop.successTarget())
            #expect(pending.elements(tag: "body").first?.attributes["data-page"] == "success")
            #expect(state(pending) == "pending")
            let refresh = pending.elements(tag: "meta").first { $0.attributes["http-equiv"] == "refresh" }
            #expect(refresh?.attributes["content"] == "3")
            #expect(pending.element(id: "open-app") == nil)

            try await shop.checkout()
            let token = try await shop.token()
            let ready = try await openServed(shop, shop.successTarget())
            #expect(state(ready) == "ready")
            #expect(ready.element(id: "open-app")?.attributes["href"] == WebShop.deepLink(token))
            #expect(ready.element(id: "https-link")?.attributes["href"] == WebShop.httpsLink(token))
            #expect(ready.element(id: "app-store") != nil)
            #expect(!ready.elements(tag: "meta").contains { $0.attributes["http-equiv"] == "refresh" })
        }
    }

    /// A phone-sized picture of the served ready page; `GATEHOUSE_WRITE_SCREENSHOT=1` keeps it
    /// as docs/images/redemption-ready.png.
    @Test func aServedReadyLinkPageScreenshotIsPhoneSized() async throws {
        try await WebShop.run { shop throws in
            try await shop.checkout()
            let token = try await shop.token()
            let png = try await withTemporaryDirectory(prefix: "gh-page") { directory in
                let shot = directory.appending("ready.png")
                try await HeadlessChromium().screenshot(url: Self.url(shop, "/pay/r/\(token)"), to: shot, width: 390, height: 844)
                return try await offThePool { try Data(contentsOf: URL(fileURLWithPath: shot)) }
            }
            #expect(png.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
            #expect(Self.bigEndian(png, at: 16) == 390)
            #expect(Self.bigEndian(png, at: 20) == 844)
            if ProcessInfo.processInfo.environment["GATEHOUSE_WRITE_SCREENSHOT"] != nil {
                try await TestFiles.write(png, to: Self.screenshotPath)
            }
        }
    }

    /// The IHDR chunk's width and height, the first fields after the signature and chunk header.
    private static func bigEndian(_ data: Data, at offset: Int) -> UInt32 {
        data.dropFirst(offset).prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static let screenshotPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/images/redemption-ready.png").path
}
