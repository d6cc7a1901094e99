import GatehouseWire
import Testing

// The email that carries a redemption link (DESIGN.md, "Web purchases and redemption links"):
// its subject, and both links in both parts, every value escaped in the HTML one.

private let token = "rdrt_q8XcVb2nM4kLp0sT7wY1zA3dF6gH9jK2lN5oP8rS1uW"
private let deepLink = "scanner://redeem_web_purchase?redemption_token=" + token
private let httpsLink = "https://pay.example.com/pay/r/" + token
private let scanner = WebAppFace(appName: "Scanner", supportEmail: "help@scanner.example")

/// The values of every `href="…"` in `html`, as written (still HTML-escaped).
private func hrefs(_ html: String) -> [String] {
    html.split(separator: "href=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
}

@Suite struct RedemptionEmailSays {
    @Test func theSubjectNamesTheApp() {
        #expect(RedemptionEmail.render(scanner, deepLink: deepLink, httpsLink: httpsLink, linkHours: 24).subject
                == "Your Scanner purchase is ready")
    }

    @Test func bothPartsHoldBothLinks() {
        let email = RedemptionEmail.render(scanner, deepLink: deepLink, httpsLink: httpsLink, linkHours: 24)
        #expect(email.text.contains("\n\(httpsLink)\n"))
        #expect(email.text.contains("\n\(deepLink)\n"))
        #expect(email.text.hasPrefix("Your Scanner purchase is ready\n"))
        #expect(hrefs(email.html) == [httpsLink, httpsLink, deepLink])
        #expect(email.html.contains("<a id=\"unlock\" href=\"\(httpsLink)\""))
        #expect(email.html.contains(">\(httpsLink)</a>"))
        #expect(email.html.contains("<a id=\"open-app\" href=\"\(deepLink)\""))
        #expect(email.html.contains("<title>Your Scanner purchase is ready</title>"))
        #expect(email.html.hasPrefix("<!doctype html>"))
    }

    @Test func itSaysHowLongTheLinkWorksAndThatARepliesReachSupport() {
        let email = RedemptionEmail.render(scanner, deepLink: deepLink, httpsLink: httpsLink, linkHours: 24)
        for part in [email.text, email.html] {
            #expect(part.contains("The link works for 24 hours."))
            #expect(part.contains("Questions? Reply to this email."))
        }
        let bare = RedemptionEmail.render(WebAppFace(appName: "Scanner"), deepLink: deepLink, httpsLink: httpsLink, linkHours: 1)
        for part in [bare.text, bare.html] {
            #expect(part.contains("The link works for 1 hour."))
            #expect(!part.contains("Reply to this email"), "without a support address a reply reaches no one")
        }
    }

    @Test func theSameLinksRenderTheSameEmail() {
        #expect(RedemptionEmail.render(scanner, deepLink: deepLink, httpsLink: httpsLink, linkHours: 24)
                == RedemptionEmail.render(scanner, deepLink: deepLink, httpsLink: httpsLink, linkHours: 24))
    }
}

@Suite struct RedemptionEmailKeepsHostileValuesText {
    @Test func aHostileAppNameIsEscapedInTheHTMLAndLeftAsItIsInTheText() {
        let name = "<script>alert(\"x\")</script> & 'Co'"
        let email = RedemptionEmail.render(WebAppFace(appName: name), deepLink: deepLink, httpsLink: httpsLink, linkHours: 24)
        #expect(!email.html.contains("<script"))
        #expect(email.html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;Co&#39;"))
        #expect(email.subject == "Your \(name) purchase is ready", "the subject is a header, encoded by the message")
        #expect(email.text.contains("Thank you for buying \(name)."))
    }

    @Test(arguments: ["javascript:alert(1)", "https://pay.example.com/pay/r/x\"><script>", "pay.example.com/pay/r/rdrt_x"])
    func anHTTPSLinkThatIsNotHTTPIsLeftOutOfTheHTML(link: String) {
        let email = RedemptionEmail.render(scanner, deepLink: deepLink, httpsLink: link, linkHours: 24)
        #expect(hrefs(email.html) == [deepLink])
        #expect(!email.html.contains("<script"))
        #expect(!email.html.lowercased().contains("javascript:"))
    }

    @Test(arguments: ["javascript://redeem_web_purchase?redemption_token=rdrt_x", "scanner://elsewhere?redemption_token=rdrt_x",
                      "scanner://redeem_web_purchase?redemption_token=rdrt_x\"onclick=\"a"])
    func aDeepLinkThatIsNotTheAppsRedemptionLinkIsLeftOutOfTheHTML(link: String) {
        let email = RedemptionEmail.render(scanner, deepLink: link, httpsLink: httpsLink, linkHours: 24)
        #expect(hrefs(email.html) == [httpsLink, httpsLink])
        #expect(!email.html.contains("onclick"))
    }
}
