import GatehousePosix

/// An HTTP/1.1 request with a body made from a ``RequestTemplate``: the head is fixed, the
/// body's `{n}` is filled in per request, and the `Content-Length` computed for each, since the
/// body's length varies with `{n}`'s digits.
struct HTTPRequestTemplate: LoadRequestWriter {
    /// Everything up to and including `Content-Length: ` (or the whole request, without a body).
    private let head: [UInt8]
    private let body: RequestTemplate?
    let requestBytesMax: Int

    private static let headEnd = Array("\r\n\r\n".utf8)

    /// `bearer` is sent as `Authorization: Bearer <bearer>`; the keys Gatehouse makes are
    /// letters, digits and underscores, so anything else here is refused rather than escaped.
    init(method: String, path: String, host: HostPort, bearer: String?, body: RequestTemplate?) throws(BenchFailure) {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\n"
        if let bearer {
            guard !bearer.isEmpty, bearer.utf8.allSatisfy(Self.isTokenByte) else {
                throw BenchFailure("a key for Authorization must be letters, digits, '_' or '-'")
            }
            text += "Authorization: Bearer \(bearer)\r\n"
        }
        if body != nil {
            text += "Content-Type: application/json\r\nContent-Length: "
        } else {
            text += "\r\n"
        }
        head = Array(text.utf8)
        self.body = body
        // The length takes at most 20 digits, like `{n}`.
        requestBytesMax = head.count + (body.map { 20 + Self.headEnd.count + $0.requestBytesMax } ?? 0)
    }

    @inline(__always)
    func write(counter: Int, to destination: UnsafeMutableRawPointer) -> Int {
        head.withUnsafeBytes { destination.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        guard let body else { return head.count }
        var written = head.count
        written += RequestTemplate.writeDigits(of: UInt64(body.byteCount(counter: counter)), to: destination + written)
        Self.headEnd.withUnsafeBytes { (destination + written).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        written += Self.headEnd.count
        return written + body.write(counter: counter, to: destination + written)
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }
}
