/// Why a message was not handed to the mail server: a stable code, whether trying again makes
/// sense, and a message for logs.
public struct MailError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The server's name did not resolve, or nothing accepted the connection (a server down).
        case cannotConnect = "cannot_connect"
        /// The connection or the whole exchange took longer than the sender allows.
        case timedOut = "timed_out"
        /// The connection broke before the server had taken the message.
        case connectionLost = "connection_lost"
        /// The server answered with a 4xx reply: it cannot take the message now (greylisting, a full queue).
        case deferred
        /// The server answered with a 5xx reply: it will not take this message (a refused
        /// recipient, a message too large).
        case refused
        /// TLS is required (`smtp://` without `--smtp-insecure`) and the server offered no STARTTLS.
        case tlsRequired = "tls_required"
        /// The TLS handshake failed or the server's certificate was refused.
        case tls
        /// The server refused the user name and password.
        case authentication
        /// The sender was closed before the message was sent.
        case closed
        /// The task that waited was cancelled.
        case cancelled
        /// Any other failure of the transfer.
        case transport
    }

    /// What another attempt can be expected to do.
    public enum Retry: Sendable, Hashable {
        /// It may succeed later with nothing changed: the server was down or slow, or said "not now".
        case later
        /// It fails the same way until the operator changes the SMTP settings or the server.
        case afterReconfiguration
        /// This message will never be taken; sending it again is pointless.
        case never
    }

    public var code: Code
    /// What happened, for logs; never parse it.
    public var message: String
    /// The server's last reply code, when one came (`0` when none did).
    public var reply: Int

    public init(code: Code, message: String, reply: Int = 0) {
        self.code = code
        self.message = message
        self.reply = reply
    }

    public var retry: Retry {
        switch code {
        // A message the sender dropped on closing is as good as new for the next attempt.
        case .cannotConnect, .timedOut, .connectionLost, .deferred, .transport, .closed, .cancelled: .later
        case .tlsRequired, .tls, .authentication: .afterReconfiguration
        case .refused: .never
        }
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
