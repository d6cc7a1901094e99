/// When a failed request is tried again, and how long to wait first: the pure part of
/// ``RetryingSender``, a value with no clock of its own.
///
/// Waits grow exponentially from ``initialDelay`` up to ``delayMax``, with "equal jitter" (half
/// of each wait fixed, half drawn at random) so the callers a failure hit together do not come
/// back together. A `Retry-After` of seconds replaces the computed wait, up to
/// ``retryAfterMax``. There are at most ``attemptsMax`` attempts, and no wait that would end
/// past ``deadline``, counted from the first attempt's start.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included.
    public var attemptsMax: Int
    /// The wait before the second attempt, before jitter; each later one doubles.
    public var initialDelay: Duration
    /// The longest computed wait, before jitter.
    public var delayMax: Duration
    /// The longest `Retry-After` waited for; a longer one is cut to this.
    public var retryAfterMax: Duration
    /// How long all attempts and waits may take together; each attempt's timeout is cut to
    /// what is left of it.
    public var deadline: Duration

    public init(
        attemptsMax: Int = 4, initialDelay: Duration = .milliseconds(250), delayMax: Duration = .seconds(4),
        retryAfterMax: Duration = .seconds(10), deadline: Duration = .seconds(30)
    ) {
        precondition(attemptsMax >= 1, "at least one attempt")
        precondition(initialDelay >= .zero && delayMax >= initialDelay && retryAfterMax >= .zero, "waits are not negative")
        precondition(deadline > .zero, "a deadline is positive")
        self.attemptsMax = attemptsMax
        self.initialDelay = initialDelay
        self.delayMax = delayMax
        self.retryAfterMax = retryAfterMax
        self.deadline = deadline
    }

    /// One attempt, no retries.
    public static let once = RetryPolicy(attemptsMax: 1)

    /// Statuses worth another attempt: 429 (too many requests) and every 5xx.
    public static func isRetryableStatus(_ status: Int) -> Bool {
        status == 429 || (500...599).contains(status)
    }

    /// The wait before the next attempt once `attempts` have been made and the last failed in a
    /// way worth retrying; `nil` to give up.
    ///
    /// - Parameters:
    ///   - retryAfter: What the failed answer's `Retry-After` asked for, if anything.
    ///   - elapsed: Time since the first attempt started.
    ///   - randomFraction: A draw from `0..<1`, for the jitter.
    public func delay(afterAttempts attempts: Int, retryAfter: Duration?, elapsed: Duration, randomFraction: Double)
        -> Duration?
    {
        precondition(attempts >= 1, "a delay follows an attempt")
        guard attempts < attemptsMax else { return nil }
        let wait: Duration
        if let retryAfter {
            wait = min(max(retryAfter, .zero), retryAfterMax)
        } else {
            let exponential = min(delayMax, initialDelay * (1 << min(attempts - 1, 30)))
            wait = exponential / 2 + (exponential / 2) * min(max(randomFraction, 0), 1)
        }
        guard elapsed + wait < deadline else { return nil }
        return wait
    }
}
