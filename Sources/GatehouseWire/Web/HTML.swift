/// A piece of markup. Interpolating a `String` into it escapes the string, so text from the
/// config or the request can only ever be text; markup goes in only as `HTML` or a checked
/// ``WebLink``.
struct HTML: ExpressibleByStringInterpolation, Sendable {
    var markup: String

    init(stringLiteral literal: String) {
        markup = literal
    }

    init(stringInterpolation: StringInterpolation) {
        markup = stringInterpolation.markup
    }

    init(joining pieces: [HTML]) {
        markup = pieces.map(\.markup).joined()
    }

    static let empty: HTML = ""

    struct StringInterpolation: StringInterpolationProtocol {
        var markup = ""

        init(literalCapacity: Int, interpolationCount: Int) {
            markup.reserveCapacity(literalCapacity + interpolationCount * 16)
        }

        mutating func appendLiteral(_ literal: String) {
            markup += literal
        }

        mutating func appendInterpolation(_ text: String) {
            markup += HTML.escape(text)
        }

        mutating func appendInterpolation(_ html: HTML) {
            markup += html.markup
        }

        mutating func appendInterpolation(_ link: WebLink) {
            markup += HTML.escape(link.url)
        }
    }

    /// Escapes for text and for double- or single-quoted attribute values alike.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }
}
