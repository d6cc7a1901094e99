public import GatehouseBase
import CGatehouseLinux
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP socket descriptor. It does not close itself: the owner (a connection, a listener)
/// decides when, because an event loop must unregister a descriptor before it is closed.
public struct Socket: Sendable, Hashable {
    public let descriptor: Int32

    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// A non-blocking listening socket with `SO_REUSEADDR`, bound to `address`.
    public static func listen(on address: SocketAddress, backlog: Int32 = 1024) throws(SystemError) -> Socket {
        let fd = try blockingSyscall("socket") {
            Glibc.socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        let socket = Socket(descriptor: fd)
        do {
            _ = cgh_setsockopt_int(fd, SOL_SOCKET, SO_REUSEADDR, 1)
            var storage = address.storage
            _ = try blockingSyscall("bind") {
                withUnsafePointer(to: &storage) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, address.length) }
                }
            }
            _ = try blockingSyscall("listen") { Glibc.listen(fd, backlog) }
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    /// A blocking client socket connected to `address` (for the CLI and tests).
    public static func connect(to address: SocketAddress) throws(SystemError) -> Socket {
        let fd = try blockingSyscall("socket") {
            Glibc.socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        let socket = Socket(descriptor: fd)
        var storage = address.storage
        do {
            _ = try blockingSyscall("connect") {
                withUnsafePointer(to: &storage) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, address.length) }
                }
            }
        } catch {
            socket.close()
            throw error
        }
        socket.setNoDelay()
        return socket
    }

    /// Accepts one pending connection as a non-blocking socket.
    public func accept() throws(SystemError) -> IOResult<Socket> {
        switch try syscall("accept4", { cgh_accept_nonblocking(descriptor) }) {
        case .processed(let fd):
            let socket = Socket(descriptor: fd)
            socket.setNoDelay()
            return .processed(socket)
        case .wouldBlock:
            return .wouldBlock
        }
    }

    /// Reads into `buffer`; `.processed(0)` means the peer closed its side.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        try syscall("read") { Glibc.read(descriptor, buffer.baseAddress, buffer.count) }
    }

    /// Writes what it can of `bytes`. `MSG_NOSIGNAL`: a vanished peer is an `EPIPE` error, never a signal.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        try syscall("send") { Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Writes all of `bytes` on a blocking socket.
    public func writeAll(_ bytes: [UInt8]) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let start = offset
            let written = try blockingSyscall("send") {
                bytes.withUnsafeBytes { raw in
                    Glibc.send(descriptor, raw.baseAddress! + start, raw.count - start, Int32(MSG_NOSIGNAL))
                }
            }
            offset += written
        }
    }

    /// The address the socket is bound to (the real port after binding port 0).
    public func localAddress() throws(SystemError) -> SocketAddress {
        var address = SocketAddress(storage: sockaddr_storage(), length: socklen_t(MemoryLayout<sockaddr_storage>.size))
        _ = try blockingSyscall("getsockname") {
            withUnsafeMutablePointer(to: &address.storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &address.length) }
            }
        }
        return address
    }

    /// Makes reads and writes return `.wouldBlock` instead of waiting (clients that test backpressure).
    public func setNonBlocking() {
        _ = cgh_set_nonblocking(descriptor)
    }

    public func setNoDelay() {
        _ = cgh_setsockopt_int(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
    }

    /// Sets the receive timeout of a blocking socket (clients only).
    public func setReceiveTimeout(milliseconds: Int) {
        var value = timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Stops further sends; the peer reads end-of-file once the queued bytes are through.
    public func shutdownWrite() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_WR))
    }

    public func close() {
        // close(2) must not be retried on EINTR on Linux: the descriptor is gone either way.
        _ = Glibc.close(descriptor)
    }
}
