import GatehouseBase
import GatehouseCore
import GatehouseHTTP
import GatehousePosix
import GatehouseRuntime
import GatehouseWire

/// One HTTP/1.1 client connection, driven by its event loop like a line ``Connection``: reads
/// bytes into `http_parser`, answers each request in turn, keeps the connection alive between
/// them (HTTP.md, "Transport").
///
/// Requests are answered one at a time, in order: a pipelined request waits in the parser's
/// buffer until the one before it has answered, so each runs after its predecessors' effects,
/// as on the line. Requests an op answers off the loop run on the connection's inbox, whose
/// answers wait for the log like the line's.
final class HTTPConnection: IOEventHandler, ServedConnection, @unchecked Sendable {
    let id: UInt64
    let socket: Socket
    let loop: EventLoop
    private let core: ServerCore
    private let front: HTTPFront
    private let meter: RequestMeter.Shard
    private let inbox: ConnectionInbox
    /// The key this connection presented last (``KeyMemo``).
    private let keys = KeyMemo()
    /// Called once, on the loop thread, when the connection has closed.
    var onClose: (HTTPConnection) -> Void = { _ in }
    /// Called on the loop thread when the server's buffered bytes pass their budget.
    var onOverBudget: () -> Void = {}
    private var parser: HTTPRequestParser
    private var output = ConnectionOutput()
    private var interest = ConnectionInterest()
    /// The request being answered off the loop; the next waits for it.
    private var inFlight: Exchange?
    /// No more requests will be read: the peer closed its side, a request was refused with
    /// `Connection: close`, or the server is shutting down.
    private var readingDone = false
    /// An answer went out with `Connection: close`: nothing after it is answered.
    private var answeringDone = false
    private var peerFinished = false
    /// After the last answer, as on the line (``ConnectionLinger``).
    private var linger = ConnectionLinger()
    private(set) var isClosed = false
    /// When the connection last read bytes or finished an answer (the keep-alive idle limit).
    private var lastActivity: UInt64
    /// When the first byte of the request whose headers are still coming was read (408).
    private var headersStartedAt: UInt64?
    private var share = BufferedShare()
    var bufferedBytes: Int { share.bytes }

    /// What an answer needs of its request.
    private struct Exchange {
        let requestID: String
        let keepAlive: Bool
        let versionMinor: Int
        let headOnly: Bool
        let receivedAt: UInt64
    }

    /// The interim answer to `Expect: 100-continue`: send the body now.
    private static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    init(id: UInt64, socket: Socket, loop: EventLoop, front: HTTPFront, meter: RequestMeter.Shard, core: ServerCore) {
        self.id = id
        self.meter = meter
        self.socket = socket
        self.loop = loop
        self.front = front
        self.core = core
        var limits = HTTPLimits()
        limits.bodyBytesMax = core.configuration.httpBodyBytesMax
        self.parser = HTTPRequestParser(limits: limits)
        self.inbox = ConnectionInbox(core: core)
        self.lastActivity = core.nowNanoseconds
    }

    func start() throws(SystemError) {
        try interest.register(socket, on: loop, handler: self)
    }

    /// Input from a client not yet known: every HTTP request is, until it is answered.
    var unauthenticatedBytes: Int { bufferedBytes }

    // MARK: Events

    func handle(_ events: IOEvents) {
        if linger.isLingering {
            if !ConnectionLinger.discardInput(socket) { close() }
            return
        }
        if events.contains(.readable) || events.contains(.hangup) || events.contains(.error) {
            readAvailable()
            answerBuffered()
        }
        if events.contains(.hangup) || events.contains(.error) {
            close()
            return
        }
        if !isClosed, events.contains(.writable) {
            flush()
            answerBuffered()
        }
        settle()
    }

    /// Reading stops while a request is being answered and a whole next one is buffered, or
    /// answers are piling up unsent: the kernel's buffers then push back on the client.
    private var canRead: Bool {
        let bufferLimit = inFlight == nil ? Int.max : HTTPLimits().headerBytesMax + core.configuration.httpBodyBytesMax
        return parser.bufferedByteCount < bufferLimit && output.pending < core.configuration.outputBytesHighWater
    }

