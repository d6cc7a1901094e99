internal import CHTTPParser

/// Writes responses as HTTP/1.1 bytes.
public enum HTTPResponseEncoder {
    /// Appends the whole response: the status line, `Date`, `X-Request-Id`, `Content-Type` and
    /// `Content-Length` when the status may have a body, `Connection` when the default for the
    /// request's version does not hold, the extra headers, the empty line, and the body.
    ///
    /// 1xx, 204 and 304 have no body (RFC 9110 §6.4.1), so neither header is written nor the
    /// body sent. For HEAD (`headOnly`) the headers are those GET would get, `Content-Length`
    /// included (RFC 9110 §9.3.2), without the body.
    public static func encode(
        _ response: HTTPResponse, requestID: String, date: String, keepAlive: Bool, requestVersionMinor: Int, headOnly: Bool,
        into output: inout [UInt8]
    ) {
        let mayHaveBody = Self.mayHaveBody(response.status)
        output.reserveCapacity(output.count + 160 + response.body.count)
        output.append(contentsOf: "HTTP/1.1 \(response.status) \(reasonPhrase(response.status))\r\n".utf8)
        appendHeader("Date", date, to: &output)
        appendHeader("X-Request-Id", requestID, to: &output)
        if mayHaveBody {
            if let contentType = response.contentType { appendHeader("Content-Type", contentType, to: &output) }
            appendHeader("Content-Length", String(response.body.count), to: &output)
        }
        if !keepAlive {
            appendHeader("Connection", "close", to: &output)
        } else if requestVersionMinor == 0 {
            // An HTTP/1.0 client closes unless told the connection stays (RFC 9112 §9.3).
            appendHeader("Connection", "keep-alive", to: &output)
        }
        for (name, value) in response.headers { appendHeader(name, value, to: &output) }
        output.append(contentsOf: "\r\n".utf8)
        if mayHaveBody, !headOnly { output.append(contentsOf: response.body) }
    }

    /// The reason phrase for the status line; empty for a status without one, which RFC 9112
    /// §4 allows.
    public static func reasonPhrase(_ status: Int) -> String {
        switch status {
        // Not registered, but what RevenueCat's SDKs are answered with while the server cannot write.
        case 529: return "Site Is Overloaded"
        case 100...599:
            let phrase = String(cString: http_status_str(http_status(rawValue: UInt32(status))))
            return phrase == "<unknown>" ? "" : phrase
        default: return ""
        }
    }

    static func mayHaveBody(_ status: Int) -> Bool {
        !(100...199).contains(status) && status != 204 && status != 304
    }

    private static func appendHeader(_ name: String, _ value: String, to output: inout [UInt8]) {
        // A CR or LF here would end the header early and let a value smuggle in a header of its own.
        precondition(!name.utf8.contains { $0 == 13 || $0 == 10 || $0 == UInt8(ascii: ":") }, "bad header name \(name.debugDescription)")
        precondition(!value.utf8.contains { $0 == 13 || $0 == 10 }, "header \(name) holds a line break")
        output.append(contentsOf: name.utf8)
        output.append(contentsOf: ": ".utf8)
        output.append(contentsOf: value.utf8)
        output.append(contentsOf: "\r\n".utf8)
    }
}
