import GatehouseBase
import GatehouseHTTP
import GatehouseOutbound
import GatehouseTesting
import Synchronization
import Testing

/// Attempts until a 2xx, a failure not worth another, or the policy gives up; waits on a clock
/// that does not really wait.
@Suite struct RetryingSenderTests {
    /// A server answering the statuses given, one a request, then 200 forever; and how many
    /// requests it has had.
    static func scriptedServer(_ statuses: [Int], delay: Duration) throws -> (LoopbackHTTPServer, @Sendable () -> Int) {
        let script = Mutex(statuses)
        let requests = Atomic<Int>(0)
        let server = try LoopbackHTTPServer { _ in
            requests.add(1, ordering: .relaxed)
            let status = script.withLock { $0.isEmpty ? 200 : $0.removeFirst() }
            return .respond(.json(status, Array(#"{"status":\#(status)}"#.utf8)), delay: delay)
        }
        return (server, { requests.load(ordering: .relaxed) })
    }

    func send(
        _ statuses: [Int], policy: RetryPolicy = RetryPolicy(), clock: any RetryClock = VirtualRetryClock(),
        isRetryable: @escaping @Sendable (OutboundResponse) -> Bool = { RetryPolicy.isRetryableStatus($0.status) },
        timeout: Duration = .seconds(5), delay: Duration = .zero
    ) async throws -> (Result<OutboundResponse, OutboundError>, requests: Int) {
        let (server, requests) = try Self.scriptedServer(statuses, delay: delay)
        defer { server.stop() }
        let client = OutboundHTTPClient()
        let sender = RetryingSender(client: client, policy: policy, clock: clock, random: SeededRandomSource(seed: 1))
        let result = await sender.send(OutboundRequest(url: server.baseURL + "/", timeout: timeout), isRetryable: isRetryable)
        await client.close()
        return (result, requests())
    }

    @Test func failuresWorthRetryingAreRetriedUntilA2xx() async throws {
        let clock = VirtualRetryClock()
        let (result, requests) = try await send([503, 500, 429], clock: clock)
        #expect(try result.get().status == 200)
        #expect(requests == 4)
        #expect(clock.sleeps.count == 3)
    }

    @Test func aStatusNotWorthRetryingFailsAtOnceWithTheAnswer() async throws {
        let clock = VirtualRetryClock()
        let (result, requests) = try await send([400], clock: clock)
        let error = try #require(result.failure)
        #expect(error.code == .httpStatus)
        #expect(error.response?.status == 400)
        #expect(error.message == #"HTTP 400: {"status":400}"#)
        #expect(requests == 1)
        #expect(clock.sleeps.isEmpty)
    }

    @Test func whenTheAttemptsRunOutTheLastFailureIsTheAnswer() async throws {
        let (result, requests) = try await send([502, 502, 502, 503], policy: RetryPolicy(attemptsMax: 3))
        #expect(result.failure?.response?.status == 502)
        #expect(requests == 3)
    }

    @Test func theCallerDecidesWhichStatusesAreWorthRetrying() async throws {
        let (result, requests) = try await send([404, 503], isRetryable: { $0.status == 404 })
        #expect(result.failure?.response?.status == 503)
        #expect(requests == 2)
    }

    @Test func anAttemptNeverOutlivesTheDeadline() async throws {
        // Without the cut, the attempt would wait out the slow answer and succeed.
        let policy = RetryPolicy(attemptsMax: 1, deadline: .milliseconds(200))
        let (result, _) = try await send([], policy: policy, timeout: .seconds(60), delay: .seconds(3))
        #expect(result.failure?.code == .timedOut, "\(result)")
    }

    @Test func aCancelledWaitEndsTheAttempts() async throws {
        let (result, requests) = try await send([503, 503], clock: CancelledClock())
        #expect(result.failure?.code == .cancelled)
        #expect(requests == 1)
    }

    struct CancelledClock: RetryClock {
        func now() -> Duration { .zero }
        func sleep(for duration: Duration) async throws { throw CancellationError() }
    }
}
