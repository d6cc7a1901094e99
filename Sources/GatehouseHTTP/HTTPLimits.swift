/// The bounds a request must keep (HTTP.md, "Transport"); each refusal closes the connection
/// after its answer.
public struct HTTPLimits: Sendable {
    /// The request line and the headers, with their CRLFs and the empty line that ends them;
    /// over it is 431.
    public var headerBytesMax = 16 * 1024
    /// The body after de-chunking; over it is 413, known at the headers for a Content-Length and
    /// at the chunk that passes it for a chunked body.
    public var bodyBytesMax = 1 << 20

    public init() {}
}
