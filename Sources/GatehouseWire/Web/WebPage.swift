/// What the pages a web buyer opens have in common (DESIGN.md "Web purchases and redemption
/// links"): one self-contained document, phone first, that works with no JavaScript at all
/// (every action is a plain `<a>`), with no fonts, images or scripts from anywhere, so it
/// loads under ``contentSecurityPolicy``.
public enum WebPage {
    /// The `Content-Security-Policy` the server sends with every page: nothing may load but
    /// the page's own inline style.
    public static let contentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

    /// A page's content: its title, the state tests and styles find it by, and its `<main>`.
    struct Content {
        var title: String
        var state: String
        var body: HTML
        /// Seconds after which the page reloads itself, for a state that will change by itself.
        var refreshSeconds: Int? = nil
        /// Whether the body already says how to reach support (``askSupport(_:)``), so the
        /// footer does not repeat it.
        var namesSupport = false
    }

    static func document(_ face: WebAppFace, page: String, content: Content) -> String {
        let refresh: HTML = content.refreshSeconds.map { "<meta http-equiv=\"refresh\" content=\"\(String($0))\">\n" } ?? .empty
        let document: HTML = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="Content-Security-Policy" content="\(contentSecurityPolicy)">
            <meta name="referrer" content="no-referrer">
            <meta name="robots" content="noindex">
            <meta name="color-scheme" content="light dark">
            \(refresh)<title>\(content.title)</title>
            <style>\(style)</style>
            </head>
            <body data-page="\(page)">
            <main data-state="\(content.state)">
            \(brand(face))
            \(content.body)
            </main>
            \(content.namesSupport ? .empty : footer(face))
            </body>
            </html>

            """
        return document.markup
    }

    /// The app's name with a monogram, at the top of every page.
    private static func brand(_ face: WebAppFace) -> HTML {
        let initial = face.appName.first.map { String($0).uppercased() } ?? ""
        return "<header class=\"brand\"><span class=\"mark\" aria-hidden=\"true\">\(initial)</span><span id=\"app-name\">\(face.appName)</span></header>"
    }

    private static func footer(_ face: WebAppFace) -> HTML {
        guard let address = face.supportEmail, !address.isEmpty else { return .empty }
        return "<footer>Need help? \(supportContact(address))</footer>"
    }

    /// The support address, as a `mailto:` link when it is a plain address.
    static func supportContact(_ address: String) -> HTML {
        guard let mail = WebLink.mail(address) else { return "<span id=\"support-email\">\(address)</span>" }
        return "<a id=\"support-email\" href=\"\(mail)\">\(address)</a>"
    }

    /// Who to ask, in a sentence: the support address when the app has one.
    static func askSupport(_ face: WebAppFace) -> HTML {
        guard let address = face.supportEmail, !address.isEmpty else { return "contact \(face.appName)’s support" }
        return "write to \(supportContact(address))"
    }

    /// "Open the app" and the way to open the purchase on another device, for a ready purchase.
    /// A link that fails ``WebLink``'s checks is left out.
    static func redemptionActions(_ face: WebAppFace, deepLink: String, httpsLink: String) -> HTML {
        var pieces: [HTML] = []
        if let open = WebLink.deepLink(deepLink) {
            pieces.append("<a id=\"open-app\" class=\"button primary\" href=\"\(open)\">Open the app</a>")
        }
        pieces.append(storeButtons(face))
        if let https = WebLink.web(httpsLink) {
            pieces.append("""
                <section class="elsewhere">
                <h2>On a computer?</h2>
                <p>Open this link on the phone that has \(face.appName):</p>
                <a id="https-link" class="copy" href="\(https)">\(https.url)</a>
                </section>
                """)
        }
        return HTML(joining: pieces)
    }

    /// The App Store and Google Play buttons, each only when its URL is configured and http(s).
    static func storeButtons(_ face: WebAppFace) -> HTML {
        var buttons: [HTML] = []
        if let appStore = WebLink.web(face.appStoreURL) {
            buttons.append("<a id=\"app-store\" class=\"button store\" href=\"\(appStore)\"><small>Download on the</small>App Store</a>")
        }
        if let playStore = WebLink.web(face.playStoreURL) {
            buttons.append("<a id=\"play-store\" class=\"button store\" href=\"\(playStore)\"><small>Get it on</small>Google Play</a>")
        }
        guard !buttons.isEmpty else { return .empty }
        return """
            <section class="stores">
            <h2>Don’t have \(face.appName) yet?</h2>
            <div class="store-row">\(HTML(joining: buttons))</div>
            <p class="hint">Install it, then come back here and tap Open the app.</p>
            </section>
            """
    }
}
