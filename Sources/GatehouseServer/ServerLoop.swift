import GatehouseBase
import GatehouseCore
import GatehousePosix
import GatehouseWire

/// An event loop and the connections it owns. Confined to the loop's thread like them.
final class ServerLoop: @unchecked Sendable {
    let loop: EventLoop
    private let core: ServerCore
    private let laneBatch: LaneBatch
    private var connections: [UInt64: Connection] = [:]
    private var shuttingDown = false

    init(loop: EventLoop, core: ServerCore) {
        self.loop = loop
        self.core = core
        self.laneBatch = LaneBatch(loop: loop)
    }

    /// Starts the loop's housekeeping: idle and lingering connections are closed.
    func startTimers() {
        let idleTimeout = core.configuration.idleTimeout
        let limit = idleTimeout.map {
            UInt64($0.components.seconds) * 1_000_000_000 + UInt64($0.components.attoseconds / 1_000_000_000)
        }
        let interval = min((idleTimeout ?? .seconds(1)) / 4, .milliseconds(250))
        loop.scheduleRepeating(every: max(interval, .milliseconds(10))) { [self] in
            let now = EventLoop.monotonicNanoseconds()
            for connection in Array(connections.values) {
                connection.closeIfIdle(now: now, limitNanoseconds: limit)
            }
        }
    }

    /// Takes over an accepted socket (on the loop's thread).
    func adopt(_ socket: Socket, id: UInt64) {
        guard !shuttingDown else {
            socket.close()
            core.stats.connectionClosed()
            return
        }
        let connection = Connection(id: id, socket: socket, loop: loop, laneBatch: laneBatch, core: core)
        connection.onClose = { [self] closed in
            connections[closed.id] = nil
            core.stats.connectionClosed()
        }
        do {
            try connection.start()
            connections[id] = connection
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
final class Acceptor: IOEventHandler, @unchecked Sendable {
    private let socket: Socket
    private let loops: [ServerLoop]
    private let core: ServerCore
    private var nextLoop = 0
    private var nextConnectionID: UInt64 = 0
    private var isOpen = true

    init(socket: Socket, loops: [ServerLoop], core: ServerCore) {
        self.socket = socket
        self.loops = loops
        self.core = core
    }

    func handle(_ events: IOEvents) {
        // A bounded batch per wake-up, so a connection storm cannot monopolise the loop.
        for _ in 0..<256 where isOpen {
            let accepted: Socket
            do {
                guard case .processed(let socket) = try socket.accept() else { return }
                accepted = socket
            } catch {
                // EMFILE and friends: log, and let the next wake-up try again.
                core.logger.warning("server.accept_failed", metadata: ["error": "\(error)"])
                return
            }
            place(accepted)
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
        if target.loop.inEventLoop {
            target.adopt(socket, id: id)
        } else {
            target.loop.execute { target.adopt(socket, id: id) }
        }
    }

    /// Over the connection limit: one `overloaded` line, then close.
    private func reject(_ socket: Socket) {
        let limit = core.configuration.connectionsMax
        let line = Answer.failure(
            id: .null,
            GatehouseError(.overloaded, "too many connections (the limit is \(limit)); retry later", details: [.limit(limit)])
        )
        _ = try? line.withUnsafeBytes { raw throws(SystemError) in try socket.write(raw) }
        socket.close()
    }

    func register(on loop: EventLoop) throws(SystemError) {
        try loop.register(socket.descriptor, interest: .readable, handler: self)
    }

    /// Stops accepting: the listening socket is closed, so new connections are refused.
    func close(on loop: EventLoop) {
        guard isOpen else { return }
        isOpen = false
        loop.unregister(socket.descriptor)
        socket.close()
    }
}
