import GatehouseBase
import GatehouseHTTP
#if canImport(Glibc)
import Glibc
#endif

/// Answers of the HTTP listener, framed by GatehouseHTTP's ``HTTPResponseParser`` (http_parser,
/// as the server's requests are): status, headers and a `Content-Length` body each. A status of
/// 400 or more is an error, as an `"ok":false` line is.
struct HTTPAnswerReader: LoadAnswerReader {
    struct Answer: LoadAnswer {
        let status: Int
        let body: [UInt8]

        var isError: Bool { status >= 400 }
        var text: String { "HTTP \(status) \(String(decoding: body, as: UTF8.self))" }
    }

    private var parser = HTTPResponseParser()

    /// As much as one read(2) asks for: pipelined answers of the bench's ops are far smaller.
    private static let readBytes = 16 * 1024
    /// Bytes received but not yet a whole answer; more means the server is not answering HTTP.
    private static let bufferedBytesMax = 64 << 20

    mutating func receive(from descriptor: Int32) -> LoadReceive {
        guard parser.bufferedByteCount < Self.bufferedBytesMax else {
            return .failed("more than \(Self.bufferedBytesMax >> 20) MiB arrived without a whole HTTP answer")
        }
        var code: Int32 = 0
        let read = parser.withUnsafeWritableTail(minimumCapacity: Self.readBytes) { tail in
            while true {
                let read = Glibc.read(descriptor, tail.baseAddress, tail.count)
                if read >= 0 { return read }
                code = errno
                if code != EINTR { return -1 }
            }
        }
        if read > 0 { return .received }
        if read == 0 { return .failed("the server closed a load connection") }
        if code == EAGAIN || code == EWOULDBLOCK { return .nothing }
        return .failed("reading answers failed: \(SystemError("read", errno: code))")
    }

    mutating func next() throws(BenchFailure) -> Answer? {
        switch parser.next() {
        case .needMoreData: nil
        case .response(let response): Answer(status: response.status, body: response.body)
        case .failure(let reason): throw BenchFailure("an HTTP answer did not parse: \(reason)")
        }
    }

    /// The parser forgets what it has parsed itself.
    mutating func discardTaken() {}

    mutating func deallocate() {}
}
