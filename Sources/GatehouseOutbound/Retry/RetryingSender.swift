public import GatehouseBase

/// Sends a request through an ``OutboundHTTPClient`` until it gets a 2xx answer, a failure not
/// worth retrying, or its ``RetryPolicy`` gives up.
///
/// Retried: the statuses `isRetryable` names (by default 429 and 5xx), and failures that may
/// pass (``OutboundError/isTransient``: cannot connect, timed out, connection lost). Never
/// retried: other statuses, a TLS failure, a response over the limit, an invalid request.
public struct RetryingSender: Sendable {
    public let client: OutboundHTTPClient
    public let policy: RetryPolicy
    private let clock: any RetryClock
    private let random: any RandomSource
    private let logger: Logger

    /// - Parameter logger: Each retry is logged (`outbound.retry`) with the host, the attempt,
    ///   the wait and why; never the URL's path or query, headers or bodies.
    public init(
        client: OutboundHTTPClient, policy: RetryPolicy = RetryPolicy(), clock: any RetryClock = SystemRetryClock(),
        random: any RandomSource = SystemRandomSource(), logger: Logger = .disabled
    ) {
        self.client = client
        self.policy = policy
        self.clock = clock
        self.random = random
        self.logger = logger
    }

    /// The 2xx answer, or the last failure: a status other than 2xx is
    /// ``OutboundError/Code/httpStatus`` carrying the response.
    public func send(
        _ request: OutboundRequest,
        isRetryable: @Sendable (OutboundResponse) -> Bool = { RetryPolicy.isRetryableStatus($0.status) }
    ) async -> Result<OutboundResponse, OutboundError> {
        let start = clock.now()
        var attempts = 0
        while true {
            attempts += 1
            let failure: OutboundError
            let retryable: Bool
            switch await client.send(request.cut(toRemaining: policy.deadline - (clock.now() - start))) {
            case .success(let response) where response.isSuccess:
                return .success(response)
            case .success(let response):
                failure = .httpStatus(response)
                retryable = isRetryable(response)
            case .failure(let error):
                failure = error
                retryable = error.isTransient
            }
            guard retryable,
                let wait = policy.delay(
                    afterAttempts: attempts, retryAfter: failure.response?.retryAfter, elapsed: clock.now() - start,
                    randomFraction: randomFraction())
            else { return .failure(failure) }
            logger.info(
                "outbound.retry",
                metadata: [
                    "host": "\(request.host)", "attempt": .init(attempts), "wait_ms": .init(wait.wholeMilliseconds),
                    "error": "\(failure.code.rawValue)", "status": .init(failure.response?.status ?? 0),
                ])
            do {
                try await clock.sleep(for: wait)
            } catch {
                return .failure(OutboundError(code: .cancelled, message: "cancelled while waiting to retry (\(failure))"))
            }
        }
    }

    private func randomFraction() -> Double {
        Double(random.randomUInt64() >> 11) / Double(UInt64(1) << 53)
    }
}

extension OutboundRequest {
    /// This request with its timeouts no longer than `remaining`.
    fileprivate func cut(toRemaining remaining: Duration) -> OutboundRequest {
        var cut = self
        cut.timeout = max(.milliseconds(1), min(timeout, remaining))
        cut.connectTimeout = min(connectTimeout, cut.timeout)
        return cut
    }

    /// The URL's host (and port), for logs: without the path and query, or a user and
    /// password before the host.
    fileprivate var host: Substring {
        let afterScheme = url.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false).last ?? url[...]
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return authority.split(separator: "@", omittingEmptySubsequences: false).last ?? authority
    }
}
