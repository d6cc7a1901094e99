public import GatehouseBase
import CGatehouseLinux
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 host and port, as given by an operator (`127.0.0.1:7411`, `[::1]:7411`,
/// `localhost:7411`, `:7411` for every IPv4 interface).
public struct HostPort: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`; IPv6 hosts are written in brackets.
    public init?(parsing text: String) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portPart = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            if hostPart.contains(":") { return nil }
        }
        guard let port = UInt16(portPart) else { return nil }
        self.host = hostPart.isEmpty ? "0.0.0.0" : String(hostPart)
        self.port = port
    }

    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

/// A resolved socket address, as the kernel takes it.
public struct SocketAddress: Sendable {
    var storage: sockaddr_storage
    var length: socklen_t

    public var family: Int32 { Int32(storage.ss_family) }

    /// Resolves numerically when it can, else through `getaddrinfo` (so `localhost` works).
    public static func resolve(_ hostPort: HostPort) throws(SystemError) -> SocketAddress {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(hostPort.host, String(hostPort.port), &hints, &result)
        guard status == 0, let first = result else {
            throw SystemError("getaddrinfo(\(hostPort.host))", errno: status == EAI_SYSTEM ? errno : ENOENT)
        }
        defer { freeaddrinfo(result) }
        var address = SocketAddress(storage: sockaddr_storage(), length: first.pointee.ai_addrlen)
        withUnsafeMutableBytes(of: &address.storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen)))
        }
        return address
    }

    /// The port, in host byte order.
    public var port: UInt16 {
        withUnsafeBytes(of: storage) { raw in
            switch Int32(storage.ss_family) {
            case AF_INET: UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self))
            case AF_INET6: UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self))
            default: 0
            }
        }
    }

    /// The numeric host (`127.0.0.1`, `::1`).
    public var host: String {
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var copy = storage
        let status = withUnsafePointer(to: &copy) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                getnameinfo(address, length, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST)
            }
        }
        guard status == 0 else { return "?" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    public var hostPort: HostPort { HostPort(host: host, port: port) }
}
