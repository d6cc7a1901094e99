internal import CHTTPParser

/// Cuts a connection's bytes into requests with Node's http_parser, and refuses what HTTP.md
/// and RFC 9112 refuse that http_parser lets through (docs/http-parsing.md).
///
/// A value with no I/O, like `LineFramer`: the connection reads into it (through
/// `withUnsafeWritableTail`, straight from `read(2)`, or `append`) and calls `next()` until it
/// answers `.needMoreData`. Requests come out one at a time, in order; the bytes of pipelined
/// ones wait unparsed until asked for, because http_parser pauses at each message's end.
///
/// After `.failure` the parser stays failed and drops what it is given: the connection answers
/// the failure and closes. After a request that does not keep the connection alive, it drops
/// what follows (RFC 9112 §9.6: no further request on that connection is processed).
public struct HTTPRequestParser: Sendable {
    private(set) var core: MessageParser
    let limits: HTTPLimits
    private var state = State.open
    /// Bytes of the current request http_parser has taken, from its first byte.
    private var requestBytes = 0
    /// The request line and headers, with the empty line ending them, once complete.
    private(set) var headerBlockBytes = 0
    /// The current request's headers, from the moment they are complete.
    private(set) var headers = HTTPHeaders()
    /// The request under way asked, with `Expect: 100-continue`, to be told to send its body.
    private var continueAsked = false

    private enum State {
        case open
        case closed
        case failed(HTTPParseError)
    }

    public init(limits: HTTPLimits = HTTPLimits()) {
        self.limits = limits
        core = MessageParser(type: HTTP_REQUEST, bodyBytesMax: limits.bodyBytesMax)
    }

    private var isOpen: Bool {
        if case .open = state { true } else { false }
    }

    // MARK: Filling

    /// Lets the caller read(2) straight into the buffer: ensures at least `minimumCapacity`
    /// writable bytes at the tail, calls `body` with all the free tail, and keeps the first n
    /// bytes where n is what body returns (0...count; negative = nothing kept). Returns n.
    public mutating func withUnsafeWritableTail<E: Error>(
        minimumCapacity: Int,
        _ body: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) -> Int {
        try core.arena.withUnsafeWritableTail(minimumCapacity: minimumCapacity, keep: isOpen, body)
    }

    public mutating func append(_ bytes: [UInt8]) {
        guard isOpen else { return }
        bytes.withUnsafeBytes { core.arena.append($0) }
    }

    /// Bytes read but not yet returned as part of a request: the unparsed ones and those of the
    /// request under way (CRLFs before a request are not counted; they are skipped).
    public var bufferedByteCount: Int { core.arena.count + requestBytes }

    /// From a request's first byte until its headers are complete: the server's 408 clock.
    public var isReadingHeaders: Bool { isOpen && core.message.phase == .headers }

    /// From a request's first byte until it is complete.
    public var isInsideRequest: Bool { isOpen && core.message.phase != .idle }

    /// True once for a request whose headers asked `Expect: 100-continue` (RFC 9110 §10.1.1)
    /// and were taken, while its body is still to come: the server then sends `100 Continue`,
    /// so a client like curl sends the body at once instead of after a pause. A request whose
    /// body came with its headers, or that was refused at its headers (413), never asks.
    public mutating func takeContinueRequest() -> Bool {
        defer { continueAsked = false }
        return continueAsked && isOpen && core.message.phase == .body
    }

    // MARK: Requests

    /// The next complete request, `.needMoreData`, or the failure that ends the connection.
    public mutating func next() -> HTTPParseResult {
        switch state {
        case .failed(let error): return .failure(error)
        case .closed: return .needMoreData
        case .open: break
        }
        while true {
            if core.message.phase == .idle { skipLineBreaksBetweenRequests() }
            guard !core.arena.isEmpty else { return .needMoreData }
            // Never more header bytes than the limit and one: enough to know a block is too long.
            let limit = core.message.phase == .body ? Int.max : limits.headerBytesMax + 1 - requestBytes
            let step = core.execute(upTo: limit)
            requestBytes += step.consumed
            if let error = refusal(after: step) { return fail(error) }
            if core.message.messageCompleted { return .request(takeRequest()) }
        }
    }

    /// RFC 9112 §2.2: a server should ignore at least one empty line before a request line.
    /// http_parser skips them too; skipping them here makes the request's first byte the first
    /// one it is given, where the header block is counted from.
    private mutating func skipLineBreaksBetweenRequests() {
        while let byte = core.arena.first, byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n") {
            core.arena.consume(1)
        }
    }

    private mutating func refusal(after step: MessageParser.Step) -> HTTPParseError? {
        if step.error != HPE_OK { return .refusal(for: step.error, chunkedBodyTooLarge: core.message.chunkedBodyTooLarge, limits) }
        if core.message.headersCompleted {
            core.message.headersCompleted = false
            // http_parser paused on the LF that ends the block, before taking it.
            headerBlockBytes = requestBytes + 1
            headers = core.headers()
            if let error = headerRefusal() { return error }
            continueAsked = core.httpMinor >= 1 && headers["Expect"]?.lowercased() == "100-continue"
        }
        switch core.message.phase {
        case .headers where requestBytes > limits.headerBytesMax:
            return .headerBlockTooLarge(limits)
        case .body where requestBytes - headerBlockBytes - core.message.body.count > limits.bodyBytesMax:
            // Chunk-size lines and trailers: each is bounded by http_parser, their number is not.
            return .bodyTooLarge(limits)
        default:
            return nil
        }
    }

    private mutating func fail(_ error: HTTPParseError) -> HTTPParseResult {
        state = .failed(error)
        core.arena.removeAll()
        core.message.reset()
        requestBytes = 0
        return .failure(error)
    }

    private mutating func takeRequest() -> HTTPRequest {
        var message = MessageAssembly(bodyBytesMax: limits.bodyBytesMax)
        swap(&message, &core.message)
        let request = HTTPRequest(
            method: core.method, target: String(decoding: message.target, as: UTF8.self),
            versionMajor: core.httpMajor, versionMinor: core.httpMinor, headers: headers,
            body: message.body, keepAlive: message.keepAlive
        )
        (requestBytes, headers, continueAsked) = (0, HTTPHeaders(), false)
        if !request.keepAlive {
            state = .closed
            core.arena.removeAll()
        }
        return request
    }
}
