import Synchronization

/// Every outgoing HTTP(S) request of the server, through libcurl.
///
/// One client is one thread (`outbound-http`) running a libcurl multi handle: requests from any
/// task are handed to it and answered through continuations, so no thread of the concurrency
/// pool ever waits on the network. The thread starts with the first request: a server whose
/// projects never ask anything of the world runs none. Its connections are cached and reused
/// across requests to the same host (keep-alive, TLS sessions included). ``close()`` fails what
/// is still under way and releases every handle; dropping the client does the same without
/// waiting.
///
/// `send` makes one attempt and answers whatever status came; ``RetryingSender`` adds retries.
public final class OutboundHTTPClient: Sendable {
    private let connectionCacheSize: Int
    private let state = Mutex<State>(.idle)

    private enum State {
        case idle
        case running(CurlMultiThread)
        case closed
    }

    /// - Parameter connectionCacheSize: How many idle connections are kept for reuse.
    public init(connectionCacheSize: Int = 16) {
        precondition(connectionCacheSize > 0, "the connection cache needs room for one")
        self.connectionCacheSize = connectionCacheSize
    }

    deinit {
        if case .running(let thread) = state.withLock({ $0 }) { thread.requestClose() }
    }

    /// Sends `request` and waits for its answer. A cancelled task stops its transfer and gets
    /// ``OutboundError/Code/cancelled``.
    public func send(_ request: OutboundRequest) async -> Result<OutboundResponse, OutboundError> {
        let thread: CurlMultiThread? = state.withLock { state in
            switch state {
            case .idle:
                let started = CurlMultiThread(connectionCacheSize: connectionCacheSize)
                state = .running(started)
                return started
            case .running(let thread): return thread
            case .closed: return nil
            }
        }
        guard let thread else { return .failure(OutboundError(code: .closed, message: "the client is closed")) }
        return await thread.send(request)
    }

    /// Fails every request not yet answered with ``OutboundError/Code/closed`` (and every later
    /// one), and returns once the connections and handles are released.
    public func close() async {
        let previous = state.withLock { state in
            defer { state = .closed }
            return state
        }
        if case .running(let thread) = previous { await thread.close() }
    }
}
