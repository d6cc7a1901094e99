internal import GatehouseBase

/// Request paths as routes see them.
public enum HTTPPath {
    /// The path's segments, split on "/" first and then each percent-decoded, so that an
    /// escaped "%2F" stays inside its segment (HTTP.md: it belongs to an id). The leading "/"
    /// starts the first segment; a trailing one ends with an empty segment. Nil when the path
    /// does not start with "/", holds an invalid escape, or decodes to something not UTF-8.
    public static func segments(_ path: String) -> [String]? {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return nil }
        var segments: [String] = []
        for raw in bytes.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            // Most segments hold no escape: they are the path's own (valid UTF-8) bytes.
            if !raw.contains(UInt8(ascii: "%")) {
                segments.append(String(decoding: raw, as: UTF8.self))
                continue
            }
            guard let decoded = percentDecoded(raw), let segment = String(validating: decoded, as: UTF8.self) else { return nil }
            segments.append(segment)
        }
        return segments
    }

    /// RFC 3986 §2.1; "+" is a plus in a path, not a space.
    static func percentDecoded(_ raw: ArraySlice<UInt8>) -> [UInt8]? {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index < raw.endIndex {
            guard raw[index] == UInt8(ascii: "%") else {
                decoded.append(raw[index])
                index += 1
                continue
            }
            guard index + 2 < raw.endIndex, let byte = Hex.decode(String(decoding: raw[(index + 1)...(index + 2)], as: UTF8.self)) else {
                return nil
            }
            decoded.append(contentsOf: byte)
            index += 3
        }
        return decoded
    }
}
