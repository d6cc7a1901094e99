import Foundation
import GatehousePosix
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A real SMTP server for the mail tests: aiosmtpd (Debian's python3-aiosmtpd, or PyPI's), run
/// by Tests/Support/smtp_mailbox.py as its command line runs it, storing every message it takes
/// in a Maildir in a temporary directory. It offers no STARTTLS and no AUTH. It can be stopped
/// and started again on the same port (a mail server that is down for a while), and
/// ``messages()`` reads what arrived with Python's `email` package, the real counterpart of our
/// rendering. Every wait for the process runs off the concurrency pool.
public final class SMTPMailbox: Sendable {
    /// A message as it lies in the Maildir, parsed.
    public struct ReceivedMail: Sendable {
        /// Every header in order, encoded words decoded; aiosmtpd adds `X-MailFrom` and `X-RcptTo`.
        public let headers: [(name: String, value: String)]
        /// The message's own content type (`multipart/alternative`).
        public let contentType: String
        public let text: Part?
        public let html: Part?
        /// The longest line of the stored message, in octets, its line end not counted.
        public let longestLineOctets: Int
        /// The names of the defects Python's parser found in the message or its parts.
        public let defects: [String]

        /// The first header named `name` (in any case).
        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// The envelope sender the server was given (`MAIL FROM`).
        public var mailFrom: String? { header("X-MailFrom") }
        /// The envelope recipients the server was given (`RCPT TO`), comma separated.
        public var rcptTo: String? { header("X-RcptTo") }
    }

    /// One text part of a message: its decoded content and the headers that said how.
    public struct Part: Sendable, Decodable {
        public let content: String
        public let contentType: String?
        public let transferEncoding: String?

        enum CodingKeys: String, CodingKey {
            case content
            case contentType = "content_type"
            case transferEncoding = "transfer_encoding"
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let port: UInt16
    /// The temporary directory holding the Maildir and the server's logs.
    private let directory: String
    private let sizeLimit: Int?
    private let process = Mutex<ChildProcess?>(nil)

    /// `smtp://127.0.0.1:<port>`: to be used with `insecure`, since the server offers no STARTTLS.
    public var url: String { "smtp://127.0.0.1:\(port)" }
    private var maildir: String { directory + "/Maildir" }

    private init(port: UInt16, directory: String, sizeLimit: Int?) {
        self.port = port
        self.directory = directory
        self.sizeLimit = sizeLimit
    }

    /// Starts a server on a free loopback port. With `sizeLimit` it refuses (552) a message of
    /// more bytes; it answers 451 to a recipient whose name starts with `deferred` and 550 to
    /// one whose name starts with `refused`.
    public static func start(sizeLimit: Int? = nil) async throws -> SMTPMailbox {
        let directory = try PythonProcess.temporaryDirectory()
        var lastFailure: (any Error)?
        // A free port found here may be taken before the server binds it: then another.
        for _ in 0..<3 {
            let mailbox = SMTPMailbox(port: try await offThePool { try freePort() }, directory: directory, sizeLimit: sizeLimit)
            do {
                try await mailbox.start()
                return mailbox
            } catch {
                lastFailure = error
            }
        }
        try? FileManager.default.removeItem(atPath: directory)
        throw lastFailure ?? Failure(description: "no free port")
    }

    /// Starts the server again, on the same port and Maildir, after ``stop()``.
    public func start() async throws {
        precondition(process.withLock { $0 == nil }, "the mailbox's server is already running")
        let logs = directory + "/server"
        var command = ["python3", Self.scriptPath, "serve", "-n", "-d", "-l", "127.0.0.1:\(port)"]
        if let sizeLimit { command += ["-s", String(sizeLimit)] }
        command += ["-c", "__main__.ScriptedMailbox", maildir]
        let started = try await ChildProcess.start(command, logs: logs)
        guard await offThePool({ Self.waitUntilListening(logs + ".err", while: started) }) else {
            started.signal(SIGKILL)
            let (status, _, errors) = await started.finish()
            // A ModuleNotFoundError here means scripts/install-packages.sh has not been run.
            throw Failure(description: "aiosmtpd exited with status \(status) before listening on \(port): \(errors)")
        }
        process.withLock { $0 = started }
    }

    /// Stops the server (its pid, SIGTERM) and waits for it to exit; what it stored stays.
    public func stop() async {
        guard let running = process.withLock({ process in
            defer { process = nil }
            return process
        }) else { return }
        // A paused server would keep SIGTERM pending until continued.
        running.signal(SIGCONT)
        running.signal(SIGTERM)
        _ = await running.finish()
    }

    /// Freezes the server (SIGSTOP): the kernel still accepts connections, but nothing answers
    /// them, as with a mail server that hangs. ``resume()`` lets it go on.
    public func pause() {
        process.withLock { $0?.signal(SIGSTOP) }
    }

    public func resume() {
        process.withLock { $0?.signal(SIGCONT) }
    }

    /// Stops the server and removes its directory, messages included.
    public func close() async {
        await stop()
        let directory = self.directory
        await offThePool { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// Every message stored so far, oldest first (none before the first arrives).
    public func messages() async throws -> [ReceivedMail] {
        let logs = directory + "/read"
        let (status, output, errors) = try await ChildProcess.run(["python3", Self.scriptPath, "read", maildir], logs: logs)
        guard status == 0 else { throw Failure(description: "reading the Maildir: status \(status): \(errors)") }
        return try JSONDecoder().decode([Stored].self, from: Data(output.utf8)).map(\.mail)
    }

    /// Every message once at least `count` have arrived, or once `timeout` has passed (then
    /// fewer): a test then checks the count, and that no more come than it expects.
    public func messages(atLeast count: Int, timeout: Duration = .seconds(30)) async throws -> [ReceivedMail] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let messages = try await messages()
            if messages.count >= count || ContinuousClock.now >= deadline { return messages }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// A port nothing listens on now: bound on 127.0.0.1 by the kernel's choice, then let go.
    private static func freePort() throws -> UInt16 {
        let socket = try Socket.listen(on: SocketAddress.resolve(HostPort(host: "127.0.0.1", port: 0)))
        defer { socket.close() }
        return try socket.localAddress().port
    }

    /// Whether the server said it listens (aiosmtpd's `-d` log line) before exiting. Waits at
    /// most 30 s (Python's start on a loaded machine), polling, since its log goes to a file.
    private static func waitUntilListening(_ path: String, while process: ChildProcess) -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let log = try? String(contentsOfFile: path, encoding: .utf8), log.contains("Server is listening") { return true }
            if process.hasExited() { return false }
            usleep(10_000)
        }
        return false
    }

    /// Tests/Support/smtp_mailbox.py in this checkout, found from this file's path.
    private static let scriptPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/Support/smtp_mailbox.py").path
}

/// A message as `smtp_mailbox.py read` writes it.
private struct Stored: Decodable {
    let headers: [[String]]
    let content_type: String
    let text: SMTPMailbox.Part?
    let html: SMTPMailbox.Part?
    let longest_line_octets: Int
    let defects: [String]

    var mail: SMTPMailbox.ReceivedMail {
        SMTPMailbox.ReceivedMail(
            headers: headers.map { (name: $0.first ?? "", value: $0.count > 1 ? $0[1] : "") }, contentType: content_type,
            text: text, html: html, longestLineOctets: longest_line_octets, defects: defects)
    }
}
