/// The email that carries a redemption link to the buyer (DESIGN.md, "Web purchases and
/// redemption links"): subject "Your <app name> purchase is ready", a text version and an HTML
/// version, each with both forms of the link. The https link comes first, as the button: it
/// opens on any device, and its page opens the app; the deep link opens the app at once where
/// it is installed (and a mail program lets it through).
///
/// As on the pages, every value in the HTML is escaped, and a link that fails ``WebLink``'s
/// checks is left out of it; the text version shows the links as they are.
public struct RedemptionEmail: Sendable, Equatable {
    public let subject: String
    public let text: String
    public let html: String

    /// The email of a link to `face`'s app, valid for `linkHours` from now. `face.supportEmail`
    /// is where the message's `Reply-To` goes, so the email says a reply reaches support.
    public static func render(_ face: WebAppFace, deepLink: String, httpsLink: String, linkHours: Int64) -> RedemptionEmail {
        let subject = "Your \(face.appName) purchase is ready"
        return RedemptionEmail(
            subject: subject, text: text(face, subject: subject, deepLink: deepLink, httpsLink: httpsLink, linkHours: linkHours),
            html: html(face, subject: subject, deepLink: deepLink, httpsLink: httpsLink, linkHours: linkHours))
    }

    private static func validity(_ face: WebAppFace, linkHours: Int64) -> String {
        let hours = linkHours == 1 ? "1 hour" : "\(linkHours) hours"
        let reply = face.supportEmail.map { _ in " Questions? Reply to this email." } ?? ""
        return "The link works for \(hours). If it has expired, opening it in \(face.appName) sends you a new one.\(reply)"
    }

    private static func text(_ face: WebAppFace, subject: String, deepLink: String, httpsLink: String, linkHours: Int64) -> String {
        let app = face.appName
        return """
            \(subject)

            Thank you for buying \(app). To unlock your purchase, open this link on the phone where you use \(app):

            \(httpsLink)

            \(app) already on this phone? This link opens it directly:

            \(deepLink)

            \(validity(face, linkHours: linkHours))

            """
    }

    private static func html(_ face: WebAppFace, subject: String, deepLink: String, httpsLink: String, linkHours: Int64) -> String {
        let app = face.appName
        var links: [HTML] = []
        if let https = WebLink.web(httpsLink) {
            links.append("""
                <p style="margin:24px 0;"><a id="unlock" href="\(https)" style="\(buttonStyle)">Unlock in \(app)</a></p>
                <p style="font-size:14px;">Or open this link on the phone where you use \(app):<br>\
                <a id="https-link" href="\(https)" style="word-break:break-all;">\(https.url)</a></p>
                """)
        }
        if let open = WebLink.deepLink(deepLink) {
            links.append("""
                <p style="font-size:14px;">\(app) already on this phone? \
                <a id="open-app" href="\(open)" style="word-break:break-all;">\(open.url)</a> opens it directly.</p>
                """)
        }
        let document: HTML = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="color-scheme" content="light dark">
            <title>\(subject)</title>
            </head>
            <body style="margin:0;padding:24px 16px;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;line-height:1.5;">
            <div style="max-width:480px;margin:0 auto;">
            <h1 style="font-size:22px;line-height:1.3;margin:0 0 16px;">\(subject)</h1>
            <p>Thank you for buying \(app). Open your purchase on the phone where you use \(app) to unlock it.</p>
            \(HTML(joining: links))
            <p style="font-size:13px;color:#6b6b6b;">\(validity(face, linkHours: linkHours))</p>
            </div>
            </body>
            </html>

            """
        return document.markup
    }

    private static let buttonStyle =
        "display:inline-block;padding:12px 22px;border-radius:10px;background:#1a5fd0;color:#ffffff;font-weight:600;text-decoration:none;"
}
