import GatehouseBase

/// The two encodings a message needs to reach any mail server whole: quoted-printable for the
/// bodies (RFC 2045 §6.7) and encoded words for header text (RFC 2047). Both keep every line
/// far below SMTP's 998 octets and put nothing but printable ASCII on the wire.
enum MailEncoding {
    /// A quoted-printable line's longest length, the soft break's `=` included.
    static let encodedLineMax = 76

    /// `text` as quoted-printable with CRLF line ends: its line breaks (LF or CRLF) become hard
    /// breaks, and lines longer than ``encodedLineMax`` are cut with soft breaks.
    static func quotedPrintable(_ text: String) -> String {
        var encoded: [String] = []
        for line in lines(Array(text.utf8)) {
            encoded.append(contentsOf: quotedPrintableLine(line))
        }
        return encoded.joined(separator: "\r\n")
    }

    /// The lines of `bytes`, split at LF or CRLF; a lone CR stays in its line (and is encoded).
    private static func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        }
    }

    /// One line of text as one or more encoded lines, each but the last ending in a soft break.
    private static func quotedPrintableLine(_ line: ArraySlice<UInt8>) -> [String] {
        var lines: [String] = []
        var current = ""
        for (index, byte) in zip(line.indices, line) {
            // Spaces and tabs at the end of a line are encoded: transports may strip them.
            let isLast = index == line.index(before: line.endIndex)
            let literal = (0x21...0x7E).contains(byte) && byte != UInt8(ascii: "=") || (byte == 0x20 || byte == 0x09) && !isLast
            let token = literal ? String(UnicodeScalar(byte)) : "=" + Hex.encode([byte]).uppercased()
            // Room for the soft break's "=", unless this is the line's last token.
            let limit = isLast ? encodedLineMax : encodedLineMax - 1
            if current.utf8.count + token.utf8.count > limit {
                lines.append(current + "=")
                current = ""
            }
            current += token
        }
        lines.append(current)
        return lines
    }

    /// The UTF-8 bytes of one encoded word, at most: its base64 and the `=?utf-8?B?…?=` around
    /// it keep a folded header line under 78 characters.
    static let encodedWordBytesMax = 39

    /// `text` as encoded words (`=?utf-8?B?…?=`), folded onto continuation lines. Each word
    /// holds whole characters, as RFC 2047 §5 asks; a decoder joins them without the folds.
    static func encodedWords(_ text: String) -> String {
        var words: [String] = []
        var chunk: [UInt8] = []
        for scalar in text.unicodeScalars {
            let bytes = Array(String(scalar).utf8)
            if chunk.count + bytes.count > encodedWordBytesMax {
                words.append(encodedWord(chunk))
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append(encodedWord(chunk)) }
        return words.joined(separator: "\r\n ")
    }

    private static func encodedWord(_ bytes: [UInt8]) -> String {
        "=?utf-8?B?" + Base64.encode(bytes, alphabet: .standard, padded: true) + "?="
    }

    /// Whether `text` can stand in a header as it is: printable ASCII that no decoder would take
    /// for an encoded word, short enough for one line after a header name of `nameLength`.
    static func isPlainHeaderText(_ text: String, nameLength: Int) -> Bool {
        text.utf8.allSatisfy { (0x20...0x7E).contains($0) } && !text.contains("=?")
            && nameLength + 2 + text.utf8.count <= 78
    }

    /// Whether `text` may be put in a header at all: no line break or other control character.
    static func isHeaderSafe(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { scalar in
            !(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}")
        }
    }
}
