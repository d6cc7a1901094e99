import GatehouseBase
import GatehouseCore
import GatehousePosix
import GatehouseWire
#if canImport(Glibc)
import Glibc
#endif

/// What a loop asks of each connection it owns, line or HTTP.
protocol ServedConnection: AnyObject {
    var id: UInt64 { get }
    /// What this connection counts in the server's buffered bytes (``ServerCore/bufferedBytes``).
    var bufferedBytes: Int { get }
    /// Of those, input from a client not yet known: what the budget sheds first.
    var unauthenticatedBytes: Int { get }
    /// Registers with the loop.
    func start() throws(SystemError)
    /// The loop's periodic pass: closes what is past its deadlines.
    func housekeep(now: UInt64, _ deadlines: ConnectionDeadlines)
    /// Stops reading requests; answers what is in flight, then closes (SIGTERM).
    func beginShutdown()
    func close()
}

/// The limits ``ServedConnection/housekeep(now:_:)`` holds connections to, in nanoseconds of
/// the connection clock.
struct ConnectionDeadlines {
    /// Line: silent this long with nothing in flight; `nil`: never.
    var idle: UInt64?
    /// Line: to say `hello`.
    var hello: UInt64
    /// HTTP: a request's headers complete after its first byte.
    var httpHeaders: UInt64
    /// HTTP: a keep-alive connection silent between requests (and a request's body in coming).
    var httpIdle: UInt64

    init(_ configuration: ServerConfiguration) {
        idle = configuration.idleTimeout.map(Self.nanoseconds)
        hello = Self.nanoseconds(configuration.helloTimeout)
        httpHeaders = Self.nanoseconds(configuration.httpHeaderTimeout)
        httpIdle = Self.nanoseconds(configuration.httpIdleTimeout)
    }

    /// How often the loop looks: a quarter of the shortest limit, between 10 and 250 ms.
    static func interval(_ configuration: ServerConfiguration) -> Duration {
        let shortest = [configuration.idleTimeout ?? .seconds(1), configuration.helloTimeout, configuration.httpHeaderTimeout].min()!
        return max(min(shortest / 4, .milliseconds(250)), .milliseconds(10))
    }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        UInt64(duration.components.seconds) * 1_000_000_000 + UInt64(duration.components.attoseconds / 1_000_000_000)
    }
}

/// Which listener a connection came from.
enum ListenerKind: Sendable {
    case line
    case http
}

/// An event loop and the connections it owns. Confined to the loop's thread like them.
final class ServerLoop: @unchecked Sendable {
    let loop: EventLoop
    private let core: ServerCore
    private let laneBatch: LaneBatch
    /// What this loop's HTTP connections share: the date of this second, request ids.
    private let httpFront: HTTPFront
    /// Where this loop's connections count their answers (this loop is its only writer).
    private let meter: RequestMeter.Shard
    private var connections: [UInt64: any ServedConnection] = [:]
    private var shuttingDown = false

    init(loop: EventLoop, index: Int, core: ServerCore) {
        self.loop = loop
        self.core = core
        self.laneBatch = LaneBatch(loop: loop)
        self.httpFront = HTTPFront()
        self.meter = core.meter.shard(index)
    }

    /// Starts the loop's housekeeping: idle and lingering connections, those that did not say
    /// `hello` in time, and HTTP requests whose headers are late, are closed.
    func startTimers() {
        let deadlines = ConnectionDeadlines(core.configuration)
        loop.scheduleRepeating(every: ConnectionDeadlines.interval(core.configuration)) { [self] in
            let now = core.nowNanoseconds
            for connection in Array(connections.values) {
                connection.housekeep(now: now, deadlines)
            }
        }
    }

    /// The server holds more buffered bytes than its budget: this loop closes its connections
    /// holding the most unauthenticated input, then those holding the most bytes, until the
    /// server is back under it or nothing of this loop's is left to shed.
    func shedBufferedBytes() {
        var candidates = connections.values.filter { $0.bufferedBytes > 0 }
        candidates.sort { ($0.unauthenticatedBytes, $0.bufferedBytes) > ($1.unauthenticatedBytes, $1.bufferedBytes) }
        for connection in candidates {
            guard core.isOverBufferedBytesBudget else { return }
            core.logger.info("conn.shed", metadata: [
                "conn": "\(connection.id)", "bytes": "\(connection.bufferedBytes)",
                "unauthenticated_bytes": "\(connection.unauthenticatedBytes)",
            ])
            connection.close()
        }
    }

    /// Takes over an accepted socket (on the loop's thread).
    func adopt(_ socket: Socket, id: UInt64, kind: ListenerKind) {
        guard !shuttingDown else {
            socket.close()
            core.stats.connectionClosed()
            return
        }
        switch kind {
        case .line:
            let connection = Connection(id: id, socket: socket, loop: loop, laneBatch: laneBatch, meter: meter, core: core)
            connection.onClose = { [self] closed in forget(closed) }
            connection.onOverBudget = { [self] in shedBufferedBytes() }
            start(connection)
        case .http:
            let connection = HTTPConnection(id: id, socket: socket, loop: loop, front: httpFront, meter: meter, core: core)
            core.stats.httpConnectionsChanged(by: 1)
            connection.onClose = { [self] closed in
                core.stats.httpConnectionsChanged(by: -1)
                forget(closed)
            }
            connection.onOverBudget = { [self] in shedBufferedBytes() }
            start(connection)
        }
    }

