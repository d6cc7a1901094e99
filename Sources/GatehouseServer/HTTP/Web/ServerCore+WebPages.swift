import Foundation
import GatehouseCore
import GatehouseHTTP
import GatehouseRuntime
import GatehouseWire

/// The two pages a web buyer opens (DESIGN.md, "Web purchases and redemption links"; docs/web.md,
/// "The pages"): the https form of a redemption link, `GET /pay/r/{token}`, and Stripe
/// Checkout's `success_url`, `GET /pay/success?session_id=…&project=…`. Both read the project
/// and change nothing; a page goes out once what it shows is durable.
extension ServerCore {
    /// `GET /pay/r/{token}`: the link's page, ready (the deep link and the stores), redeemed or
    /// expired (200), or invalid (404). The token names no project: each project's
    /// ``PublishedWeb`` says whether it issued it, and only that project's actor is entered.
    func redemptionPage(token: String) -> HTTPHandling {
        guard let base = publicBase else { return .respond(Self.noPublicURL, .other(.internal)) }
        guard let project = issuer(of: token) else {
            return .respond(Self.page(404, RedemptionPage.render(neutralFace(base), state: .invalid)), .other(.invalidToken))
        }
        return .work {
            let standing = await project.linkStanding(token: token)
            let settings = project.publishedWeb.settings
            let state: RedemptionPageState
            switch standing.value {
            case .ready(let token):
                let links = Self.links(token, of: project, settings, base: base)
                state = .ready(deepLink: links.deep, httpsLink: links.https)
            case .redeemed: state = .redeemed
            case .expired(let address): state = .expired(obfuscatedEmail: address)
            case .invalid: state = .invalid
            }
            let face = settings.map(Self.face) ?? self.neutralFace(base)
            let response = Self.page(state == .invalid ? 404 : 200, RedemptionPage.render(face, state: state))
            return HTTPWorkAnswer(response: response, tally: .other(state == .invalid ? .invalidToken : nil), durableAt: standing.lsn)
        }
    }

    /// `GET /pay/success?session_id=cs_…&project=<id>`: where the session's purchase stands.
    /// Pending (Stripe's `checkout.session.completed` has not arrived: the page reloads itself),
    /// ready (the link), on the buyer's account already (the session named an app user id, or
    /// the link was redeemed since), expired (the link page's expired state), or unknown (404: no
    /// such project or one without `web`, no session id); with `canceled=1` (Checkout's
    /// `cancel_url`), that the buyer left without paying. With `web.success_mode: redirect` a
    /// ready session is a 303 to `redirect_url` with `redemption_url` added, and one on an
    /// account a 303 without it.
    func successPage(_ http: HTTPRequest) -> HTTPHandling {
        guard let base = publicBase else { return .respond(Self.noPublicURL, .other(.internal)) }
        let query = Self.queryValues(http.query)
        let project = query?["project"].flatMap { try? ProjectID(validating: $0) }.flatMap { registry.project($0) }
            .flatMap { $0.published.isDeleted ? nil : $0 }
        // Checkout's `cancel_url` when the project has no App Store URL: nothing was bought.
        if query?["canceled"] == "1", let settings = project?.publishedWeb.settings {
            return .respond(Self.page(200, SuccessPage.render(Self.face(settings), state: .canceled)), .other(nil))
        }
        guard let project, let settings = project.publishedWeb.settings, let sessionID = query?["session_id"],
            Self.isSessionID(sessionID)
        else {
            let face = project?.publishedWeb.settings.map(Self.face) ?? neutralFace(base)
            return .respond(Self.page(404, SuccessPage.render(face, state: .unknown)), .other(.notFound))
        }
        return .work {
            let standing = await project.sessionStanding(sessionID)
            let settings = project.publishedWeb.settings ?? settings
            let response = Self.successResponse(standing.value, of: project, settings, base: base)
            return HTTPWorkAnswer(response: response, tally: .other(response.status == 404 ? .notFound : nil), durableAt: standing.lsn)
        }
    }

    /// The success page's answer for a session's standing, in the project's `success_mode`.
    private static func successResponse(_ standing: ProjectState.SessionStanding, of project: Project, _ settings: WebSettings,
                                         base: String) -> HTTPResponse
    {
        let face = face(settings)
        let redirect = settings.successMode == .redirect ? settings.redirectURL : nil
        switch standing {
        case .pending:
            return page(200, SuccessPage.render(face, state: .pending))
        case .link(.ready(let token)):
            let links = links(token, of: project, settings, base: base)
            if let redirect { return seeOther(adding("redemption_url", links.https, to: redirect)) }
            return page(200, SuccessPage.render(face, state: .ready(deepLink: links.deep, httpsLink: links.https)))
        case .linkedToAccount, .link(.redeemed):
            if let redirect { return seeOther(redirect) }
            return page(200, SuccessPage.render(face, state: .linkedToAccount))
        case .link(.expired(let address)):
            return page(200, RedemptionPage.render(face, state: .expired(obfuscatedEmail: address)))
        case .link(.invalid):
            return page(404, SuccessPage.render(face, state: .unknown))
        }
    }

