import Synchronization

/// Counters for `server.stats`, updated from every loop without locks.
final class ServerStats: Sendable {
    let startedNanoseconds: UInt64
    private let open = Atomic<Int>(0)
    private let accepted = Atomic<Int>(0)
    private let rejected = Atomic<Int>(0)
    private let requestCount = Atomic<Int>(0)
    private let lastSecondRequests = Atomic<Int>(0)
    private let requestsAtLastSample = Atomic<Int>(0)
    private let laneRoundCount = Atomic<Int>(0)
    private let laneStepCount = Atomic<Int>(0)
    private let inboxRunCount = Atomic<Int>(0)
    private let watchCount = Atomic<Int>(0)
    private let openHTTP = Atomic<Int>(0)

    init(startedNanoseconds: UInt64) {
        self.startedNanoseconds = startedNanoseconds
    }

    var openConnections: Int { open.load(ordering: .relaxed) }
    var acceptedConnections: Int { accepted.load(ordering: .relaxed) }
    var rejectedConnections: Int { rejected.load(ordering: .relaxed) }
    var requests: Int { requestCount.load(ordering: .relaxed) }
    /// Visits of project actors by their lanes, and the steps they ran (``ProjectLane``): how
    /// many requests share a visit.
    var laneRounds: Int { laneRoundCount.load(ordering: .relaxed) }
    var laneSteps: Int { laneStepCount.load(ordering: .relaxed) }
    /// Requests the connections' inboxes have run (``ConnectionInbox``).
    var inboxRuns: Int { inboxRunCount.load(ordering: .relaxed) }
    /// Watches held by every connection.
    var watches: Int { watchCount.load(ordering: .relaxed) }
    /// Of the open connections, those on the HTTP listener.
    var openHTTPConnections: Int { openHTTP.load(ordering: .relaxed) }
    /// Requests in the last whole second.
    var requestsPerSecond: Int { lastSecondRequests.load(ordering: .relaxed) }

    /// Counts an accepted connection and answers how many are open now, this one included.
    func connectionAccepted() -> Int {
        accepted.add(1, ordering: .relaxed)
        return open.add(1, ordering: .relaxed).newValue
    }

    /// A connection accepted over the limit, closed again at once.
    func connectionRejected() {
        rejected.add(1, ordering: .relaxed)
        open.subtract(1, ordering: .relaxed)
    }

    func connectionClosed() {
        open.subtract(1, ordering: .relaxed)
    }

    func watchesChanged(by delta: Int) {
        watchCount.add(delta, ordering: .relaxed)
    }

    func httpConnectionsChanged(by delta: Int) {
        openHTTP.add(delta, ordering: .relaxed)
    }

    func requestReceived() {
        requestCount.add(1, ordering: .relaxed)
    }

    func inboxRequestRan() {
        inboxRunCount.add(1, ordering: .relaxed)
    }

    func laneRoundRan(steps: Int) {
        laneRoundCount.add(1, ordering: .relaxed)
        laneStepCount.add(steps, ordering: .relaxed)
    }

    /// Called once a second.
    func sample() {
        let total = requestCount.load(ordering: .relaxed)
        let previous = requestsAtLastSample.exchange(total, ordering: .relaxed)
        lastSecondRequests.store(total - previous, ordering: .relaxed)
    }
}
