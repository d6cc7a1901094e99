import CCurl
import GatehouseBase

/// One message handed to an SMTP server on a libcurl easy handle: the envelope, the rendered
/// bytes read out by libcurl's read callback, and the answer. Confined to the sender's curl thread.
final class SMTPTransfer: CurlThreadTransfer {
    typealias Completion = CheckedContinuation<Result<Void, MailError>, Never>

    let easy: UnsafeMutableRawPointer
    private let completion: Completion
    private let message: [UInt8]
    private var sent = 0
    private var recipients: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer = CurlErrorBuffer()
    private var isFinished = false

    /// A transfer set up to send `message`; `nil` when it cannot be, after answering why.
    static func make(
        _ message: MailMessage, settings: SMTPSettings, timeouts: SMTPSender.Timeouts, completion: Completion
    ) -> SMTPTransfer? {
        guard let easy = curl_easy_init() else {
            completion.resume(returning: .failure(MailError(code: .transport, message: "curl_easy_init failed")))
            return nil
        }
        let transfer = SMTPTransfer(easy: easy, message: message.rendered(), completion: completion)
        if let failure = transfer.configure(message, settings: settings, timeouts: timeouts) {
            transfer.stop(CurlStop(reason: .failed, message: failure))
            return nil
        }
        return transfer
    }

    private init(easy: UnsafeMutableRawPointer, message: [UInt8], completion: Completion) {
        self.easy = easy
        self.message = message
        self.completion = completion
    }

    deinit {
        precondition(isFinished, "a transfer was dropped without an answer")
        curl_easy_cleanup(easy)
        curl_slist_free_all(recipients)
    }

    /// Sets every option; the first libcurl refuses is the failure.
    private func configure(_ mail: MailMessage, settings: SMTPSettings, timeouts: SMTPSender.Timeouts) -> String? {
        var options = CurlOptions(easy)
        func check(_ code: CURLcode, _ what: String) { options.check(code, what) }
        options.setBasics(
            errorBuffer: errorBuffer, url: settings.url, schemes: settings.isImplicitTLS ? "smtps" : "smtp",
            connectTimeout: timeouts.connect, timeout: timeouts.whole)
        // The mail server is reached directly: a proxy from the environment is for HTTP.
        check(ccurl_easy_setopt_string(easy, CURLOPT_PROXY, ""), "no proxy")
        // CURLUSESSL_ALL fails the transfer when the server offers no STARTTLS, instead of going on in plain text.
        let tls = settings.requireTLS ? CURLUSESSL_ALL : CURLUSESSL_NONE
        check(ccurl_easy_setopt_long(easy, CURLOPT_USE_SSL, Int(tls.rawValue)), "use ssl")
        if let username = settings.username, let password = settings.password {
            check(ccurl_easy_setopt_string(easy, CURLOPT_USERNAME, username), "user name")
            check(ccurl_easy_setopt_string(easy, CURLOPT_PASSWORD, password), "password")
        }
        check(ccurl_easy_setopt_string(easy, CURLOPT_MAIL_FROM, "<\(settings.from.value)>"), "mail from")
        check(setRecipient(mail.to), "mail rcpt")
        check(ccurl_easy_setopt_long(easy, CURLOPT_UPLOAD, 1), "upload")
        check(ccurl_easy_setopt_off(easy, CURLOPT_INFILESIZE_LARGE, curl_off_t(message.count)), "message size")
        check(ccurl_easy_setopt_callback(easy, CURLOPT_READFUNCTION, smtpTransferRead), "read function")
        check(ccurl_easy_setopt_pointer(easy, CURLOPT_READDATA, Unmanaged.passUnretained(self).toOpaque()), "read data")
        return options.failure
    }

    private func setRecipient(_ address: MailAddress) -> CURLcode {
        guard let list = curl_slist_append(nil, "<\(address.value)>") else { return CURLE_OUT_OF_MEMORY }
        recipients = list
        return ccurl_easy_setopt_pointer(easy, CURLOPT_MAIL_RCPT, list)
    }

    /// Copies the next bytes of the message into libcurl's buffer; 0 once all are sent.
    fileprivate func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(buffer.count, message.count - sent)
        message.withUnsafeBytes { bytes in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[sent..<sent + count]))
        }
        sent += count
        return count
    }

    // MARK: Finishing

    func finish(_ code: CURLcode) {
        guard code != CURLE_OK else { return answer(.success(())) }
        var reply = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &reply)
        answer(.failure(Self.error(for: code, reply: reply, detail: errorBuffer.detail(for: code))))
    }

    func stop(_ stop: CurlStop) {
        answer(.failure(stop.mailError))
    }

    private func answer(_ result: Result<Void, MailError>) {
        guard !isFinished else { return }
        isFinished = true
        completion.resume(returning: result)
    }

    /// How a failed transfer is told to the caller. A reply the server gave decides first
    /// (4xx: not now; 5xx: never), whatever libcurl calls the failure it led to.
    static func error(for code: CURLcode, reply: Int, detail: String) -> MailError {
        // Whatever the server answered STARTTLS or AUTH with, these two are the settings' business.
        if code == CURLE_USE_SSL_FAILED { return MailError(code: .tlsRequired, message: detail, reply: reply) }
        if code == CURLE_LOGIN_DENIED { return MailError(code: .authentication, message: detail, reply: reply) }
        if (400...499).contains(reply) { return MailError(code: .deferred, message: detail, reply: reply) }
        if (500...599).contains(reply) { return MailError(code: .refused, message: detail, reply: reply) }
        let kind: MailError.Code =
            switch code {
            case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT: .cannotConnect
            case CURLE_OPERATION_TIMEDOUT: .timedOut
            case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_WEIRD_SERVER_REPLY: .connectionLost
            case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
                CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR:
                .tls
            default: .transport
            }
        return MailError(code: kind, message: detail, reply: reply)
    }
}

extension CurlStop {
    var mailError: MailError {
        let code: MailError.Code =
            switch reason {
            case .closed: .closed
            case .cancelled: .cancelled
            case .failed: .transport
            }
        return MailError(code: code, message: message)
    }
}

/// libcurl's read callback: `context` is the transfer, which the curl thread keeps alive for as
/// long as libcurl may call it.
private func smtpTransferRead(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let context, let data else { return 0 }
    let transfer = Unmanaged<SMTPTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.read(into: UnsafeMutableRawBufferPointer(start: data, count: size * count))
}
