#if canImport(Glibc)
import Glibc
#endif

/// Where and how the server hands its email over: an SMTP submission server the operator names.
///
/// - `smtp://host[:port]` (port 587, submission, when none is given): the session starts in
///   plain text and must be upgraded with STARTTLS before anything else is sent; a server that
///   offers no STARTTLS gets nothing (``MailError/Code/tlsRequired``). `insecure` lifts that
///   requirement, for a mail server on loopback or a private network only: then everything,
///   credentials included, goes in plain text.
/// - `smtps://host[:port]` (port 465): TLS from the first byte (RFC 8314's preferred form).
///
/// The server's certificate is always verified. The URL holds neither user name nor password:
/// those come from the credentials file, a text file of two lines, the user name on the first
/// and the password on the second (everything on the line, spaces included, up to LF; a CR
/// before the LF is dropped), with nothing after the password but an optional line end.
/// Without a credentials file the server is used without AUTH.
public struct SMTPSettings: Sendable, CustomStringConvertible {
    /// `smtp://host:port` or `smtps://host:port`, the port always written.
    public let url: String
    /// The envelope sender (`MAIL FROM`): the address the mail server lets this server send as.
    public let from: MailAddress
    public let username: String?
    public let password: String?
    /// Whether the session must be encrypted: always for `smtps://`, and for `smtp://` unless insecure.
    public let requireTLS: Bool

    /// The longest credentials file read.
    public static let credentialsBytesMax = 4096

    /// Settings from the command line's `url`, `from` and credentials file; throws an error
    /// naming what is wrong, and reads nothing but the credentials file.
    public init(url: String, from: String, credentialsFile: String?, insecure: Bool) throws(SMTPSettingsError) {
        let (scheme, host, port) = try Self.parse(url: url)
        self.url = "\(scheme)://\(host):\(port)"
        do {
            self.from = try MailAddress(from)
        } catch {
            throw SMTPSettingsError(code: .from, message: "the sender: \(error.message)")
        }
        let credentials = try credentialsFile.map { path throws(SMTPSettingsError) in try Self.readCredentials(path) }
        self.username = credentials?.username
        self.password = credentials?.password
        self.requireTLS = scheme == "smtps" || !insecure
    }

    /// Whether TLS starts with the connection (`smtps://`) rather than with STARTTLS.
    public var isImplicitTLS: Bool { url.hasPrefix("smtps://") }

    public var description: String {
        let security = isImplicitTLS ? "TLS" : requireTLS ? "STARTTLS required" : "plain text allowed"
        let login = username.map { "user \($0), password hidden" } ?? "no login"
        return "\(url) from \(from) (\(security), \(login))"
    }

    // MARK: The URL

    private static func parse(url: String) throws(SMTPSettingsError) -> (scheme: String, host: String, port: Int) {
        guard let separator = url.firstRange(of: "://") else {
            throw SMTPSettingsError(code: .scheme, message: "\(MailAddress.shown(url)) is not an smtp:// or smtps:// URL")
        }
        let scheme = url[..<separator.lowerBound].lowercased()
        guard scheme == "smtp" || scheme == "smtps" else {
            throw SMTPSettingsError(code: .scheme, message: "the scheme \(MailAddress.shown(scheme)) is not smtp or smtps")
        }
        var authority = Substring(url[separator.upperBound...])
        if authority.last == "/" { authority = authority.dropLast() }
        guard !authority.contains(where: { "/?#@".contains($0) }) else {
            throw SMTPSettingsError(
                code: .url, message: "the URL may hold only a host and a port (credentials go in the credentials file)")
        }
        let (host, portText) = try splitHostPort(authority)
        guard let portText else { return (scheme, host, scheme == "smtps" ? 465 : 587) }
        guard let port = Int(portText), (1...65535).contains(port), portText.allSatisfy(\.isASCII) else {
            throw SMTPSettingsError(code: .port, message: "the port \(MailAddress.shown(String(portText))) is not 1 to 65535")
        }
        return (scheme, host, port)
    }

    /// The host (a name, an IPv4 address or a bracketed IPv6 address) and the port's text, if any.
    private static func splitHostPort(_ authority: Substring) throws(SMTPSettingsError) -> (String, Substring?) {
        let isIPv6 = authority.first == "["
        let hostEnd = isIPv6 ? authority.firstIndex(of: "]").map(authority.index(after:)) : authority.firstIndex(of: ":")
        let host = authority[..<(hostEnd ?? authority.endIndex)]
        let rest = authority[(hostEnd ?? authority.endIndex)...]
        let allowed: (Character) -> Bool =
            isIPv6 ? { $0.isHexDigit || ":.[]".contains($0) } : { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
        guard !host.isEmpty, host != "[]", host.allSatisfy(allowed), !isIPv6 || host.last == "]" else {
            throw SMTPSettingsError(code: .host, message: "the URL names no host, or not a host name or IP address")
        }
        guard !rest.isEmpty else { return (String(host), nil) }
        guard rest.first == ":" else {
            throw SMTPSettingsError(code: .host, message: "the URL names no host, or not a host name or IP address")
        }
        return (String(host), rest.dropFirst())
    }

    // MARK: The credentials file

    private static func readCredentials(_ path: String) throws(SMTPSettingsError) -> (username: String, password: String) {
        let bytes = try readSmallFile(path)
        // Split as bytes: in a String, CR LF is one Character and would not split at LF.
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        }
        if lines.count == 3, lines[2].isEmpty { lines.removeLast() }
        // libcurl takes both as C strings, which a NUL would cut short.
        guard lines.count == 2, !lines[0].isEmpty, !lines[1].isEmpty, !lines.joined().contains(0) else {
            throw SMTPSettingsError(
                code: .credentialsMalformed,
                message: "the credentials file \(path) must hold two lines, the user name and then the password")
        }
        guard let username = String(validating: lines[0], as: UTF8.self), let password = String(validating: lines[1], as: UTF8.self)
        else { throw SMTPSettingsError(code: .credentialsMalformed, message: "the credentials file \(path) is not UTF-8 text") }
        return (username, password)
    }

    private static func readSmallFile(_ path: String) throws(SMTPSettingsError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw SMTPSettingsError(code: .credentialsUnreadable, message: "cannot read the credentials file \(path): \(reason)")
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: credentialsBytesMax + 1)
        while bytes.count <= credentialsBytesMax {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else {
                let reason = String(cString: strerror(errno))
                throw SMTPSettingsError(code: .credentialsUnreadable, message: "cannot read the credentials file \(path): \(reason)")
            }
            if count == 0 { return bytes }
            bytes += buffer[..<count]
        }
        throw SMTPSettingsError(
            code: .credentialsMalformed, message: "the credentials file \(path) is over \(credentialsBytesMax) bytes")
    }
}

/// Why the SMTP settings cannot be used: a stable code and a message for the operator.
public struct SMTPSettingsError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// The URL's scheme is not `smtp` or `smtps` (or it has none).
        case scheme
        /// The URL names no host, or something that is not a host.
        case host
        /// The URL's port is not a number from 1 to 65535.
        case port
        /// The URL holds more than a host and a port (a path, a query, a user name).
        case url
        /// The sender address is not an address.
        case from
        /// The credentials file cannot be opened or read.
        case credentialsUnreadable = "credentials_unreadable"
        /// The credentials file is not two lines of text, a user name and a password.
        case credentialsMalformed = "credentials_malformed"
    }

    public let code: Code
    public let message: String

    public var description: String { "\(code.rawValue): \(message)" }
}