    private func forget(_ connection: any ServedConnection) {
        connections[connection.id] = nil
        core.stats.connectionClosed()
    }

    private func start(_ connection: any ServedConnection) {
        do {
            try connection.start()
            connections[connection.id] = connection
        } catch {
            core.logger.warning("conn.register_failed", metadata: ["error": "\(error)"])
            // Closes the socket, counts the close and lets the connection go (its push target
            // holds it until it is closed).
            connection.close()
        }
    }

    /// Stops reading requests everywhere; connections close as their answers go out.
    func beginShutdown() {
        shuttingDown = true
        for connection in Array(connections.values) {
            connection.beginShutdown()
        }
    }

    /// Closes whatever is still open once the grace period is over.
    func closeAll() {
        for connection in Array(connections.values) {
            connection.close()
        }
    }
}

/// Accepts connections on the listening socket and deals them out to the loops.
///
/// When `accept` fails for want of a resource (descriptors: `EMFILE`, `ENFILE`; memory), the
/// pending connection stays in the kernel's queue and epoll, which is level-triggered, would
/// report the socket again at once: the acceptor stops watching it instead, and tries again
/// after a pause that doubles up to a second while the failures go on, logging at most one line
/// a second. Once a descriptor is free, the next try takes the queue.
final class Acceptor: IOEventHandler, @unchecked Sendable {
    private let socket: Socket
    private let kind: ListenerKind
    private let loops: [ServerLoop]
    private let core: ServerCore
    private var nextLoop = 0
    private var nextConnectionID: UInt64 = 0
    private var isOpen = true
    /// The loop the listening socket is registered on (``register(on:)``).
    private var loop: EventLoop?
    /// While paused: the timer that tries again, and how long this pause is.
    private var retryTimer: Int?
    private var pauseMilliseconds = 0
    private var lastWarningNanoseconds: UInt64 = 0
    private var failuresSinceWarning = 0

    static let firstPauseMilliseconds = 10
    static let longestPauseMilliseconds = 1_000

    init(socket: Socket, kind: ListenerKind, loops: [ServerLoop], core: ServerCore) {
        self.socket = socket
        self.kind = kind
        self.loops = loops
        self.core = core
    }

    func handle(_ events: IOEvents) {
        // A bounded batch per wake-up, so a connection storm cannot monopolise the loop.
        for _ in 0..<256 where isOpen {
            let accepted: Socket
            do {
                guard case .processed(let socket) = try socket.accept() else { break }
                accepted = socket
            } catch {
                // The peer gave up before it was accepted: take the next one.
                if error.errno == ECONNABORTED || error.errno == EPROTO { continue }
                pause(after: error)
                return
            }
            place(accepted)
        }
        pauseMilliseconds = 0
    }

    /// Stops watching the listening socket and tries again after a pause (see the type's notes).
    private func pause(after error: SystemError) {
        guard let loop, isOpen else { return }
        pauseMilliseconds = min(max(pauseMilliseconds * 2, Self.firstPauseMilliseconds), Self.longestPauseMilliseconds)
        failuresSinceWarning += 1
        let now = EventLoop.monotonicNanoseconds()
        if now &- lastWarningNanoseconds >= 1_000_000_000 {
            core.logger.warning("server.accept_paused", metadata: [
                "error": "\(error)", "retry_ms": "\(pauseMilliseconds)", "failures": "\(failuresSinceWarning)",
            ])
            lastWarningNanoseconds = now
            failuresSinceWarning = 0
        }
        loop.setInterest(socket.descriptor, [])
        retryTimer = loop.scheduleOnce(after: .milliseconds(pauseMilliseconds)) { [self] in
            retryTimer = nil
            guard isOpen else { return }
            loop.setInterest(socket.descriptor, .readable)
            handle(.readable)
        }
    }

    private func place(_ socket: Socket) {
        guard core.stats.connectionAccepted() <= core.configuration.connectionsMax else {
            reject(socket)
            core.stats.connectionRejected()
            return
        }
        nextConnectionID += 1
        let id = nextConnectionID
        let target = loops[nextLoop]
        nextLoop = (nextLoop + 1) % loops.count
        let kind = self.kind
        if target.loop.inEventLoop {
            target.adopt(socket, id: id, kind: kind)
        } else {
            target.loop.execute { target.adopt(socket, id: id, kind: kind) }
        }
    }

    /// Over the connection limit: one `overloaded` line (an HTTP 503 on the HTTP listener), then close.
    private func reject(_ socket: Socket) {
        let limit = core.configuration.connectionsMax
        let error = GatehouseError(.overloaded, "too many connections (the limit is \(limit)); retry later", details: [.limit(limit)])
        let bytes: [UInt8]
        switch kind {
        case .line: bytes = Answer.failure(id: .null, error)
        case .http: bytes = HTTPFront.standalone(HTTPAnswers.error(error))
        }
        _ = try? bytes.withUnsafeBytes { raw throws(SystemError) in try socket.write(raw) }
        socket.close()
    }

    func register(on loop: EventLoop) throws(SystemError) {
        self.loop = loop
        try loop.register(socket.descriptor, interest: .readable, handler: self)
    }

    /// Stops accepting: the listening socket is closed, so new connections are refused.
    func close(on loop: EventLoop) {
        guard isOpen else { return }
        isOpen = false
        if let retryTimer { loop.cancelTimer(retryTimer) }
        retryTimer = nil
        loop.unregister(socket.descriptor)
        socket.close()
    }
}
