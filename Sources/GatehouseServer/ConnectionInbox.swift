import GatehouseRuntime
import GatehouseStorage
import GatehouseWire

/// Runs one connection's deferred requests one after another, in the order they were read,
/// on the Swift concurrency pool. A task exists only while there is work: ten thousand idle
/// connections cost no tasks.
final class ConnectionInbox: Sendable {
    private let core: ServerCore
    private let mailbox = Mailbox<Job>()

    private enum Job {
        /// One op.
        case request(Request, Session, done: @Sendable (RunOutcome) -> Void)
        /// Work of a front end that runs several ops (``ServerCore/run(_:session:)``) for one
        /// request; it answers how to deliver what it made, and the log position that must be
        /// durable first.
        case work(@Sendable () async -> Delivery)
    }

    init(core: ServerCore) {
        self.core = core
    }

    func submit(_ request: Request, session: Session, done: @escaping @Sendable (RunOutcome) -> Void) {
        post(.request(request, session, done: done))
    }

    /// What a piece of work made: delivered once `durableAt` (if any) is durable.
    struct Delivery: Sendable {
        let durableAt: LSN?
        let deliver: @Sendable () -> Void
    }

    /// Runs `work` in its turn, after the requests and work submitted before it.
    func submit(work: @escaping @Sendable () async -> Delivery) {
        post(.work(work))
    }

    private func post(_ job: Job) {
        if mailbox.post(CollectionOfOne(job)) {
            Task { await self.drain() }
        }
    }

    /// Each request runs to its answer before the next starts, but the next does not wait for
    /// the first one's fsync: answers wait for durability on their own, so a pipelined batch of
    /// writes shares one group commit.
    private func drain() async {
        while let batch = mailbox.take() {
            for job in batch {
                switch job {
                case .request(let request, let session, let done):
                    let outcome = await core.run(request, session: session)
                    core.stats.inboxRequestRan()
                    whenDurable(outcome.durableAt) { done(outcome) }
                case .work(let work):
                    let delivery = await work()
                    core.stats.inboxRequestRan()
                    whenDurable(delivery.durableAt, delivery.deliver)
                }
            }
        }
    }

    private func whenDurable(_ position: LSN?, _ body: @escaping @Sendable () -> Void) {
        if let position { core.engine.log.whenDurable(position, body) } else { body() }
    }
}
