import Synchronization

/// Work posted from many threads and drained, in the order posted, by one task that exists only
/// while there is work: the shape of a connection's inbox and of a project's lane. Whoever posts
/// to an idle mailbox is told to start the draining task; the task takes what has gathered until
/// nothing is left, and the mailbox is idle again.
final class Mailbox<Job: Sendable>: Sendable {
    private let state = Mutex(State())

    private struct State {
        var jobs: [Job] = []
        var running = false
    }

    /// Queues `jobs`; answers `true` when no task is draining, and the caller must start one.
    func post(_ jobs: some Sequence<Job>) -> Bool {
        state.withLock { state in
            state.jobs.append(contentsOf: jobs)
            if state.running { return false }
            state.running = true
            return true
        }
    }

    /// The oldest jobs, at most `limit` of them, or `nil` (and the mailbox is idle) when none are left.
    func take(atMost limit: Int = .max) -> [Job]? {
        state.withLock { state in
            if state.jobs.isEmpty {
                state.running = false
                return nil
            }
            if state.jobs.count <= limit {
                defer { state.jobs.removeAll(keepingCapacity: true) }
                return state.jobs
            }
            defer { state.jobs.removeFirst(limit) }
            return Array(state.jobs.prefix(limit))
        }
    }
}
