import GatehouseWire
import Testing

private let deepLink = "scanner://redeem_web_purchase?redemption_token=rdrt_q8XcVb2nM4kLp0sT7wY1zA3dF6gH9jK2lN5oP8rS1uW"
private let httpsLink = "https://pay.example.com/pay/r/rdrt_q8XcVb2nM4kLp0sT7wY1zA3dF6gH9jK2lN5oP8rS1uW"
private let scanner = WebAppFace(
    appName: "Scanner", supportEmail: "help@scanner.example", appStoreURL: "https://apps.apple.com/app/id123456789",
    playStoreURL: "https://play.google.com/store/apps/details?id=com.example.scanner&hl=en"
)
private let bare = WebAppFace(appName: "Scanner")

private let everyRedemptionState: [RedemptionPageState] = [
    .ready(deepLink: deepLink, httpsLink: httpsLink), .redeemed, .expired(obfuscatedEmail: "t***@e*****e.com"),
    .expired(obfuscatedEmail: nil), .invalid,
]
private let everySuccessState: [SuccessPageState] = [
    .ready(deepLink: deepLink, httpsLink: httpsLink), .linkedToAccount, .pending, .unknown, .canceled,
]

private func everyPage(_ face: WebAppFace) -> [String] {
    everyRedemptionState.map { RedemptionPage.render(face, state: $0) } + everySuccessState.map { SuccessPage.render(face, state: $0) }
}

