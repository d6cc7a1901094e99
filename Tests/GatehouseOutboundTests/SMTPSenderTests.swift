import GatehouseOutbound
import GatehouseTesting
import Testing

/// Sending through libcurl to a real SMTP server (aiosmtpd), read back with Python's `email` package.
@Suite struct SMTPSenderTests {
    static let text = """
        Your Cat App purchase is ready: café, 5 €.
        .
        A line that starts with a dot, and one with spaces at the end:\u{20}\u{20}
        \(String(repeating: "long-", count: 400))end
        """
    static let html = "<p>Open <a href=\"catapp://redeem_web_purchase?redemption_token=rdrt_x\">the app</a> — ✓</p>\n"

    static func message(to: String = "buyer@example.com") throws -> MailMessage {
        try MailMessage(
            from: MailAddress("noreply@example.com"), fromName: "Кот App", to: MailAddress(to),
            replyTo: MailAddress("support@example.com"), subject: "Your Кот App purchase is ready ✓", text: text, html: html,
            messageID: "rdrt-1.7@gatehouse.example", dateMs: 1_767_225_600_000)
    }

    /// Runs `body` with a mailbox and a sender to it (insecure unless told otherwise); stops both after.
    func withMailbox<T>(
        sizeLimit: Int? = nil, insecure: Bool = true, timeouts: SMTPSender.Timeouts = .init(connect: .seconds(10), whole: .seconds(30)),
        _ body: (SMTPMailbox, SMTPSender) async throws -> T
    ) async throws -> T {
        let mailbox = try await SMTPMailbox.start(sizeLimit: sizeLimit)
        let settings = try SMTPSettings(url: mailbox.url, from: "bounces@example.com", credentialsFile: nil, insecure: insecure)
        let sender = SMTPSender(settings: settings, timeouts: timeouts)
        do {
            let result = try await body(mailbox, sender)
            await sender.close()
            await mailbox.close()
            return result
        } catch {
            await sender.close()
            await mailbox.close()
            throw error
        }
    }

    @Test func aMessageArrivesWithItsEnvelopeHeadersAndBothPartsIntact() async throws {
        try await withMailbox { mailbox, sender in
            try await sender.send(Self.message()).get()
            let messages = try await mailbox.messages()
            try #require(messages.count == 1)
            let mail = messages[0]
            #expect(mail.mailFrom == "bounces@example.com")
            #expect(mail.rcptTo == "buyer@example.com")
            #expect(mail.header("From") == "Кот App <noreply@example.com>")
            #expect(mail.header("To") == "buyer@example.com")
            #expect(mail.header("Reply-To") == "support@example.com")
            #expect(mail.header("Subject") == "Your Кот App purchase is ready ✓")
            #expect(mail.header("Date") == "Thu, 01 Jan 2026 00:00:00 +0000")
            #expect(mail.header("Message-ID") == "<rdrt-1.7@gatehouse.example>")
            #expect(mail.contentType == "multipart/alternative")
            #expect(mail.text?.content == Self.text)
            #expect(mail.html?.content == Self.html)
            #expect(mail.text?.transferEncoding == "quoted-printable")
            #expect(mail.text?.contentType?.hasPrefix("text/plain; charset=") == true)
            #expect(mail.html?.contentType?.hasPrefix("text/html; charset=") == true)
            #expect(mail.longestLineOctets <= 78)
            #expect(mail.defects == [])
        }
    }

    @Test func smtpWithoutInsecureRefusesAServerWithoutSTARTTLSAndSendsNothing() async throws {
        try await withMailbox(insecure: false) { mailbox, sender in
            let error = try #require(await sender.send(Self.message()).failure)
            #expect(error.code == .tlsRequired)
            #expect(error.retry == .afterReconfiguration)
            #expect(try await mailbox.messages().isEmpty)
        }
    }

    @Test func aStoppedServerIsARetryableFailureAndTheSameMessageArrivesOnceItIsBack() async throws {
        try await withMailbox { mailbox, sender in
            await mailbox.stop()
            let error = try #require(await sender.send(Self.message()).failure)
            #expect(error.code == .cannotConnect)
            #expect(error.retry == .later)
            try await mailbox.start()
            try await sender.send(Self.message()).get()
            let messages = try await mailbox.messages()
            #expect(messages.map { $0.header("Message-ID") } == ["<rdrt-1.7@gatehouse.example>"])
        }
    }

    @Test func aServerThatNeverAnswersTimesOutRetryably() async throws {
        try await withMailbox(timeouts: .init(connect: .seconds(10), whole: .milliseconds(500))) { mailbox, sender in
            mailbox.pause()
            let error = try #require(await sender.send(Self.message()).failure)
            mailbox.resume()
            #expect(error.code == .timedOut)
            #expect(error.retry == .later)
        }
    }

    @Test func aRecipientTheServerDefersIsRetryableAndSendsNothing() async throws {
        try await withMailbox { mailbox, sender in
            let error = try #require(await sender.send(Self.message(to: "deferred@example.com")).failure)
            #expect(error.code == .deferred)
            #expect(error.reply == 451)
            #expect(error.retry == .later)
            #expect(try await mailbox.messages().isEmpty)
        }
    }

    @Test func aRecipientTheServerRefusesIsPermanentAndSendsNothing() async throws {
        try await withMailbox { mailbox, sender in
            let error = try #require(await sender.send(Self.message(to: "refused@example.com")).failure)
            #expect(error.code == .refused)
            #expect(error.reply == 550)
            #expect(error.retry == .never)
            #expect(try await mailbox.messages().isEmpty)
        }
    }

    @Test func aMessageOverTheServersSizeLimitIsPermanent() async throws {
        try await withMailbox(sizeLimit: 1000) { mailbox, sender in
            let error = try #require(await sender.send(Self.message()).failure)
            #expect(error.code == .refused)
            #expect(error.reply == 552)
            #expect(error.retry == .never)
            #expect(try await mailbox.messages().isEmpty)
        }
    }

    @Test func oneSenderSendsMessagesOneAfterAnother() async throws {
        try await withMailbox { mailbox, sender in
            for recipient in ["a@example.com", "b@example.com", "c@example.com"] {
                try await sender.send(Self.message(to: recipient)).get()
            }
            #expect(try await mailbox.messages().compactMap(\.rcptTo).sorted() == ["a@example.com", "b@example.com", "c@example.com"])
        }
    }

    @Test func aClosedSenderSendsNothing() async throws {
        try await withMailbox { mailbox, sender in
            await sender.close()
            let error = try #require(await sender.send(Self.message()).failure)
            #expect(error.code == .closed)
            #expect(try await mailbox.messages().isEmpty)
        }
    }
}
