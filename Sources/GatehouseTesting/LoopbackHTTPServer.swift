import GatehouseBase
public import GatehouseHTTP
import GatehousePosix
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What a ``LoopbackHTTPServer`` does with a request.
public enum LoopbackReply: Sendable {
    /// Answers, after `delay` (the wait ends early if the client goes away).
    case respond(HTTPResponse, delay: Duration = .zero)
    /// Writes these bytes as they are (a response the encoder would not write), then closes.
    case raw([UInt8])
    /// Closes the connection without a word.
    case drop

    public static func json(_ status: Int, _ text: String, headers: [(name: String, value: String)] = []) -> LoopbackReply {
        .respond(.json(status, Array(text.utf8), headers: headers))
    }
}

/// A small HTTP/1.1 server on 127.0.0.1 for tests of outgoing requests: the project's own request
/// parser and response encoder over plain blocking sockets, one thread to accept and one per
/// connection, never the concurrency pool. Keep-alive is honoured, so a test can count the
/// connections a client opened.
public final class LoopbackHTTPServer: Sendable {
    public typealias Handler = @Sendable (HTTPRequest) -> LoopbackReply

    public let port: UInt16
    private let listener: Socket
    private let wakePipe: (read: Int32, write: Int32)
    private let handler: Handler
    private let state = Mutex(State())

    private struct State {
        var stopped = false
        var open: Set<Int32> = []
        var accepted = 0
    }

    public init(handler: @escaping Handler) throws {
        listener = try Socket.listen(on: SocketAddress.resolve(HostPort(host: "127.0.0.1", port: 0)))
        port = try listener.localAddress().port
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SystemError("pipe", errno: errno) }
        wakePipe = (fds[0], fds[1])
        self.handler = handler
        OSThread.detached(named: "fake-accept") { self.acceptLoop() }
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Connections accepted so far.
    public var acceptedConnections: Int { state.withLock { $0.accepted } }

    /// Stops accepting and ends every open connection; the threads exit on their own.
    public func stop() {
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            for descriptor in state.open { Glibc.shutdown(descriptor, Int32(SHUT_RDWR)) }
        }
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
    }

    private func acceptLoop() {
        defer {
            listener.close()
            Glibc.close(wakePipe.read)
            Glibc.close(wakePipe.write)
        }
        while true {
            var fds = [pollfd(fd: listener.descriptor, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, -1) >= 0 || errno == EINTR else { return }
            if fds[1].revents != 0 { return }
            guard case .processed(let socket)? = try? listener.accept() else { continue }
            let admitted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.open.insert(socket.descriptor)
                state.accepted += 1
                return true
            }
            guard admitted else {
                socket.close()
                return
            }
            _ = fcntl(socket.descriptor, F_SETFL, fcntl(socket.descriptor, F_GETFL) & ~O_NONBLOCK)
            OSThread.detached(named: "fake-conn") { self.serve(socket) }
        }
    }

    private func serve(_ socket: Socket) {
        defer {
            state.withLock { _ = $0.open.remove(socket.descriptor) }
            socket.close()
        }
        var parser = HTTPRequestParser()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(socket.descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            parser.append(Array(buffer[..<count]))
            while true {
                switch parser.next() {
                case .needMoreData:
                    break
                case .failure(let error):
                    answer(HTTPResponse.text(error.status, error.reason), to: socket, keepAlive: false)
                    return
                case .request(let request):
                    guard answer(request, on: socket) else { return }
                    continue
                }
                break
            }
        }
    }

    /// Whether the connection stays open.
    private func answer(_ request: HTTPRequest, on socket: Socket) -> Bool {
        switch handler(request) {
        case .drop:
            return false
        case .raw(let bytes):
            try? socket.writeAll(bytes)
            return false
        case .respond(let response, let delay):
            if delay > .zero, !wait(delay, on: socket) { return false }
            answer(response, to: socket, keepAlive: request.keepAlive)
            return request.keepAlive
        }
    }

    private func answer(_ response: HTTPResponse, to socket: Socket, keepAlive: Bool) {
        var bytes: [UInt8] = []
        HTTPResponseEncoder.encode(
            response, requestID: "fake", date: HTTPDate.format(unixSeconds: 0), keepAlive: keepAlive,
            requestVersionMinor: 1, headOnly: false, into: &bytes)
        try? socket.writeAll(bytes)
    }

    /// Waits `delay` unless the peer closes (or the server stops) first; whether it waited.
    private func wait(_ delay: Duration, on socket: Socket) -> Bool {
        var descriptor = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, Int32(delay.wholeMilliseconds)) == 0
    }
}
