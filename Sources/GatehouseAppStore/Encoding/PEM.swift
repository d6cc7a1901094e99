import GatehouseBase

/// Reads the DER blocks out of PEM text: every `-----BEGIN <label>-----` block, wherever it is
/// (files written by `openssl x509 -text` carry a text dump before the block).
enum PEM {
    /// The DER bytes of each certificate block in order; `nil` when a block is unterminated or
    /// its body is not base64. An empty array when the text has no block at all.
    static func certificates(in text: [UInt8]) -> [[UInt8]]? {
        blocks(labeled: "CERTIFICATE", in: text)
    }

    /// The DER bytes of each block labeled `label` (`CERTIFICATE`, `PRIVATE KEY`) in order; `nil`
    /// when one is unterminated or its body is not base64. Blocks of other labels are skipped.
    static func blocks(labeled label: String, in text: [UInt8]) -> [[UInt8]]? {
        let begin = Array("-----BEGIN \(label)-----".utf8)
        let end = Array("-----END \(label)-----".utf8)
        var blocks: [[UInt8]] = []
        var index = 0
        while let start = firstIndex(of: begin, in: text, from: index) {
            let bodyStart = start + begin.count
            guard let stop = firstIndex(of: end, in: text, from: bodyStart) else { return nil }
            let body = text[bodyStart..<stop].filter { !isWhitespace($0) }
            guard let der = Base64.decode(body, alphabet: .standard), !der.isEmpty else { return nil }
            blocks.append(der)
            index = stop + end.count
        }
        return blocks
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
            || byte == UInt8(ascii: "\t")
    }

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        var index = start
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) {
                return index
            }
            index += 1
        }
        return nil
    }
}
