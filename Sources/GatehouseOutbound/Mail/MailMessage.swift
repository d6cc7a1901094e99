import GatehouseBase
import GatehouseHTTP

/// One email with a text and an HTML version of the same content, as the server sends it.
///
/// Everything that goes into a header is checked when the message is made, so a value from
/// outside (a buyer's address, an app's name) cannot add a header or a recipient: addresses are
/// ``MailAddress``es, and the subject and the display name may not hold a line break or another
/// control character. ``rendered()`` is deterministic: the same message, the same bytes.
public struct MailMessage: Sendable {
    public let from: MailAddress
    /// The sender's name as mail programs show it (the app's name), or `nil` for the address alone.
    public let fromName: String?
    public let to: MailAddress
    public let replyTo: MailAddress?
    public let subject: String
    public let text: String
    public let html: String
    /// `left@right`, unique per message (written in angle brackets as `Message-ID`); a receiver
    /// that sees the same id twice may take it for the same message, so a retry keeps it.
    public let messageID: String
    /// When the message was made, in milliseconds since 1970 (UTC): its `Date`.
    public let dateMs: Int64

    public init(
        from: MailAddress, fromName: String? = nil, to: MailAddress, replyTo: MailAddress? = nil, subject: String,
        text: String, html: String, messageID: String, dateMs: Int64
    ) throws(MailFormatError) {
        for (what, value) in [("subject", subject), ("display name", fromName ?? "")] where !MailEncoding.isHeaderSafe(value) {
            throw MailFormatError(code: .headerText, message: "the \(what) has a line break or a control character")
        }
        if let problem = MailAddress.problem(messageID) {
            throw MailFormatError(code: .messageID, message: "message id \(MailAddress.shown(messageID)): \(problem)")
        }
        self.from = from
        self.fromName = fromName.flatMap { $0.isEmpty ? nil : $0 }
        self.to = to
        self.replyTo = replyTo
        self.subject = subject
        self.text = text
        self.html = html
        self.messageID = messageID
        self.dateMs = dateMs
    }

    /// The message as RFC 5322 text with CRLF line ends, ready for SMTP's DATA: a
    /// `multipart/alternative` of the text part, then the HTML part (the one mail programs
    /// prefer when they can show it), each quoted-printable UTF-8.
    public func rendered() -> [UInt8] {
        let textPart = MailEncoding.quotedPrintable(text)
        let htmlPart = MailEncoding.quotedPrintable(html)
        let boundary = self.boundary
        // Quoted-printable writes "=" only before two hex digits or a line end, so "=_" starts no
        // line of either part and the delimiter cannot occur in them.
        precondition(!textPart.contains("--" + boundary) && !htmlPart.contains("--" + boundary), "boundary inside a part")
        var lines = headerLines(boundary: boundary)
        lines.append("")
        for part in [("plain", textPart), ("html", htmlPart)] {
            lines.append("--" + boundary)
            lines.append("Content-Type: text/\(part.0); charset=utf-8")
            lines.append("Content-Transfer-Encoding: quoted-printable")
            lines.append("")
            lines.append(part.1)
        }
        lines.append("--" + boundary + "--")
        return Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
    }

    private func headerLines(boundary: String) -> [String] {
        var lines = [
            "Date: " + Self.date(ms: dateMs),
            "From: " + mailbox(from, name: fromName),
            "To: " + mailbox(to, name: nil),
        ]
        if let replyTo { lines.append("Reply-To: " + mailbox(replyTo, name: nil)) }
        lines += [
            "Subject: " + (MailEncoding.isPlainHeaderText(subject, nameLength: 7) ? subject : MailEncoding.encodedWords(subject)),
            "Message-ID: <\(messageID)>",
            "MIME-Version: 1.0",
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
        ]
        return lines
    }

    /// `"Name" <address>`, with the name quoted when it is plain ASCII and as encoded words otherwise.
    private func mailbox(_ address: MailAddress, name: String?) -> String {
        guard let name else { return "<\(address.value)>" }
        let quoted = "\"" + name.map { $0 == "\"" || $0 == "\\" ? "\\\($0)" : "\($0)" }.joined() + "\""
        let shown = MailEncoding.isPlainHeaderText(quoted, nameLength: 4) ? quoted : MailEncoding.encodedWords(name)
        return shown + " <\(address.value)>"
    }

    /// The parts' delimiter, from the message id: the same message always renders the same.
    /// Short enough for its header to stay on one line of 78 characters.
    var boundary: String {
        "=_gh_" + SHA256.hex(messageID).prefix(24)
    }

    /// RFC 5322 §3.3's date-time in UTC: `Wed, 02 Dec 2026 13:00:29 +0000`.
    static func date(ms: Int64) -> String {
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        // HTTP's IMF-fixdate is the same form but for its zone: "GMT" is obsolete in mail.
        return String(HTTPDate.format(unixSeconds: seconds).dropLast(3)) + "+0000"
    }
}
