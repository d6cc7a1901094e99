import GatehouseBase
public import GatehouseHTTP
public import GatehousePosix
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 client for tests: sends requests (or any bytes) over one connection and reads
/// the answers with `http_parser`, on a thread of its own like ``TestClient``.
public final class TestHTTPClient: @unchecked Sendable {
    public let socket: Socket
    private let worker = ClientThread()
    private var parser = HTTPResponseParser()
    private var closedByServer = false
    private var isClosed = false

    public init(connectingTo address: HostPort, timeoutMilliseconds: Int = 60_000) throws {
        socket = try Socket.connect(to: SocketAddress.resolve(address))
        socket.setReceiveTimeout(milliseconds: timeoutMilliseconds)
    }

    deinit {
        if !isClosed { socket.close() }
        worker.stop()
    }

    /// Sends bytes exactly as given.
    public func send(_ bytes: [UInt8]) async throws {
        try await onThread { try self.socket.writeAll(bytes) }
    }

    public func send(_ text: String) async throws {
        try await send(Array(text.utf8))
    }

    /// Sends one request with `Host`, and `Content-Length` when there is a body.
    public func send(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) async throws {
        let bytes = Self.requestBytes(method, target, headers: headers, body: body)
        try await onThread {
            // The answer to a HEAD has headers only, whatever its Content-Length says.
            if method == "HEAD" { self.parser.expectHead() }
            try self.socket.writeAll(bytes)
        }
    }

    public static func requestBytes(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [])
        -> [UInt8]
    {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: gatehouse.test\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { text += "Content-Length: \(body.count)\r\n" }
        text += "\r\n"
        return Array(text.utf8) + body
    }

    /// Sends a request and reads its response.
    public func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [])
        async throws -> HTTPParsedResponse
    {
        try await send(method, target, headers: headers, body: body)
        guard let response = try await readResponse() else { throw TestClientError.closed }
        return response
    }

    public func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: String) async throws
        -> HTTPParsedResponse
    {
        try await request(method, target, headers: headers, body: Array(body.utf8))
    }

    /// The next response, or `nil` once the server closed the connection without one.
    public func readResponse() async throws -> HTTPParsedResponse? {
        try await onThread { try self.nextResponse() }
    }

    /// Whether the server has closed the connection (reads what is left until it has; answers
    /// `false` if it is still open when the read times out).
    public func serverClosed() async throws -> Bool {
        try await onThread {
            while !self.closedByServer {
                guard (try? self.readMore()) != nil else { return false }
            }
            return true
        }
    }

    /// Whether bytes have arrived that were not read as responses, without waiting for any:
    /// for a test that an answer is held back.
    public func hasUnreadInput() async throws -> Bool {
        try await onThread {
            var descriptor = pollfd(fd: self.socket.descriptor, events: Int16(POLLIN), revents: 0)
            return poll(&descriptor, 1, 0) > 0 && descriptor.revents & Int16(POLLIN) != 0
        }
    }

    public func close() async {
        await withCheckedContinuation { continuation in
            worker.async {
                if !self.isClosed {
                    self.isClosed = true
                    self.socket.close()
                }
                continuation.resume()
            }
        }
    }

    private func nextResponse() throws -> HTTPParsedResponse? {
        while true {
            switch parser.next() {
            case .response(let response): return response
            case .failure(let reason): throw TestHTTPClientError.unparseable(reason)
            case .needMoreData:
                if closedByServer { return parser.finish() }
                try readMore()
            }
        }
    }

    private func readMore() throws {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = try blockingSyscall("read") {
            chunk.withUnsafeMutableBytes { Glibc.read(socket.descriptor, $0.baseAddress, $0.count) }
        }
        if count == 0 { closedByServer = true } else { parser.append(Array(chunk[..<count])) }
    }

    private func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            worker.async { continuation.resume(with: Result { try body() }) }
        }
    }
}

public enum TestHTTPClientError: Error {
    case unparseable(String)
}
