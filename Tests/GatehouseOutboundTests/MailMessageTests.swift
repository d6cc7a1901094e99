import GatehouseBase
import GatehouseOutbound
import Testing

/// How a message is written for SMTP: its headers, its two parts, and what it refuses.
@Suite struct MailMessageTests {
    /// 2026-01-01T00:00:00Z, a Thursday.
    static let dateMs: Int64 = 1_767_225_600_000

    static func message(
        fromName: String? = "Cat App", subject: String = "Your Cat App purchase is ready", text: String = "Open the app.\n",
        html: String = "<p>Open the app.</p>\n", messageID: String = "rdrt-1.7@gatehouse.example"
    ) throws -> MailMessage {
        try MailMessage(
            from: MailAddress("noreply@example.com"), fromName: fromName, to: MailAddress("buyer@example.com"),
            replyTo: MailAddress("support@example.com"), subject: subject, text: text, html: html, messageID: messageID,
            dateMs: dateMs)
    }

    /// The rendered message as text, its header lines (unfolded) and its body.
    static func split(_ message: MailMessage) -> (text: String, headers: [String], body: String) {
        let text = String(decoding: message.rendered(), as: UTF8.self)
        let end = text.firstRange(of: "\r\n\r\n")!
        let headers = text[..<end.lowerBound].split(separator: "\r\n").reduce(into: [String]()) { lines, line in
            // Unfolding takes out the line break only, as RFC 5322 §2.2.3 says.
            if line.first == " " { lines[lines.count - 1] += line } else { lines.append(String(line)) }
        }
        return (text, headers, String(text[end.upperBound...]))
    }

    static func header(_ name: String, in headers: [String]) -> String? {
        headers.first { $0.hasPrefix(name + ": ") }.map { String($0.dropFirst(name.count + 2)) }
    }

    static func boundary(in headers: [String]) -> String {
        let contentType = header("Content-Type", in: headers)!
        return String(contentType.split(separator: "boundary=\"")[1].dropLast())
    }

    /// The text of `=?utf-8?B?…?=` words separated by folding whitespace.
    static func decodeEncodedWords(_ value: String) -> String {
        let bytes = value.split(separator: " ").flatMap { word -> [UInt8] in
            #expect(word.hasPrefix("=?utf-8?B?") && word.hasSuffix("?="))
            return Base64.decode(String(word.dropFirst(10).dropLast(2)), alphabet: .standard) ?? []
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func headersAreWrittenWithCRLFAndTheDateInUTC() throws {
        let (text, headers, _) = Self.split(try Self.message())
        #expect(!text.utf8.indices.contains { text.utf8[$0] == 0x0A && (text.utf8[text.utf8.index(before: $0)] != 0x0D) })
        #expect(text.hasSuffix("\r\n"))
        #expect(headers.map { String($0.prefix { $0 != ":" }) } == [
            "Date", "From", "To", "Reply-To", "Subject", "Message-ID", "MIME-Version", "Content-Type",
        ])
        #expect(Self.header("Date", in: headers) == "Thu, 01 Jan 2026 00:00:00 +0000")
        #expect(Self.header("From", in: headers) == "\"Cat App\" <noreply@example.com>")
        #expect(Self.header("To", in: headers) == "<buyer@example.com>")
        #expect(Self.header("Reply-To", in: headers) == "<support@example.com>")
        #expect(Self.header("Subject", in: headers) == "Your Cat App purchase is ready")
        #expect(Self.header("Message-ID", in: headers) == "<rdrt-1.7@gatehouse.example>")
        #expect(Self.header("MIME-Version", in: headers) == "1.0")
        #expect(Self.header("Content-Type", in: headers)?.hasPrefix("multipart/alternative; boundary=\"") == true)
    }

    @Test func aMessageWithoutDisplayNameOrReplyToHasTheAddressAlone() throws {
        let message = try MailMessage(
            from: MailAddress("noreply@example.com"), to: MailAddress("buyer@example.com"), subject: "s", text: "t", html: "h",
            messageID: "a@b", dateMs: Self.dateMs)
        let (_, headers, _) = Self.split(message)
        #expect(Self.header("From", in: headers) == "<noreply@example.com>")
        #expect(Self.header("Reply-To", in: headers) == nil)
    }

