import GatehouseBase
import GatehouseCore
import GatehouseOutbound
import GatehouseRuntime
import GatehouseWire

/// What an email attempt came to.
struct MailReport: Sendable {
    var answer: MailAnswer
    /// Why it failed, for the log and the link's `lastError`: an error code and the server's
    /// reply code, never an address or the server's text (which may quote the address).
    var error: String?
    var latencyMs: Int64
}

/// An email attempt for real (DESIGN.md, "Web purchases and redemption links"): the message
/// rendered from the due email (``RedemptionEmail``), from the `--smtp-from` address in the
/// app's name, to the buyer, replies to the project's support address, handed to the SMTP server
/// on the sender's own thread. The message id is the link generation's, so every attempt at one
/// email is the same message to a receiver, and a newer link's email is another.
struct RedemptionMailTransport: Sendable {
    let sender: SMTPSender
    /// The server's `--public-url`, the base of each email's https link.
    let publicURL: String

    func attempt(_ mail: DueMail, projectID: ProjectID, dateMs: Int64) async -> MailReport {
        guard let address = mail.to else {
            return MailReport(answer: .failure(permanent: true), error: "no_address", latencyMs: 0)
        }
        let message: MailMessage
        do throws(MailFormatError) {
            message = try self.message(mail, to: address, projectID: projectID, dateMs: dateMs)
        } catch {
            // The address, the app's name: nothing another attempt would change.
            return MailReport(answer: .failure(permanent: true), error: "message_\(error.code.rawValue)", latencyMs: 0)
        }
        let started = ContinuousClock.now
        let result = await sender.send(message)
        let latencyMs = Int64(started.duration(to: .now).wholeMilliseconds)
        switch result {
        case .success:
            return MailReport(answer: .sent, error: nil, latencyMs: latencyMs)
        case .failure(let error):
            // A failure the operator must fix (TLS, the login) is retried on the schedule like
            // one that passes by itself: the fix needs no restart when it is the mail server's.
            let reply = error.reply > 0 ? " (\(error.reply))" : ""
            return MailReport(answer: .failure(permanent: error.retry == .never), error: error.code.rawValue + reply,
                              latencyMs: latencyMs)
        }
    }

    private func message(_ mail: DueMail, to address: String, projectID: ProjectID, dateMs: Int64) throws(MailFormatError)
        -> MailMessage
    {
        let to = try MailAddress(address)
        // The config checked the support address; one the mail code still refuses is left out.
        let replyTo = mail.supportEmail.flatMap { try? MailAddress($0) }
        let face = WebAppFace(appName: mail.appName, supportEmail: replyTo?.value)
        let email = RedemptionEmail.render(face, deepLink: mail.deepLink, httpsLink: mail.httpsLink, linkHours: mail.linkHours)
        return try MailMessage(
            from: sender.settings.from, fromName: mail.appName, to: to, replyTo: replyTo, subject: email.subject, text: email.text,
            html: email.html, messageID: Self.messageID(mail, projectID: projectID, from: sender.settings.from), dateMs: dateMs)
    }

    /// `redeem.<32 hex digits of the project and purchase>.<generation>@<the sender's domain>`.
    static func messageID(_ mail: DueMail, projectID: ProjectID, from: MailAddress) -> String {
        let purchase = SHA256.hex("\(projectID)\u{0}\(mail.purchase.store)\u{0}\(mail.purchase.id)").prefix(32)
        let domain = from.value.split(separator: "@").last.map(String.init) ?? "gatehouse.invalid"
        return "redeem.\(purchase).\(mail.generation)@\(domain)"
    }
}
