public import GatehouseCore
public import GatehouseStorage

/// The redemption links' emails, inside the project's actor (DESIGN.md, "Web purchases and
/// redemption links": sent by the outbox, so a mail server that is down delays an email and
/// loses nothing). The server's mail pump takes what is due and hands back how each attempt
/// ended; it shares the outbox's listener (``listenForDeliveries(_:)``) and hook.
extension Project {
    /// Hands out the emails due by the project's clock now whose change is durable (at most
    /// ``MailQueue/inFlightMax`` in flight), and when the next falls due. `publicURL` (the
    /// server's `--public-url`) is the base of each email's https link.
    public func takeDueMail(publicURL: String) -> (due: [DueMail], nextDueMs: Int64?) {
        guard !published.isDeleted else { return ([], nil) }
        let now = nowMs
        let durable = log.durableLSN
        return withMailQueue { queue, state in queue.take(from: state, nowMs: now, durableLSN: durable, publicURL: publicURL) }
    }

    /// Logs how email attempts ended, in one change (none when every outcome is stale), and
    /// answers the log position that covers them; `nil` when the log refused the change, and
    /// then those emails are due again as they were.
    public func settleMail(_ outcomes: [MailOutcome]) -> LSN? {
        mailQueue.release(outcomes)
        let now = nowMs
        let batch = peek { state in state.settleMail(outcomes, nowMs: now) }
        guard !batch.changes.isEmpty else { return lastCommittedLSN }
        do throws(GatehouseError) {
            return try commit(batch)
        } catch {
            withMailQueue { queue, state in queue.returnUnsettled(outcomes, in: state) }
            return nil
        }
    }

    /// The emails the project owes now, for the server's start-up log.
    public func owedMailCount() -> Int {
        peek { state in MailQueue.owedCount(in: state) }
    }
}
