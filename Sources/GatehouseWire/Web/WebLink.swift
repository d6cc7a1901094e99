/// A URL a page may put in an `href`: an http(s) address, the app's redemption deep link, or a
/// support address as `mailto:`. Anything else (`javascript:`, `data:`, a value with quotes,
/// spaces or control characters a browser would strip or split on) is refused, and the page
/// leaves that link out rather than show a broken or dangerous one.
struct WebLink: Sendable, Equatable {
    let url: String

    private init(url: String) {
        self.url = url
    }

    /// An `http://` or `https://` URL with a host.
    static func web(_ candidate: String?) -> WebLink? {
        guard let candidate, candidate.unicodeScalars.allSatisfy(isURLCharacter) else { return nil }
        let lowered = candidate.lowercased()
        for prefix in ["https://", "http://"] where lowered.hasPrefix(prefix) {
            let rest = lowered.dropFirst(prefix.count)
            guard let first = rest.first, first != "/", first != "?", first != "#" else { return nil }
            return WebLink(url: candidate)
        }
        return nil
    }

    /// `<app_scheme>://redeem_web_purchase?redemption_token=<token>`, the one deep link form
    /// DESIGN.md defines, with a scheme as RFC 3986 spells one that no browser gives a meaning of
    /// its own.
    static func deepLink(_ candidate: String) -> WebLink? {
        let marker = "://redeem_web_purchase?redemption_token="
        guard let markerRange = candidate.firstRange(of: marker) else { return nil }
        let scheme = candidate[..<markerRange.lowerBound]
        let token = candidate[markerRange.upperBound...]
        guard isScheme(scheme), !browserSchemes.contains(scheme.lowercased()) else { return nil }
        guard !token.isEmpty, token.unicodeScalars.allSatisfy(isTokenCharacter) else { return nil }
        return WebLink(url: candidate)
    }

    /// `mailto:` for a plain address (no `?`, `&` or spaces, so no headers or body can ride along).
    static func mail(_ address: String?) -> WebLink? {
        guard let address, let at = address.firstIndex(of: "@") else { return nil }
        let local = address[..<at]
        let domain = address[address.index(after: at)...]
        let localCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-")
        let domainCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
        guard !local.isEmpty, local.allSatisfy(localCharacters.contains) else { return nil }
        guard domain.contains("."), !domain.hasPrefix("."), !domain.hasSuffix("."), domain.allSatisfy(domainCharacters.contains)
        else { return nil }
        return WebLink(url: "mailto:" + address)
    }

    /// Schemes a browser runs or reads itself instead of handing them to an app.
    private static let browserSchemes: Set<String> = [
        "javascript", "vbscript", "data", "blob", "file", "about", "filesystem", "http", "https", "ftp", "ws", "wss",
    ]

    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.unicodeScalars.first, isASCIILetter(first) else { return false }
        return text.unicodeScalars.allSatisfy { isASCIILetter($0) || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) }
    }

    private static func isASCIILetter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }

    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        isASCIILetter(scalar) || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-"
    }

    /// Printable ASCII other than the characters RFC 3986 never lets into a URL unescaped.
    private static func isURLCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value > 0x20 && scalar.value < 0x7F && !"\"<>\\^`{|}".unicodeScalars.contains(scalar)
    }
}
