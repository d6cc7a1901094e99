// How the outbox follows the state's changes (DESIGN.md, "Outbound delivery").

extension ProjectState {
    /// Applies attempts' outcomes.
    mutating func settle(_ outcomes: [DeliveryOutcome]) {
        // Filled in below.
    }

    /// Owes `keys` to `target` again.
    mutating func queue(_ keys: [EventKey], for target: OutboxTarget, atMs: Int64) {
    }
}
