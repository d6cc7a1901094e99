/// What the connections of one generator loop measured.
struct LoadCounts: Sendable {
    var latencies = LatencyHistogram()
    /// Answers received inside the measured window.
    var requests = 0
    /// Of those, answers with `"ok":false`.
    var errors = 0
    /// Error answers during the warm-up: not in the figures, but still a failed run.
    var warmupErrors = 0
    var firstErrorAnswer: String?
    /// Requests still unanswered at the end after waiting ``stallNanoseconds``: the server
    /// stopped answering them, and the figures do not show it (they only count answers).
    var stalledRequests = 0
    /// Why a connection stopped before the end, if one did.
    var failure: String?

    static let stallNanoseconds: UInt64 = 2_000_000_000
}

/// The counts shared by the connections of one generator loop: one histogram per thread
/// rather than per connection keeps ten thousand connections from costing 600 MB of buckets.
/// Confined to the loop's thread like its connections (see ``LoadConnection``), and read by
/// the coordinator only after that thread has been joined.
final class LoadTally: @unchecked Sendable {
    var counts = LoadCounts()
}
