/// How ``StreamLogHandler`` writes records: `text` for people reading a terminal or journal,
/// `json` (one object per line) for log shippers.
public enum LogFormat: String, Sendable, Hashable, CaseIterable {
    case text
    case json
}

extension LogRecord {
    /// The record as one line, without the trailing newline. Metadata keys are sorted so the
    /// same record always renders to the same bytes.
    public func formatted(as format: LogFormat) -> String {
        switch format {
        case .text: textLine()
        case .json: jsonLine()
        }
    }

    /// `2026-11-29T22:41:03.123Z info gatehouse server.listening address=127.0.0.1:7411`
    ///
    /// Values that would break `key=value` splitting (spaces, quotes, `=`, control or
    /// non-ASCII characters, or nothing at all) are written as JSON-escaped quoted strings.
    func textLine() -> String {
        var line = ISO8601Timestamp.format(timestamp)
        line += " " + level.rawValue
        line += " " + LogEscaping.textToken(label)
        line += " " + LogEscaping.textToken(event)
        for (key, value) in sortedMetadata() {
            line += " " + LogEscaping.textToken(key) + "=" + LogEscaping.textToken(value.description)
        }
        return line
    }

    /// `{"ts":"…","level":"info","label":"gatehouse","event":"server.listening","address":"…"}`
    ///
    /// Metadata is flattened into the top-level object, which is what log shippers index. A
    /// metadata key that collides with one of the four fixed fields gets a leading underscore
    /// so the object never holds a duplicate key.
    func jsonLine() -> String {
        var line = "{\"ts\":\"" + ISO8601Timestamp.format(timestamp) + "\""
        line += ",\"level\":\"" + level.rawValue + "\""
        line += ",\"label\":" + LogEscaping.jsonString(label)
        line += ",\"event\":" + LogEscaping.jsonString(event)
        for (key, value) in sortedMetadata() {
            let name = Self.reservedJSONKeys.contains(key) ? "_" + key : key
            line += "," + LogEscaping.jsonString(name) + ":" + LogEscaping.jsonValue(value)
        }
        return line + "}"
    }

    private func sortedMetadata() -> [(key: String, value: Logger.MetadataValue)] {
        metadata.sorted { $0.key < $1.key }
    }

    private static let reservedJSONKeys: Set<String> = ["ts", "level", "label", "event"]
}

/// The escaping rules of both formats. GatehouseBase sits below the wire module, so this is a
/// deliberately tiny JSON string writer rather than a dependency on the real encoder.
enum LogEscaping {
    static func textToken(_ value: String) -> String {
        needsQuotingInText(value) ? jsonString(value) : value
    }

    static func jsonValue(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let string): jsonString(string)
        case .integer(let integer): String(integer)
        case .boolean(let boolean): String(boolean)
        }
    }

    /// A quoted JSON string (RFC 8259 §7). U+2028 and U+2029 are escaped as well: they are
    /// valid JSON but some line-oriented tools treat them as line breaks.
    static func jsonString(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case "\u{00}"..."\u{1F}", "\u{7F}", "\u{2028}", "\u{2029}": out += unicodeEscape(scalar)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    private static func needsQuotingInText(_ value: String) -> Bool {
        if value.isEmpty { return true }
        return value.utf8.contains { byte in
            byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "=")
                || byte == UInt8(ascii: "\\")
        }
    }

    private static func unicodeEscape(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16)
        return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
    }
}
