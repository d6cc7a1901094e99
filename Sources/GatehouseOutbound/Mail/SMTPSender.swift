import GatehouseBase

/// Hands email to the SMTP server the settings name, through libcurl.
///
/// Like ``OutboundHTTPClient``, a sender is a thread of its own (`outbound-smtp`) running a
/// libcurl multi handle: ``send(_:)`` hands the message over and waits on a continuation, so no
/// thread of the concurrency pool ever waits on the mail server. The thread runs from `init` to
/// ``close()`` (a sender is made only when the server is configured to send email). Each
/// ``send(_:)`` is one attempt; the answer's ``MailError/retry`` says whether another makes sense.
public final class SMTPSender: Sendable {
    /// How long an attempt may take.
    public struct Timeouts: Sendable {
        /// To connect, the TLS handshake included.
        public var connect: Duration
        /// For the whole session: connecting, the greeting, the envelope and the message.
        public var whole: Duration

        public init(connect: Duration = .seconds(15), whole: Duration = .seconds(60)) {
            self.connect = connect
            self.whole = whole
        }
    }

    public let settings: SMTPSettings
    public let timeouts: Timeouts
    private let thread: CurlMultiThread

    public init(settings: SMTPSettings, timeouts: Timeouts = Timeouts()) {
        self.settings = settings
        self.timeouts = timeouts
        // Connections kept open between messages, where the server allows it.
        self.thread = CurlMultiThread(connectionCacheSize: 2, threadName: "outbound-smtp")
    }

    deinit {
        thread.requestClose()
    }

    /// Sends `message` from ``SMTPSettings/from`` to its `to` address, and answers once the
    /// server took it (its reply to the end of the data) or why it did not. A cancelled task
    /// stops the transfer and gets ``MailError/Code/cancelled``.
    public func send(_ message: MailMessage) async -> Result<Void, MailError> {
        let settings = settings
        let timeouts = timeouts
        return await thread.perform(stopped: { $0.mailError }) { completion in
            SMTPTransfer.make(message, settings: settings, timeouts: timeouts, completion: completion)
        }
    }

    /// Fails what is under way with ``MailError/Code/closed`` (and every later message), and
    /// returns once the connections and handles are released.
    public func close() async {
        await thread.close()
    }
}
