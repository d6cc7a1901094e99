import GatehouseHTTP
import GatehouseOutbound
import Testing

/// The schedule of waits between attempts, as a pure function of the attempt, the answer's
/// `Retry-After`, the time spent and the jitter's draw.
@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(
        attemptsMax: 5, initialDelay: .milliseconds(100), delayMax: .milliseconds(400), retryAfterMax: .seconds(10),
        deadline: .seconds(30))

    func delay(after attempts: Int, retryAfter: Duration? = nil, elapsed: Duration = .zero, draw: Double) -> Duration? {
        policy.delay(afterAttempts: attempts, retryAfter: retryAfter, elapsed: elapsed, randomFraction: draw)
    }

    @Test func backoffDoublesUpToItsCap() {
        #expect((1...4).map { delay(after: $0, draw: 1) } == [100, 200, 400, 400].map { .milliseconds($0) })
    }

    @Test func jitterKeepsEachWaitInTheUpperHalfOfItsStep() {
        #expect((1...4).map { delay(after: $0, draw: 0) } == [50, 100, 200, 200].map { .milliseconds($0) })
        let middle = delay(after: 2, draw: 0.5)
        #expect(middle == .milliseconds(150))
    }

    @Test func retryAfterReplacesTheBackoffUpToItsCap() {
        #expect(delay(after: 1, retryAfter: .seconds(3), draw: 0.5) == .seconds(3))
        #expect(delay(after: 1, retryAfter: .seconds(3600), draw: 0.5) == .seconds(10))
        #expect(delay(after: 1, retryAfter: .zero, draw: 0.5) == .zero)
    }

    @Test func noWaitAfterTheLastAttempt() {
        #expect(delay(after: 4, draw: 0.5) != nil)
        #expect(delay(after: 5, draw: 0.5) == nil)
        #expect(RetryPolicy.once.delay(afterAttempts: 1, retryAfter: nil, elapsed: .zero, randomFraction: 0) == nil)
    }

    @Test func noWaitThatEndsPastTheDeadline() {
        #expect(delay(after: 1, elapsed: .milliseconds(29_900), draw: 0) == .milliseconds(50))
        #expect(delay(after: 1, elapsed: .milliseconds(29_960), draw: 0) == nil)
        #expect(delay(after: 1, retryAfter: .seconds(5), elapsed: .seconds(26), draw: 0) == nil)
    }

    @Test func retryableStatusesAre429AndEvery5xx() {
        #expect([429, 500, 502, 503, 504, 599].allSatisfy(RetryPolicy.isRetryableStatus))
        #expect(![200, 204, 301, 400, 401, 403, 404, 409, 428].contains(where: RetryPolicy.isRetryableStatus))
    }

    @Test(arguments: [
        ("3", Duration?.some(.seconds(3))), ("0", .some(.zero)), ("120", .some(.seconds(120))), ("", nil), ("-1", nil),
        (" 3", nil), ("3.5", nil), ("Wed, 21 Oct 2015 07:28:00 GMT", nil), ("99999999999999", nil),
    ])
    func retryAfterIsReadInSeconds(header: String, expected: Duration?) {
        let response = OutboundResponse(status: 429, headers: HTTPHeaders([(name: "retry-after", value: header)]))
        #expect(response.retryAfter == expected)
    }

    @Test func noRetryAfterHeaderIsNoRetryAfter() {
        #expect(OutboundResponse(status: 503).retryAfter == nil)
    }
}