    @Test func theTextPartComesBeforeTheHTMLPartEachQuotedPrintableUTF8() throws {
        let (_, headers, body) = Self.split(try Self.message())
        let boundary = Self.boundary(in: headers)
        #expect(
            body == """
                --\(boundary)\r
                Content-Type: text/plain; charset=utf-8\r
                Content-Transfer-Encoding: quoted-printable\r
                \r
                Open the app.\r
                \r
                --\(boundary)\r
                Content-Type: text/html; charset=utf-8\r
                Content-Transfer-Encoding: quoted-printable\r
                \r
                <p>Open the app.</p>\r
                \r
                --\(boundary)--\r

                """)
    }

    @Test func nonASCIITextIsQuotedPrintableOfItsUTF8AndTheMessageIsASCII() throws {
        let message = try Self.message(text: "Café = 5 €", html: "<p>naïve</p>")
        let (text, _, body) = Self.split(message)
        #expect(body.contains("\r\nCaf=C3=A9 =3D 5 =E2=82=AC\r\n"))
        #expect(body.contains("\r\n<p>na=C3=AFve</p>\r\n"))
        #expect(text.utf8.allSatisfy { $0 < 0x80 })
    }

    @Test func spacesAtALineEndAndALoneCarriageReturnAreEncoded() throws {
        let (_, _, body) = Self.split(try Self.message(text: "end  \nnext\tline\t\r\nbare\rcr"))
        #expect(body.contains("\r\nend =20\r\nnext\tline=09\r\nbare=0Dcr\r\n"))
    }

    @Test func longLinesAreCutWithSoftBreaksUnder77Octets() throws {
        let long = String(repeating: "0123456789", count: 500) + " é"
        let message = try Self.message(text: long, html: long)
        let (_, _, body) = Self.split(message)
        #expect(body.split(separator: "\r\n").allSatisfy { $0.utf8.count <= 76 })
        let parts = body.split(separator: "\r\n\r\n")
        let textPart = parts[1].split(separator: "\r\n--")[0]
        #expect(textPart.split(separator: "=\r\n").joined() == String(repeating: "0123456789", count: 500) + " =C3=A9")
    }

    @Test func aNonASCIISubjectAndDisplayNameAreEncodedWords() throws {
        let subject = "Ваша покупка в «Кот» готова ✓"
        let (text, headers, _) = Self.split(try Self.message(fromName: "Кот 🐈", subject: subject))
        #expect(Self.decodeEncodedWords(Self.header("Subject", in: headers)!) == subject)
        let from = Self.header("From", in: headers)!
        #expect(from.hasSuffix(" <noreply@example.com>"))
        #expect(Self.decodeEncodedWords(String(from.dropLast(" <noreply@example.com>".count))) == "Кот 🐈")
        #expect(text.split(separator: "\r\n").allSatisfy { $0.utf8.count <= 78 })
    }

    @Test func aLongSubjectIsFoldedIntoLinesUnder79Octets() throws {
        let subject = String(repeating: "Your purchase is ready. ", count: 20)
        let (text, headers, _) = Self.split(try Self.message(subject: subject))
        #expect(Self.decodeEncodedWords(Self.header("Subject", in: headers)!) == subject)
        #expect(text.split(separator: "\r\n").allSatisfy { $0.utf8.count <= 78 })
    }

    @Test func aSubjectThatLooksLikeAnEncodedWordIsEncoded() throws {
        let subject = "=?utf-8?B?SGk=?="
        let (_, headers, _) = Self.split(try Self.message(subject: subject))
        #expect(Self.header("Subject", in: headers) != subject)
        #expect(Self.decodeEncodedWords(Self.header("Subject", in: headers)!) == subject)
    }

    @Test func aDisplayNameWithQuotesIsEscaped() throws {
        let (_, headers, _) = Self.split(try Self.message(fromName: #"Cat "Pro" \ App"#))
        #expect(Self.header("From", in: headers) == #""Cat \"Pro\" \\ App" <noreply@example.com>"#)
    }

    @Test func theBoundaryComesFromTheMessageIDAndOccursOnlyAsDelimiters() throws {
        let first = try Self.message()
        let (_, headers, _) = Self.split(first)
        let boundary = Self.boundary(in: headers)
        // A part that quotes the delimiter itself still cannot hold it once encoded.
        let quoting = try Self.message(text: "--\(boundary)\n--\(boundary)--\n", html: "--\(boundary)")
        let (text, quotingHeaders, _) = Self.split(quoting)
        #expect(Self.boundary(in: quotingHeaders) == boundary)
        #expect(text.split(separator: "\r\n").filter { $0.hasPrefix("--" + boundary) }.count == 3)
        #expect(first.rendered() == (try Self.message()).rendered())
        let other = try Self.message(messageID: "rdrt-1.8@gatehouse.example")
        #expect(Self.boundary(in: Self.split(other).headers) != boundary)
    }

    @Test(arguments: [
        "Ready\r\nBcc: victim@example.com", "Ready\nBcc: victim@example.com", "Ready\rX", "Ready\u{0}", "Ready\u{85}", "Ready\u{2028}",
    ])
    func aSubjectWithALineBreakOrControlIsRefused(subject: String) throws {
        let error = #expect(throws: MailFormatError.self) { try Self.message(subject: subject) }
        #expect(error?.code == .headerText)
        #expect(error?.message == "the subject has a line break or a control character")
    }

    @Test func aDisplayNameWithALineBreakIsRefused() throws {
        let error = #expect(throws: MailFormatError.self) { try Self.message(fromName: "Cat\r\nBcc: victim@example.com") }
        #expect(error?.code == .headerText)
    }

    @Test(arguments: [
        "", "buyer.example.com", "a@b@example.com", "buyer@example.com\r\nRCPT TO:<victim@example.com>", "buyer@exa\nmple.com",
        "bu yer@example.com", "<buyer@example.com>", "buyer@example.com,victim@example.com", "@example.com", "buyer@",
        "buyer@.example.com", "buyer@example..com", "bü@example.com", String(repeating: "a", count: 250) + "@b.cd",
    ])
    func anAddressThatIsNotOneAddressIsRefused(address: String) throws {
        let error = #expect(throws: MailFormatError.self) { try MailAddress(address) }
        #expect(error?.code == .address)
        #expect(error.map { !$0.message.contains("\r") && !$0.message.contains("\n") } == true)
    }

    @Test(arguments: ["no-at-sign", "a@b\r\nBcc: c@d", "<a@b>"])
    func aMessageIDThatIsNotLeftAtRightIsRefused(messageID: String) throws {
        let error = #expect(throws: MailFormatError.self) { try Self.message(messageID: messageID) }
        #expect(error?.code == .messageID)
    }
}
