/// Where the https form of a redemption link (`<public url>/pay/r/<token>`) stands.
public enum RedemptionPageState: Sendable, Equatable {
    /// The link is current: open it in the app.
    case ready(deepLink: String, httpsLink: String)
    /// Another profile already redeemed the purchase.
    case redeemed
    /// The link is older than `redemption_link_hours` or a newer one replaced it. A redeem of it in
    /// the app sends a newer link to the buyer's address, shown obfuscated (opening the page sends
    /// nothing); `nil` when the purchase has no address.
    case expired(obfuscatedEmail: String?)
    /// No purchase has this link.
    case invalid
}

/// The page of the https redemption link: "Open the app" (the deep link) and the App Store and
/// Google Play buttons, or why the link no longer opens anything.
public enum RedemptionPage {
    public static func render(_ face: WebAppFace, state: RedemptionPageState) -> String {
        WebPage.document(face, page: "redemption", content: content(face, state: state))
    }

    static func content(_ face: WebAppFace, state: RedemptionPageState) -> WebPage.Content {
        let app = face.appName
        switch state {
        case .ready(let deepLink, let httpsLink):
            return WebPage.Content(
                title: "Your \(app) purchase is ready",
                state: "ready",
                body: """
                    <h1>Your \(app) purchase is ready</h1>
                    <p class="lead">Open \(app) on this phone to unlock your purchase.</p>
                    \(WebPage.redemptionActions(face, deepLink: deepLink, httpsLink: httpsLink))
                    """
            )
        case .redeemed:
            return WebPage.Content(
                title: "Already unlocked · \(app)",
                state: "redeemed",
                body: """
                    <h1>Already unlocked</h1>
                    <p class="lead">This purchase is already unlocked in \(app), on the account that used this link first. \
                    Open \(app) on that device to use it.</p>
                    <p>Not you? Please \(WebPage.askSupport(face)).</p>
                    """,
                namesSupport: true
            )
        case .expired(let obfuscatedEmail):
            return WebPage.Content(
                title: "This link has expired · \(app)", state: "expired", body: expired(face, sentTo: obfuscatedEmail), namesSupport: true
            )
        case .invalid:
            return WebPage.Content(
                title: "Link not valid · \(app)",
                state: "invalid",
                body: """
                    <h1>This link is not valid</h1>
                    <p class="lead">It may be incomplete. Open the link from your \(app) email again, tapping it rather \
                    than copying part of it.</p>
                    <p>Still stuck? Please \(WebPage.askSupport(face)).</p>
                    """,
                namesSupport: true
            )
        }
    }

    private static func expired(_ face: WebAppFace, sentTo obfuscatedEmail: String?) -> HTML {
        guard let obfuscatedEmail, !obfuscatedEmail.isEmpty else {
            return """
                <h1>This link has expired</h1>
                <p class="lead">For a new link to your \(face.appName) purchase, \(WebPage.askSupport(face)).</p>
                """
        }
        return """
            <h1>This link has expired</h1>
            <p class="lead">Open the newest email from \(face.appName) on your phone and tap its link to the app. When \
            that link has expired too, the app asks for a new one, and it goes to \
            <span id="obfuscated-email" class="address">\(obfuscatedEmail)</span>.</p>
            <p>No email? Check your spam folder, or \(WebPage.askSupport(face)).</p>
            """
    }
}
