internal import CHTTPParser

/// Reads responses with http_parser, for tests and clients: the status, headers and body of
/// each, whether the body has a Content-Length, is chunked or runs until the connection
/// closes. One at a time; the bytes of pipelined ones wait until asked for.
///
/// A response to HEAD announces a body that does not follow, which only the request tells:
/// call `expectHead()` before the `next()` that is to return it.
public struct HTTPResponseParser: Sendable {
    private var core = MessageParser(type: HTTP_RESPONSE, bodyBytesMax: Int.max)
    private var headers = HTTPHeaders()
    private var failure: String?

    public init() {}

    public mutating func withUnsafeWritableTail<E: Error>(
        minimumCapacity: Int,
        _ body: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) -> Int {
        try core.arena.withUnsafeWritableTail(minimumCapacity: minimumCapacity, keep: failure == nil, body)
    }

    public mutating func append(_ bytes: [UInt8]) {
        guard failure == nil else { return }
        bytes.withUnsafeBytes { core.arena.append($0) }
    }

    public var bufferedByteCount: Int { core.arena.count }

    /// The next response to be returned answers a HEAD request: it has no body.
    public mutating func expectHead() {
        core.message.skipsBody = true
    }

    public mutating func next() -> HTTPResponseParseResult {
        if let failure { return .failure(failure) }
        while !core.arena.isEmpty {
            let step = core.execute(upTo: Int.max)
            if step.error != HPE_OK { return fail(step.error) }
            takeHeadersIfComplete()
            if core.message.messageCompleted { return .response(takeResponse()) }
        }
        return .needMoreData
    }

    /// At the end of the stream: the response whose body ran until it, if one did. Call it once
    /// `next()` has answered `.needMoreData`.
    public mutating func finish() -> HTTPParsedResponse? {
        guard failure == nil, core.arena.isEmpty, core.message.phase == .body else { return nil }
        guard core.executeEndOfStream() == HPE_OK, core.message.messageCompleted else { return nil }
        return takeResponse()
    }

    private mutating func takeHeadersIfComplete() {
        guard core.message.headersCompleted else { return }
        core.message.headersCompleted = false
        headers = core.headers()
    }

    private mutating func fail(_ error: http_errno) -> HTTPResponseParseResult {
        let reason = error == HPE_CB_body ? "chunk data not followed by CRLF" : String(cString: http_errno_description(error))
        failure = reason
        core.arena.removeAll()
        return .failure(reason)
    }

    private mutating func takeResponse() -> HTTPParsedResponse {
        let response = HTTPParsedResponse(status: core.statusCode, headers: headers, body: core.message.body)
        core.message.reset()
        headers = HTTPHeaders()
        return response
    }
}

public enum HTTPResponseParseResult: Sendable {
    case needMoreData
    case response(HTTPParsedResponse)
    /// http_parser's description of what is wrong; the parser stays failed.
    case failure(String)
}

public struct HTTPParsedResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int, headers: HTTPHeaders, body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body as UTF-8 text (invalid sequences replaced).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
