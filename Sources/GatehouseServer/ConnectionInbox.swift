import GatehouseRuntime
import GatehouseStorage
import GatehouseWire

/// Runs one connection's deferred requests one after another, in the order they were read,
/// on the Swift concurrency pool. A task exists only while there is work: ten thousand idle
/// connections cost no tasks.
final class ConnectionInbox: Sendable {
    private let core: ServerCore
    private let mailbox = Mailbox<Job>()

    private struct Job {
        let request: Request
        let session: Session
        let done: @Sendable (RunOutcome) -> Void
    }

    init(core: ServerCore) {
        self.core = core
    }

    func submit(_ request: Request, session: Session, done: @escaping @Sendable (RunOutcome) -> Void) {
        if mailbox.post(CollectionOfOne(Job(request: request, session: session, done: done))) {
            Task { await self.drain() }
        }
    }

    /// Each request runs to its answer before the next starts, but the next does not wait for
    /// the first one's fsync: answers wait for durability on their own, so a pipelined batch of
    /// writes shares one group commit.
    private func drain() async {
        while let batch = mailbox.take() {
            for job in batch {
                let outcome = await core.run(job.request, session: job.session)
                core.stats.inboxRequestRan()
                if let durableAt = outcome.durableAt {
                    core.engine.log.whenDurable(durableAt) { job.done(outcome) }
                } else {
                    job.done(outcome)
                }
            }
        }
    }
}
