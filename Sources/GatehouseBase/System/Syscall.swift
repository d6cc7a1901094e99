#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call: the call's name and its `errno`.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    public let function: String
    public let errno: Int32

    public init(_ function: String, errno: Int32) {
        self.function = function
        self.errno = errno
    }

    public var description: String {
        "\(function) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

/// What a non-blocking call did: its result, or that it would have blocked.
public enum IOResult<T: Sendable>: Sendable {
    case processed(T)
    case wouldBlock
}

/// The one place that reads `errno`: retries `EINTR`, maps `EAGAIN` to `.wouldBlock`, throws
/// everything else. `EBADF` and `EFAULT` are programming errors and stop the process, because
/// carrying on after one means we may be writing into somebody else's file descriptor.
@inline(__always)
public func syscall<T: FixedWidthInteger & Sendable>(_ function: String, _ body: () -> T) throws(SystemError) -> IOResult<T> {
    while true {
        let result = body()
        if result >= 0 { return .processed(result) }
        let code = errno
        switch code {
        case EINTR: continue
        case EAGAIN, EWOULDBLOCK: return .wouldBlock
        case EBADF, EFAULT: preconditionFailure("\(function) was given a bad descriptor or address (errno \(code))")
        default: throw SystemError(function, errno: code)
        }
    }
}

/// Like ``syscall(_:_:)`` for calls that never return `EAGAIN` (blocking descriptors).
@inline(__always)
public func blockingSyscall<T: FixedWidthInteger & Sendable>(_ function: String, _ body: () -> T) throws(SystemError) -> T {
    switch try syscall(function, body) {
    case .processed(let value): return value
    case .wouldBlock: throw SystemError(function, errno: EAGAIN)
    }
}