    private func readAvailable() {
        var budget = 4
        while !isClosed, !readingDone, canRead, budget > 0 {
            budget -= 1
            switch ConnectionRead.once(from: socket, into: { room, body in _ = parser.withUnsafeWritableTail(minimumCapacity: room, body) }) {
            case .failed(let error):
                core.logger.debug("http.read_failed", metadata: ["conn": "\(id)", "error": "\(error)"])
                close()
                return
            case .wouldBlock:
                return
            case .endOfFile:
                readingDone = true
                peerFinished = true
                return
            case .bytes(let drained):
                lastActivity = core.nowNanoseconds
                if accountBuffered() { onOverBudget() }
                if isClosed || drained { return }
            }
        }
    }

    // MARK: Requests

    /// Answers the requests buffered and writes the answers, for as long as the socket takes
    /// them at once: requests held back by the high-water mark go on without waiting for an
    /// event (none would come if the client sent them all already and the answers left at once).
    private func answerBuffered() {
        while processRequests() == .heldBack {
            flush()
            guard !isClosed, !output.hasPending else { return }
        }
        flush()
    }

    private enum Pause {
        /// Waiting for bytes, for the request in flight, or closing.
        case waiting
        /// The answers not yet sent reached the high-water mark.
        case heldBack
    }

    /// Answers the requests buffered, one at a time, while nothing is in flight.
    private func processRequests() -> Pause {
        while !isClosed, !answeringDone, inFlight == nil {
            guard output.pending < core.configuration.outputBytesHighWater else { return .heldBack }
            switch parser.next() {
            case .needMoreData:
                noteHeaderProgress()
                if parser.takeContinueRequest() { output.bytes.append(contentsOf: Self.continueResponse) }
                return .waiting
            case .failure(let error):
                refuse(error)
                return .waiting
            case .request(let request):
                headersStartedAt = nil
                core.stats.requestReceived()
                serve(request)
            }
        }
        return .waiting
    }

    /// Starts the 408 clock at a request's first byte; it stops once its headers are in.
    private func noteHeaderProgress() {
        if !parser.isReadingHeaders {
            headersStartedAt = nil
        } else if headersStartedAt == nil {
            headersStartedAt = core.nowNanoseconds
        }
    }

    private func serve(_ request: HTTPRequest) {
        let exchange = Exchange(
            requestID: front.requestID(for: request), keepAlive: request.keepAlive && !readingDone,
            versionMinor: request.versionMinor, headOnly: request.method == "HEAD",
            receivedAt: EventLoop.monotonicNanoseconds()
        )
        switch HTTPRoute.router.match(method: request.method, path: request.path) {
        case .found(let route, let parameters):
            switch core.handle(route, parameters: parameters, request, keys: keys) {
            case .respond(let response, let tally):
                write(response, tally, exchange)
            case .run(let opRequest, let session, let answer):
                inFlight = exchange
                inbox.submit(opRequest, session: session) { [self] outcome in
                    loop.execute {
                        let (response, tally) = answer(outcome)
                        self.finish(response, tally)
                    }
                }
            case .work(let work):
                inFlight = exchange
                inbox.submit { [self] in
                    let answer = await work()
                    return ConnectionInbox.Delivery(durableAt: answer.durableAt) {
                        self.loop.execute { self.finish(answer.response, answer.tally) }
                    }
                }
            }
        case .methodNotAllowed(let allow):
            var response = core.unrouted(request, GatehouseError(.badRequest, "\(request.method) is not allowed here"), status: 405)
            response.headers.append((name: "Allow", value: allow.joined(separator: ", ")))
            write(response, .other(.badRequest), exchange)
        case .notFound:
            write(core.unrouted(request, GatehouseError(.notFound, "no such path")), .other(.notFound), exchange)
        case .badPath:
            write(core.unrouted(request, GatehouseError(.badRequest, "the path is not well-formed")), .other(.badRequest), exchange)
        }
    }

    /// The answer of the request in flight arrives (on the loop's thread), durable as its op requires.
    private func finish(_ response: HTTPResponse, _ tally: RequestTally) {
        guard !isClosed, let exchange = inFlight else { return }
        inFlight = nil
        write(response, tally, exchange)
        answerBuffered()
        settle()
    }

