/// Where a Checkout Session stands when its buyer lands on `<public url>/pay/success?session_id=…`.
public enum SuccessPageState: Sendable, Equatable {
    /// The purchase belongs to a web profile: its redemption link.
    case ready(deepLink: String, httpsLink: String)
    /// The session named an app user id, so the purchase is on that customer already.
    case linkedToAccount
    /// Stripe's events for the session have not arrived yet.
    case pending
    /// No session of the project has this id.
    case unknown
    /// The buyer left Checkout without paying (Checkout's `cancel_url`).
    case canceled
}

/// Stripe Checkout's `success_url`: the redemption link of what was just bought, or that there
/// is nothing to do but return to the app.
public enum SuccessPage {
    /// How often the pending page reloads itself: Stripe's events usually follow the redirect
    /// within seconds.
    static let pendingRefreshSeconds = 3

    public static func render(_ face: WebAppFace, state: SuccessPageState) -> String {
        WebPage.document(face, page: "success", content: content(face, state: state))
    }

    static func content(_ face: WebAppFace, state: SuccessPageState) -> WebPage.Content {
        let app = face.appName
        switch state {
        case .ready(let deepLink, let httpsLink):
            return WebPage.Content(
                title: "Thank you · Your \(app) purchase is ready",
                state: "ready",
                body: """
                    <h1>Thank you! Your \(app) purchase is ready</h1>
                    <p class="lead">Open \(app) on this phone to unlock what you bought.</p>
                    \(WebPage.redemptionActions(face, deepLink: deepLink, httpsLink: httpsLink))
                    """
            )
        case .linkedToAccount:
            return WebPage.Content(
                title: "Thank you · \(app)",
                state: "linked-to-account",
                body: """
                    <h1>Thank you for your purchase</h1>
                    <p class="lead">It’s already on your \(app) account. Return to the app to start using it: \
                    there is nothing to redeem.</p>
                    """
            )
        case .pending:
            return WebPage.Content(
                title: "Confirming your payment · \(app)",
                state: "pending",
                body: """
                    <div class="spinner" aria-hidden="true"></div>
                    <h1>Confirming your payment…</h1>
                    <p class="lead">Stripe is confirming your payment with us. This page updates by itself in a few seconds; \
                    there is no need to pay again.</p>
                    """,
                refreshSeconds: pendingRefreshSeconds
            )
        case .canceled:
            return WebPage.Content(
                title: "Payment canceled · \(app)",
                state: "canceled",
                body: """
                    <h1>Your payment was canceled</h1>
                    <p class="lead">Nothing was charged. Return to \(app), or go back to the page you came from to try \
                    again.</p>
                    """
            )
        case .unknown:
            return WebPage.Content(
                title: "Payment not found · \(app)",
                state: "unknown",
                body: """
                    <h1>We can’t find this payment</h1>
                    <p class="lead">If you paid for \(app), your email has a link to unlock it. If nothing arrives, \
                    \(WebPage.askSupport(face)).</p>
                    """,
                namesSupport: true
            )
        }
    }
}