/// The values of every `href="…"` in `page`, as written (still HTML-escaped).
private func hrefs(_ page: String) -> [String] {
    page.split(separator: "href=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
}

@Suite struct RedemptionPageShowsEachState {
    @Test func readyOpensTheAppWithTheDeepLinkAndShowsTheHTTPSLink() {
        let page = RedemptionPage.render(scanner, state: .ready(deepLink: deepLink, httpsLink: httpsLink))
        #expect(page.contains("<main data-state=\"ready\">"))
        #expect(page.contains("<a id=\"open-app\" class=\"button primary\" href=\"\(deepLink)\">Open the app</a>"))
        #expect(page.contains("id=\"https-link\" class=\"copy\" href=\"\(httpsLink)\">\(httpsLink)</a>"))
        #expect(page.contains("<title>Your Scanner purchase is ready</title>"))
        #expect(page.contains("<h1>Your Scanner purchase is ready</h1>"))
    }

    @Test func redeemedSaysAlreadyUnlockedAndOffersNothingToOpen() {
        let page = RedemptionPage.render(scanner, state: .redeemed)
        #expect(page.contains("<main data-state=\"redeemed\">"))
        #expect(page.contains("<h1>Already unlocked</h1>"))
        #expect(!page.contains("id=\"open-app\""))
        #expect(!page.contains("id=\"https-link\""))
    }

    @Test func expiredNamesTheAddressTheNewLinkWentTo() {
        let page = RedemptionPage.render(scanner, state: .expired(obfuscatedEmail: "t***@e*****e.com"))
        #expect(page.contains("<main data-state=\"expired\">"))
        #expect(page.contains("<span id=\"obfuscated-email\" class=\"address\">t***@e*****e.com</span>"))
        #expect(!page.contains("id=\"open-app\""))
    }

    @Test func expiredWithoutAnAddressSendsTheBuyerToSupport() {
        let page = RedemptionPage.render(scanner, state: .expired(obfuscatedEmail: nil))
        #expect(page.contains("<main data-state=\"expired\">"))
        #expect(!page.contains("obfuscated-email"))
        #expect(page.contains("write to <a id=\"support-email\" href=\"mailto:help@scanner.example\">help@scanner.example</a>"))
        let withoutSupport = RedemptionPage.render(bare, state: .expired(obfuscatedEmail: nil))
        #expect(withoutSupport.contains("contact Scanner’s support"))
        #expect(!withoutSupport.contains("support-email"))
    }

    @Test func invalidSaysTheLinkIsNotValid() {
        let page = RedemptionPage.render(scanner, state: .invalid)
        #expect(page.contains("<main data-state=\"invalid\">"))
        #expect(page.contains("<h1>This link is not valid</h1>"))
        #expect(!page.contains("id=\"open-app\""))
    }
}

@Suite struct SuccessPageShowsEachState {
    @Test func readyOpensTheAppAndShowsTheHTTPSLinkAndStores() {
        let page = SuccessPage.render(scanner, state: .ready(deepLink: deepLink, httpsLink: httpsLink))
        #expect(page.contains("<body data-page=\"success\">"))
        #expect(page.contains("<main data-state=\"ready\">"))
        #expect(page.contains("id=\"open-app\" class=\"button primary\" href=\"\(deepLink)\""))
        #expect(page.contains("id=\"https-link\""))
        #expect(page.contains("id=\"app-store\""))
        #expect(page.contains("id=\"play-store\""))
    }

    @Test func linkedToAccountSendsTheBuyerBackToTheAppWithNothingToRedeem() {
        let page = SuccessPage.render(scanner, state: .linkedToAccount)
        #expect(page.contains("<main data-state=\"linked-to-account\">"))
        #expect(page.contains("Return to the app"))
        #expect(!page.contains("id=\"open-app\""))
        #expect(!page.contains("id=\"https-link\""))
    }

    @Test func pendingRefreshesItselfWithoutScript() {
        let page = SuccessPage.render(scanner, state: .pending)
        #expect(page.contains("<main data-state=\"pending\">"))
        #expect(page.contains("<meta http-equiv=\"refresh\" content=\"3\">"))
    }

    @Test func onlyThePendingPageRefreshes() {
        let others = everyRedemptionState.map { RedemptionPage.render(scanner, state: $0) }
            + [SuccessPageState.ready(deepLink: deepLink, httpsLink: httpsLink), .linkedToAccount, .unknown, .canceled].map {
                SuccessPage.render(scanner, state: $0)
            }
        for page in others {
            #expect(!page.contains("http-equiv=\"refresh\""))
        }
    }

    @Test func canceledSaysNothingWasChargedAndOffersNoLink() {
        let page = SuccessPage.render(scanner, state: .canceled)
        #expect(page.contains("<main data-state=\"canceled\">"))
        #expect(page.contains("Nothing was charged"))
        #expect(!page.contains("id=\"open-app\""))
    }

    @Test func unknownSaysThePaymentIsNotFound() {
        let page = SuccessPage.render(scanner, state: .unknown)
        #expect(page.contains("<main data-state=\"unknown\">"))
        #expect(!page.contains("id=\"open-app\""))
    }
}

@Suite struct WebPagesAreSelfContainedPhonePages {
    @Test func everyPageIsEnglishPhoneSizedAndNamesTheApp() {
        for page in everyPage(scanner) {
            #expect(page.hasPrefix("<!doctype html>\n<html lang=\"en\">"))
            #expect(page.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"))
            #expect(page.contains("<span id=\"app-name\">Scanner</span>"))
            let title = page.split(separator: "<title>")[1].prefix { $0 != "<" }
            #expect(title.contains("Scanner"))
            #expect(page.contains("prefers-color-scheme:dark"))
        }
    }

    @Test func noIDIsUsedTwiceOnAPage() {
        for page in everyPage(scanner) {
            let ids = page.split(separator: " id=\"").dropFirst().map { $0.prefix { $0 != "\"" } }
            #expect(Set(ids).count == ids.count, "\(ids)")
        }
    }

    @Test func theSupportAddressShowsOnceOnEveryPage() {
        for page in everyPage(scanner) {
            #expect(page.split(separator: "help@scanner.example", omittingEmptySubsequences: false).count == 3, "href and text, once")
        }
    }

    @Test func noPageHasScriptsOrLoadsAnythingFromElsewhere() throws {
        let eventHandlerAttribute = try Regex(#"\son[a-z]+\s*="#)
        for page in everyPage(scanner) {
            #expect(!page.lowercased().contains("<script"))
            #expect(!page.contains("<link"))
            #expect(!page.contains("<img"))
            #expect(!page.contains("@import"))
            #expect(!page.contains("url("))
            #expect(!page.contains(eventHandlerAttribute))
        }
    }

    @Test func theContentSecurityPolicyAllowsOnlyInlineStyle() {
        #expect(WebPage.contentSecurityPolicy == "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
        let page = RedemptionPage.render(scanner, state: .invalid)
        #expect(page.contains(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;; img-src data:\">"
        ))
    }

    @Test func everyLinkIsWebTheDeepLinkOrTheSupportAddress() {
        for page in everyPage(scanner) {
            for href in hrefs(page) {
                let allowed = href.hasPrefix("https://") || href == deepLink || href == "mailto:help@scanner.example"
                #expect(allowed, "\(href)")
            }
        }
    }
}

@Suite struct StoreButtonsShowOnlyWhenConfigured {
    private let ready = RedemptionPageState.ready(deepLink: deepLink, httpsLink: httpsLink)

