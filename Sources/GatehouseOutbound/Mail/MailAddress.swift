/// An email address as the envelope and the headers carry it: `local@domain`, printable ASCII.
///
/// Checked when made, so that no address can carry a line break or a second recipient into a
/// header or an SMTP command: exactly one `@` with something on each side, no spaces, no
/// control characters, none of the characters that delimit addresses in a header (`<>()[],;:"\`).
/// Addresses with non-ASCII characters (SMTPUTF8) are refused: not every mail server takes them.
public struct MailAddress: Sendable, Hashable, CustomStringConvertible {
    public let value: String

    /// RFC 5321's longest path, less the angle brackets.
    public static let bytesMax = 254

    public init(_ value: String) throws(MailFormatError) {
        if let problem = Self.problem(value) {
            throw MailFormatError(code: .address, message: "address \(Self.shown(value)): \(problem)")
        }
        self.value = value
    }

    public var description: String { value }

    /// Why `value` is not an address of this kind, or `nil` when it is one.
    static func problem(_ value: String) -> String? {
        let bytes = Array(value.utf8)
        guard !bytes.isEmpty, bytes.count <= bytesMax else { return "must have 1 to \(bytesMax) bytes" }
        guard bytes.allSatisfy(isAddressByte) else { return "has a space, a control, non-ASCII or delimiting character" }
        let parts = bytes.split(separator: UInt8(ascii: "@"), omittingEmptySubsequences: false)
        guard parts.count == 2 else { return "must have exactly one @" }
        guard !parts[0].isEmpty, !parts[1].isEmpty else { return "must have a name before the @ and a domain after it" }
        let domain = parts[1]
        let dot = UInt8(ascii: ".")
        guard domain.first != dot, domain.last != dot, !zip(domain, domain.dropFirst()).contains(where: { $0 == dot && $1 == dot })
        else { return "has an empty label in its domain" }
        return nil
    }

    private static func isAddressByte(_ byte: UInt8) -> Bool {
        (0x21...0x7E).contains(byte) && !Array(#"<>()[],;:"\"#.utf8).contains(byte)
    }

    /// The refused value for a message: printable ASCII kept, anything else (a line break
    /// above all, since the message reaches logs) shown as `?`.
    static func shown(_ value: String) -> String {
        let bytes = value.utf8.prefix(80).map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }
        return "\"" + String(decoding: bytes, as: UTF8.self) + "\""
    }
}

/// Why a message or an address cannot be made: a stable code and a message for logs.
public struct MailFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// An address (sender, recipient, reply-to) is not one ``MailAddress`` takes.
        case address
        /// A header's text (the subject, a display name) has a line break or another control character.
        case headerText = "header_text"
        /// The message id is not of the form `left@right` an address has.
        case messageID = "message_id"
    }

    public let code: Code
    public let message: String

    public var description: String { "\(code.rawValue): \(message)" }
}
