#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Writes one line per record to a file descriptor (stderr by default).
///
/// Each line is a single `write(2)` loop under a lock, so lines from concurrent loggers never
/// interleave. Writes are unbuffered: a crash must not swallow the lines that explain it.
/// A failed write drops the rest of that line; logging never throws or crashes the server.
public final class StreamLogHandler: LogHandler {
    public let format: LogFormat
    /// The lock guards the descriptor, so writers take turns per line. The handler does not
    /// own the descriptor and never closes it.
    private let fileDescriptor: Mutex<Int32>

    /// `fileDescriptor` defaults to 2, stderr (a literal because libc's `STDERR_FILENO` is
    /// imported internally and cannot appear in a public default argument).
    public init(format: LogFormat = .text, fileDescriptor: Int32 = 2) {
        self.format = format
        self.fileDescriptor = Mutex(fileDescriptor)
    }

    public func log(_ record: LogRecord) {
        var line = record.formatted(as: format)
        line += "\n"
        line.withUTF8 { bytes in
            fileDescriptor.withLock { descriptor in
                Self.writeAll(bytes, to: descriptor)
            }
        }
    }

    // Not the shared `syscall` wrapper: it treats EBADF as a programming error and stops the
    // process, but a closed stderr under a supervisor must cost log lines, not the server.
    private static func writeAll(_ bytes: UnsafeBufferPointer<UInt8>, to descriptor: Int32) {
        var remaining = UnsafeRawBufferPointer(bytes)
        while !remaining.isEmpty {
            let written = write(descriptor, remaining.baseAddress, remaining.count)
            if written > 0 {
                remaining = UnsafeRawBufferPointer(rebasing: remaining[written...])
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return  // EAGAIN on a non-blocking stderr, EPIPE, a full disk: drop the line
            }
        }
    }
}