    @Test func bothStoresWhenBothAreConfigured() {
        let page = RedemptionPage.render(scanner, state: ready)
        #expect(page.contains("<a id=\"app-store\" class=\"button store\" href=\"https://apps.apple.com/app/id123456789\">"))
        #expect(page.contains(
            "<a id=\"play-store\" class=\"button store\" href=\"https://play.google.com/store/apps/details?id=com.example.scanner&amp;hl=en\">"
        ))
    }

    @Test func noStoreSectionWhenNoneIsConfigured() {
        let page = RedemptionPage.render(bare, state: ready)
        #expect(!page.contains("app-store"))
        #expect(!page.contains("play-store"))
        #expect(!page.contains("class=\"stores\""))
        #expect(page.contains("id=\"open-app\""))
    }

    @Test func onlyTheConfiguredStore() {
        let page = RedemptionPage.render(WebAppFace(appName: "Scanner", playStoreURL: "https://play.google.com/store/apps/details?id=x"), state: ready)
        #expect(!page.contains("app-store"))
        #expect(page.contains("id=\"play-store\""))
    }
}

@Suite struct HostileValuesStayText {
    private let hostileName = "<script>alert(\"x\")</script> & 'Co'"

    @Test func aHostileAppNameIsEscapedEverywhere() {
        let face = WebAppFace(appName: hostileName, supportEmail: "\"><script>x</script>")
        for page in everyPage(face) {
            #expect(!page.contains("<script"))
            #expect(page.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;Co&#39;"))
        }
        let expired = RedemptionPage.render(face, state: .expired(obfuscatedEmail: nil))
        #expect(expired.contains("<span id=\"support-email\">&quot;&gt;&lt;script&gt;x&lt;/script&gt;</span>"), "not a mailto link")
    }

    @Test func aHostileObfuscatedAddressIsEscaped() {
        let page = RedemptionPage.render(scanner, state: .expired(obfuscatedEmail: "<b>t***</b>@e.com"))
        #expect(page.contains(">&lt;b&gt;t***&lt;/b&gt;@e.com</span>"))
    }

    @Test(arguments: [
        "javascript:alert(1)", "JavaScript:alert(1)", " javascript:alert(1)", "java\tscript:alert(1)", "data:text/html,<b>x</b>",
        "https://apps.apple.com/\"onclick=\"alert(1)", "https://", "ftp://apps.apple.com/app", "//apps.apple.com/app",
        "https://apps.apple.com/app id", "vbscript:msgbox(1)",
    ])
    func aStoreURLThatIsNotHTTPIsLeftOut(url: String) {
        let face = WebAppFace(appName: "Scanner", appStoreURL: url, playStoreURL: url)
        let page = RedemptionPage.render(face, state: .ready(deepLink: deepLink, httpsLink: httpsLink))
        #expect(!page.contains("app-store"))
        #expect(!page.contains("play-store"))
        #expect(!page.lowercased().contains("script:"))
    }

    @Test(arguments: [
        "javascript://redeem_web_purchase?redemption_token=rdrt_x%0Aalert(1)", "javascript://redeem_web_purchase?redemption_token=rdrt_x",
        "JAVASCRIPT://redeem_web_purchase?redemption_token=rdrt_x", "data://redeem_web_purchase?redemption_token=rdrt_x",
        "https://redeem_web_purchase?redemption_token=rdrt_x", "scanner://redeem_web_purchase?redemption_token=rdrt_x\"onclick=\"a",
        "scanner://redeem_web_purchase?redemption_token=", "scanner://elsewhere?redemption_token=rdrt_x",
        "1scanner://redeem_web_purchase?redemption_token=rdrt_x", "javascript:alert(1)//://redeem_web_purchase?redemption_token=rdrt_x",
    ])
    func aDeepLinkThatIsNotTheAppsRedemptionLinkIsLeftOut(link: String) {
        let page = SuccessPage.render(scanner, state: .ready(deepLink: link, httpsLink: httpsLink))
        #expect(!page.contains("open-app"))
        #expect(!page.lowercased().contains("script:"))
        #expect(page.contains("id=\"https-link\""))
    }

    @Test(arguments: ["javascript:alert(1)", "https://pay.example.com/pay/r/x\"><script>", "pay.example.com/pay/r/rdrt_x"])
    func anHTTPSLinkThatIsNotHTTPIsLeftOut(link: String) {
        let page = RedemptionPage.render(scanner, state: .ready(deepLink: deepLink, httpsLink: link))
        #expect(!page.contains("https-link"))
        #expect(!page.contains("<script"))
        #expect(page.contains("id=\"open-app\""))
    }

    @Test func aSchemeWithDigitsPlusDotAndDashIsTheAppsOwn() {
        let link = "gh-1a2b3c4d5e.v2+x://redeem_web_purchase?redemption_token=rdrt_AZaz09_-"
        let page = RedemptionPage.render(scanner, state: .ready(deepLink: link, httpsLink: httpsLink))
        #expect(page.contains("id=\"open-app\" class=\"button primary\" href=\"\(link)\""))
    }
}
