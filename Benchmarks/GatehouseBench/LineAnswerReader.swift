import GatehouseBase
#if canImport(Glibc)
import Glibc
#endif

/// Answers of the line protocol: newline-ended lines in one buffer, found with memchr and
/// classified without parsing (``AnswerLine``). Pushed lines (`watch`) answer no request and
/// are skipped.
struct LineAnswerReader: LoadAnswerReader {
    struct Answer: LoadAnswer {
        let line: UnsafeRawBufferPointer

        var isError: Bool {
            @inline(__always) get { AnswerLine.isError(line) }
        }

        var text: String { String(decoding: line, as: UTF8.self) }
    }

    private var buffer: UnsafeMutableRawBufferPointer
    private var count = 0
    /// Where the next line starts: the bytes before it are taken.
    private var offset = 0

    /// Grows when an answer is longer; small, because there may be thousands of connections.
    private static let initialBytes = 16 * 1024
    private static let maxBytes = 64 << 20

    init() {
        buffer = .allocate(byteCount: Self.initialBytes, alignment: 8)
    }

    mutating func deallocate() {
        buffer.deallocate()
    }

    /// One read(2) per readiness event, as lineload does.
    mutating func receive(from descriptor: Int32) -> LoadReceive {
        if count == buffer.count {
            guard buffer.count < Self.maxBytes else { return .failed("an answer is longer than \(Self.maxBytes >> 20) MiB") }
            grow()
        }
        while true {
            let read = Glibc.read(descriptor, buffer.baseAddress! + count, buffer.count - count)
            if read > 0 {
                count += read
                return .received
            }
            if read == 0 { return .failed("the server closed a load connection") }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .nothing
            case let code: return .failed("reading answers failed: \(SystemError("read", errno: code))")
            }
        }
    }

    @inline(__always)
    mutating func next() -> Answer? {
        let base = buffer.baseAddress!
        while offset < count, let newline = memchr(base + offset, Int32(UInt8(ascii: "\n")), count - offset) {
            let end = base.distance(to: newline)
            let line = UnsafeRawBufferPointer(start: base + offset, count: end - offset)
            offset = end + 1
            if !AnswerLine.isPush(line) { return Answer(line: line) }
        }
        return nil
    }

    mutating func discardTaken() {
        guard offset > 0 else { return }
        count -= offset
        if count > 0 { memmove(buffer.baseAddress!, buffer.baseAddress! + offset, count) }
        offset = 0
    }

    private mutating func grow() {
        let bigger = UnsafeMutableRawBufferPointer.allocate(byteCount: buffer.count * 2, alignment: 8)
        bigger.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        buffer.deallocate()
        buffer = bigger
    }
}
