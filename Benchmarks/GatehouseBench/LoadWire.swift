/// How a load connection writes its requests: ``RequestTemplate`` for a line,
/// ``HTTPRequestTemplate`` for HTTP.
protocol LoadRequestWriter: Sendable {
    /// The longest request ``write(counter:to:)`` writes.
    var requestBytesMax: Int { get }
    /// Writes the request for `counter` at `destination`, which has room for
    /// ``requestBytesMax``; answers the bytes written.
    func write(counter: Int, to destination: UnsafeMutableRawPointer) -> Int
}

/// How a load connection reads and frames its answers: ``LineAnswerReader`` splits lines,
/// ``HTTPAnswerReader`` hands the bytes to http_parser. Both answer in request order, as the
/// server does on either listener.
protocol LoadAnswerReader {
    associatedtype Answer: LoadAnswer

    /// One read(2) from `descriptor` into the reader's buffer: the loop is level-triggered, so
    /// anything left is reported again.
    mutating func receive(from descriptor: Int32) -> LoadReceive
    /// The next whole answer among the bytes received, or nil until more arrive. An answer is
    /// valid until the next call to ``receive(from:)``.
    mutating func next() throws(BenchFailure) -> Answer?
    /// Called after a batch of ``next()``: forgets what it has taken.
    mutating func discardTaken()
    /// Frees the buffer; the reader is not used again.
    mutating func deallocate()
}

protocol LoadAnswer {
    /// An error line (`"ok":false`) or an HTTP status of 400 or more.
    var isError: Bool { get }
    /// The answer as text, for a report: only asked for the first error.
    var text: String { get }
}

enum LoadReceive {
    case received
    /// Nothing to read now (or the buffer had no room and the reader failed).
    case nothing
    /// The connection is unusable: the peer closed it, or the read failed.
    case failed(String)
}