    // MARK: Finding the project

    /// The live project that issued `token`, asked of each project's published tokens; `nil`
    /// for a token of no project, or of no token's shape (then no project is asked).
    private func issuer(of token: String) -> Project? {
        guard RedemptionToken.isWellFormed(token) else { return nil }
        let digest = RedemptionToken.Digest(token: token)
        return registry.allProjects().first { !$0.published.isDeleted && $0.publishedWeb.issued(digest) }
    }

    /// A Stripe Checkout Session id: `cs_` and at most 252 more letters, digits and `_`.
    static func isSessionID(_ text: String) -> Bool {
        guard text.hasPrefix("cs_"), text.utf8.count > 3, text.utf8.count <= 255 else { return false }
        return text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"):
                true
            default:
                false
            }
        }
    }

    // MARK: What the pages show

    /// `--public-url` without a trailing `/`, which the https links and Checkout's return start with.
    var publicBase: String? {
        configuration.publicURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
    }

    /// What a page shows of the app: the project's `web` config.
    static func face(_ settings: WebSettings) -> WebAppFace {
        WebAppFace(appName: settings.appName, supportEmail: settings.supportEmail, appStoreURL: settings.appStoreURL,
                   playStoreURL: settings.playStoreURL)
    }

    /// The face of a page no project answers (a link nobody issued, a payment of no project):
    /// the app's when every project that sells on the web is the same app (as a live and a test
    /// project are), else the public URL's host. Read from what each project published.
    private func neutralFace(_ base: String) -> WebAppFace {
        let faces = registry.allProjects().compactMap { $0.published.isDeleted ? nil : $0.publishedWeb.settings.map(Self.face) }
        if let first = faces.first, faces.allSatisfy({ $0 == first }) { return first }
        return WebAppFace(appName: URLComponents(string: base)?.host ?? base)
    }

    /// A link's two forms: the deep link in the app's scheme, and the https link.
    private static func links(_ token: String, of project: Project, _ settings: WebSettings?, base: String)
        -> (deep: String, https: String)
    {
        let scheme = WebSettings.scheme(of: settings, projectID: project.id)
        return (RedemptionToken.deepLink(token, scheme: scheme), RedemptionToken.httpsLink(token, publicURL: base))
    }

    // MARK: Answers

    /// Every page's headers: nothing loads but the page itself, nothing caches it, and a token
    /// in the address never leaves in a `Referer`.
    static let pageHeaders: [(name: String, value: String)] = [
        ("Content-Security-Policy", WebPage.contentSecurityPolicy), ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"), ("X-Frame-Options", "DENY"),
    ]

    static func page(_ status: Int, _ html: String) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/html; charset=utf-8", body: Array(html.utf8), headers: pageHeaders)
    }

    private static func seeOther(_ url: String) -> HTTPResponse {
        HTTPResponse(status: 303, contentType: "text/plain; charset=utf-8", body: Array("See \(url)\n".utf8),
                     headers: [("Location", url), ("Cache-Control", "no-store"), ("Referrer-Policy", "no-referrer")])
    }

    private static let noPublicURL = HTTPResponse(
        status: 503, contentType: "text/plain; charset=utf-8",
        body: Array("The server has no public URL (--public-url) to write the links with.\n".utf8),
        headers: [HTTPAnswers.retryAfter, ("Cache-Control", "no-store")])

    /// `url` with `name=value` added to its query (before any fragment), the value
    /// percent-encoded: everything but RFC 3986's unreserved characters is escaped.
    static func adding(_ name: String, _ value: String, to url: String) -> String {
        let fragmentStart = url.firstIndex(of: "#") ?? url.endIndex
        let head = url[..<fragmentStart]
        let separator = !head.contains("?") ? "?" : head.hasSuffix("?") || head.hasSuffix("&") ? "" : "&"
        return head + separator + name + "=" + percentEncoded(value) + url[fragmentStart...]
    }

    private static func percentEncoded(_ text: String) -> String {
        let digits = Array("0123456789ABCDEF".unicodeScalars)
        var encoded = String.UnicodeScalarView()
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.append(Unicode.Scalar(byte))
            default:
                encoded.append(contentsOf: ["%", digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
            }
        }
        return String(encoded)
    }
}
