internal import CHTTPParser

// The refusals http_parser does not make itself (docs/http-parsing.md has the reasons).
extension HTTPRequestParser {
    /// Checks a request whose headers just completed, before any byte of its body is read.
    func headerRefusal() -> HTTPParseError? {
        if headerBlockBytes > limits.headerBytesMax { return .headerBlockTooLarge(limits) }
        guard core.httpMajor == 1 else { return .badRequest("Only HTTP/1.0 and HTTP/1.1 are served.") }
        guard core.message.target.allSatisfy(Self.isTargetByte) else {
            return .badRequest("The request-target holds a character it may not.")
        }
        for index in core.message.fields.indices where !core.message.field(index).name.allSatisfy(Self.isTokenByte) {
            return .badRequest("A header name holds a character it may not, such as a space before the colon.")
        }
        switch headers.values("Host").count {
        case 0 where core.httpMinor >= 1: return .badRequest("An HTTP/1.1 request needs a Host header.")
        case 2...: return .badRequest("A request may have only one Host header.")
        default: break
        }
        if let length = core.contentLength, length > UInt64(limits.bodyBytesMax) { return .bodyTooLarge(limits) }
        return nil
    }

    /// tchar of RFC 9110 §5.6.2. http_parser, built without its strict mode, also lets a space
    /// into a name, which is how `Host : x` would reach us.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// Visible ASCII (RFC 3986 characters and `%` escapes), and no fragment: a request-target
    /// has none (RFC 9112 §3.2). http_parser lets bytes above 0x7F, tabs and `#` through.
    static func isTargetByte(_ byte: UInt8) -> Bool {
        (0x21...0x7E).contains(byte) && byte != UInt8(ascii: "#")
    }
}

extension HTTPParseError {
    static func badRequest(_ reason: String) -> HTTPParseError {
        HTTPParseError(status: 400, reason: reason)
    }

    static func headerBlockTooLarge(_ limits: HTTPLimits) -> HTTPParseError {
        HTTPParseError(status: 431, reason: "The request line and headers exceed \(limits.headerBytesMax) bytes.")
    }

    static func bodyTooLarge(_ limits: HTTPLimits) -> HTTPParseError {
        HTTPParseError(status: 413, reason: "The request body exceeds \(limits.bodyBytesMax) bytes.")
    }

    /// What http_parser's own error means for the client.
    static func refusal(for error: http_errno, chunkedBodyTooLarge: Bool, _ limits: HTTPLimits) -> HTTPParseError {
        switch error {
        case HPE_HEADER_OVERFLOW:
            .headerBlockTooLarge(limits)
        case HPE_CB_chunk_header where chunkedBodyTooLarge:
            .bodyTooLarge(limits)
        case HPE_CB_body:
            .badRequest("A chunk's data must be followed by CRLF.")
        case HPE_UNEXPECTED_CONTENT_LENGTH:
            .badRequest("Content-Length may appear only once, and never with Transfer-Encoding.")
        case HPE_INVALID_TRANSFER_ENCODING:
            .badRequest("A request's Transfer-Encoding must end in chunked.")
        default:
            .badRequest("The request is not valid HTTP/1.1 (\(String(cString: http_errno_description(error)))).")
        }
    }
}
