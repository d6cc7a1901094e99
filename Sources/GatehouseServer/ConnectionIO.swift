import GatehouseBase
import GatehousePosix

/// Answer bytes queued for a connection's socket, written as the kernel takes them. Shared by
/// the line and the HTTP connections; confined to their loop's thread like them.
struct ConnectionOutput {
    /// Queued bytes; those before `sent` are written already.
    var bytes: [UInt8] = []
    private(set) var sent = 0

    var pending: Int { bytes.count - sent }
    var hasPending: Bool { sent < bytes.count }

    /// Writes what the socket takes now. Once everything is out the buffer is emptied, keeping
    /// its room unless it grew past 256 KiB (one burst does not pin memory to an idle connection).
    mutating func write(to socket: Socket) throws(SystemError) {
        while sent < bytes.count {
            let offset = sent
            let written = bytes.withUnsafeBytes { raw in
                Result { () throws(SystemError) in try socket.write(UnsafeRawBufferPointer(rebasing: raw[offset...])) }
            }
            guard case .processed(let count) = try written.get() else { return }
            sent += count
        }
        bytes.removeAll(keepingCapacity: bytes.capacity <= 256 * 1024)
        sent = 0
    }

    mutating func discard() {
        bytes = []
        sent = 0
    }
}

/// The events a connection has asked its loop for: changed only when they differ, since each
/// change is an `epoll_ctl`.
struct ConnectionInterest {
    private(set) var events: IOEvents = []

    /// Registers the connection with its loop, reading.
    mutating func register(_ socket: Socket, on loop: EventLoop, handler: any IOEventHandler) throws(SystemError) {
        events = .readable
        try loop.register(socket.descriptor, interest: events, handler: handler)
    }

    mutating func set(reading: Bool, writing: Bool, _ socket: Socket, on loop: EventLoop) {
        var wanted: IOEvents = []
        if reading { wanted.insert(.readable) }
        if writing { wanted.insert(.writable) }
        guard wanted != events else { return }
        events = wanted
        loop.setInterest(socket.descriptor, wanted)
    }
}

/// What a connection does once its last answer is out: the write side is shut and input is read
/// and dropped until the peer closes or a second passes. Closing with unread input would make
/// the kernel send a reset, which can destroy the last answers before the peer reads them.
struct ConnectionLinger {
    private(set) var deadline: UInt64?
    static let nanoseconds: UInt64 = 1_000_000_000

    var isLingering: Bool { deadline != nil }

    /// Starts lingering (once), reading only; answers false when the peer is gone already and
    /// the connection should close now.
    mutating func start(socket: Socket, loop: EventLoop, interest: inout ConnectionInterest, now: UInt64) -> Bool {
        guard deadline == nil else { return true }
        socket.shutdownWrite()
        deadline = now + Self.nanoseconds
        interest.set(reading: true, writing: false, socket, on: loop)
        return Self.discardInput(socket)
    }

    func isOver(now: UInt64) -> Bool { deadline.map { now > $0 } ?? false }

    /// Reads and drops what has arrived (a bounded amount per call); false once the peer has
    /// closed or the socket failed.
    static func discardInput(_ socket: Socket) -> Bool {
        var scratch = [UInt8](repeating: 0, count: 64 * 1024)
        for _ in 0..<16 {
            let result = try? scratch.withUnsafeMutableBytes { buffer throws(SystemError) in try socket.read(into: buffer) }
            switch result {
            case .processed(let count) where count > 0: continue
            case .wouldBlock: return true
            default: return false
            }
        }
        return true
    }
}

/// A connection's share of the server's buffered bytes (``ServerCore/bufferedBytes``).
struct BufferedShare {
    private(set) var bytes = 0

    /// Moves the share to `now`; answers whether the server is over its budget after a growth.
    mutating func update(to now: Int, core: ServerCore) -> Bool {
        guard now != bytes else { return false }
        let delta = now - bytes
        bytes = now
        return core.accountBuffered(delta) && delta > 0
    }
}

/// What one read(2) of a connection's socket brought.
enum ConnectionRead {
    case wouldBlock
    case endOfFile
    /// `drained`: the read did not fill the room it was offered, so the socket has nothing more
    /// now (epoll, level-triggered, reports it again when more arrives: asking once more would
    /// only cost a read that answers EAGAIN, one syscall a request at pipeline 1).
    case bytes(drained: Bool)
    case failed(SystemError)

    /// Room asked of the buffer for each read: enough for many pipelined requests, small enough
    /// that ten thousand mostly idle connections do not pin much memory.
    static let roomBytes = 8 * 1024

    /// Reads once from `socket` straight into a buffer's free tail: `fill` ensures at least the
    /// room it is given, calls its body with the tail, and keeps the bytes the body says it
    /// wrote (`LineFramer` and `HTTPRequestParser` both work this way).
    static func once(from socket: Socket, into fill: (Int, (UnsafeMutableRawBufferPointer) -> Int) -> Void) -> ConnectionRead {
        var outcome = ConnectionRead.wouldBlock
        fill(roomBytes) { buffer in
            do throws(SystemError) {
                switch try socket.read(into: buffer) {
                case .wouldBlock:
                    return 0
                case .processed(0):
                    outcome = .endOfFile
                    return 0
                case .processed(let count):
                    outcome = .bytes(drained: count < buffer.count)
                    return count
                }
            } catch {
                outcome = .failed(error)
                return 0
            }
        }
        return outcome
    }
}
