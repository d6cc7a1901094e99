import GatehouseHTTP

/// What a parser hands out for some bytes: the requests, then how it stopped.
struct Parsed {
    var requests: [HTTPRequest] = []
    var failure: HTTPParseError?
    var body: String { requests.first.map { String(decoding: $0.body, as: UTF8.self) } ?? "" }
}

/// Everything `next()` hands out until it asks for more data or fails.
func drain(_ parser: inout HTTPRequestParser, into parsed: inout Parsed) {
    while parsed.failure == nil {
        switch parser.next() {
        case .needMoreData: return
        case .request(let request): parsed.requests.append(request)
        case .failure(let error): parsed.failure = error
        }
    }
}

func parse(_ text: String, limits: HTTPLimits = HTTPLimits()) -> Parsed {
    parse(Array(text.utf8), limits: limits)
}

func parse(_ bytes: [UInt8], limits: HTTPLimits = HTTPLimits()) -> Parsed {
    var parser = HTTPRequestParser(limits: limits)
    var parsed = Parsed()
    parser.append(bytes)
    drain(&parser, into: &parsed)
    return parsed
}

/// A request whose line and headers take exactly `headerBytes` bytes, CRLFs included.
func request(headerBytes: Int, body: String = "") -> [UInt8] {
    let head = "POST /pad HTTP/1.1\r\nHost: example.com\r\nContent-Length: \(body.utf8.count)\r\nX-Pad: "
    let padding = headerBytes - head.utf8.count - "\r\n\r\n".utf8.count
    precondition(padding >= 0, "header block too small for its fixed part")
    return Array((head + String(repeating: "p", count: padding) + "\r\n\r\n" + body).utf8)
}