    /// A request the parser refused (400, 413, 431) is answered, and the connection closes:
    /// what follows it in the stream cannot be trusted to start a request.
    private func refuse(_ error: HTTPParseError) {
        let code: ErrorCode = error.status == 400 ? .badRequest : .lineTooLong
        let exchange = Exchange(
            requestID: front.freshRequestID(), keepAlive: false, versionMinor: 1, headOnly: false,
            receivedAt: EventLoop.monotonicNanoseconds()
        )
        readingDone = true
        write(HTTPAnswers.error(GatehouseError(code, error.reason), status: error.status), .other(code), exchange)
    }

    private func write(_ response: HTTPResponse, _ tally: RequestTally, _ exchange: Exchange) {
        let keepAlive = exchange.keepAlive && !readingDone
        HTTPResponseEncoder.encode(
            response, requestID: exchange.requestID, date: front.date, keepAlive: keepAlive,
            requestVersionMinor: exchange.versionMinor, headOnly: exchange.headOnly, into: &output.bytes
        )
        if !keepAlive {
            readingDone = true
            answeringDone = true
        }
        meter.record(.http, tally, since: exchange.receivedAt)
        lastActivity = core.nowNanoseconds
    }

    // MARK: Writing

    private func flush() {
        guard !isClosed else { return }
        do {
            try output.write(to: socket)
        } catch {
            core.logger.debug("http.write_failed", metadata: ["conn": "\(id)", "error": "\(error)"])
            close()
        }
    }

    private func accountBuffered() -> Bool {
        share.update(to: isClosed ? 0 : parser.bufferedByteCount + output.pending, core: core)
    }

    /// Decides what to wait for next, and closes a connection that has nothing left to do.
    private func settle() {
        guard !isClosed else { return }
        if accountBuffered() {
            onOverBudget()
            guard !isClosed else { return }
        }
        let pendingOutput = output.hasPending
        if readingDone, inFlight == nil, !pendingOutput {
            if peerFinished {
                close()
                return
            }
            if !linger.start(socket: socket, loop: loop, interest: &interest, now: core.nowNanoseconds) { close() }
            return
        }
        if pendingOutput, output.pending > core.configuration.outputBytesMax {
            core.logger.info("http.dropped_slow_reader", metadata: ["conn": "\(id)"])
            close()
            return
        }
        interest.set(reading: !readingDone && canRead, writing: pendingOutput, socket, on: loop)
    }

    // MARK: Lifecycle

    func beginShutdown() {
        guard !isClosed else { return }
        readingDone = true
        flush()
        settle()
    }

    /// Closes a linger that is over; answers 408 to a request whose headers are late, and closes
    /// a connection silent past the keep-alive limit with nothing in flight (a request whose
    /// body stopped coming included).
    func housekeep(now: UInt64, _ deadlines: ConnectionDeadlines) {
        if linger.isOver(now: now) {
            close()
            return
        }
        guard !isClosed, !readingDone, inFlight == nil else { return }
        if let headersStartedAt, now &- headersStartedAt > deadlines.httpHeaders {
            timeOut("the request's headers did not arrive within \(deadlines.httpHeaders / 1_000_000_000) s")
        } else if now &- lastActivity > deadlines.httpIdle, !output.hasPending {
            if parser.isInsideRequest {
                timeOut("the request did not arrive within \(deadlines.httpIdle / 1_000_000_000) s")
            } else {
                core.logger.debug("http.idle_closed", metadata: ["conn": "\(id)"])
                close()
            }
        }
    }

    private func timeOut(_ reason: String) {
        core.logger.debug("http.request_timeout", metadata: ["conn": "\(id)"])
        let exchange = Exchange(
            requestID: front.freshRequestID(), keepAlive: false, versionMinor: 1, headOnly: false,
            receivedAt: EventLoop.monotonicNanoseconds()
        )
        readingDone = true
        write(HTTPAnswers.error(GatehouseError(.badRequest, reason), status: 408), .other(.badRequest), exchange)
        flush()
        settle()
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        loop.unregister(socket.descriptor)
        socket.close()
        _ = share.update(to: 0, core: core)
        output.discard()
        onClose(self)
    }
}
