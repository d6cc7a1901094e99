public import GatehouseBase
#if canImport(Glibc)
import Glibc
#endif

/// A blocking client for a line protocol: write lines, read lines. For the CLI, the
/// benchmark's setup phase and tests; the server itself never blocks like this.
public final class LineClient {
    public let socket: Socket
    private var buffer: [UInt8] = []
    private var consumed = 0

    /// Connects to `address`; `timeoutMilliseconds` bounds each read (0: wait forever).
    public init(connectingTo address: HostPort, timeoutMilliseconds: Int = 0) throws(SystemError) {
        socket = try Socket.connect(to: SocketAddress.resolve(address))
        if timeoutMilliseconds > 0 { socket.setReceiveTimeout(milliseconds: timeoutMilliseconds) }
    }

    private var isClosed = false

    deinit {
        close()
    }

    /// Closes the socket (once: a descriptor number closed twice may by then belong to
    /// someone else in the process).
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        socket.close()
    }

    /// Sends `line` followed by `\n`.
    public func send(_ line: String) throws(SystemError) {
        try socket.writeAll(Array(line.utf8) + [UInt8(ascii: "\n")])
    }

    /// Sends raw bytes as they are.
    public func sendRaw(_ bytes: [UInt8]) throws(SystemError) {
        try socket.writeAll(bytes)
    }

    /// The next line without its `\n`, or `nil` when the server closed the connection.
    public func readLine() throws(SystemError) -> String? {
        guard let bytes = try readLineBytes() else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    public func readLineBytes() throws(SystemError) -> [UInt8]? {
        while true {
            if let newline = buffer[consumed...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[consumed..<newline])
                consumed = newline + 1
                if consumed > 65_536 {
                    buffer.removeFirst(consumed)
                    consumed = 0
                }
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = try blockingSyscall("read") {
                chunk.withUnsafeMutableBytes { Glibc.read(socket.descriptor, $0.baseAddress, $0.count) }
            }
            if count == 0 { return nil }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// Whether bytes have arrived that were not read as lines yet, without waiting for any.
    public func hasUnreadInput() -> Bool {
        if consumed < buffer.count { return true }
        var descriptor = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0 && descriptor.revents & Int16(POLLIN) != 0
    }

    /// Sends the end-of-file: the server answers what it has and then closes.
    public func finishSending() {
        socket.shutdownWrite()
    }
}
