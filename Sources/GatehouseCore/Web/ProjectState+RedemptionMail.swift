// The email of a redemption link (DESIGN.md, "Web purchases and redemption links" and
// "Outbound delivery"): the change that issues a link owes its email (``OwedMail``), the
// server's mail pump attempts it off the actor, and each attempt's outcome is settled here as the
// link's next state, on the schedule every outbound delivery follows (``DeliverySchedule``).

/// An email the runtime should schedule: the batch owed it (or made it due again) at `dueMs`.
public struct ScheduledMail: Sendable, Equatable {
    public var purchase: PurchaseKey
    /// The link generation whose email it is.
    public var generation: UInt32
    public var dueMs: Int64

    public init(purchase: PurchaseKey, generation: UInt32, dueMs: Int64) {
        self.purchase = purchase
        self.generation = generation
        self.dueMs = dueMs
    }
}

/// What an attempt at an email came to, before the schedule is applied.
public enum MailAnswer: Sendable, Equatable {
    /// The mail server took the message.
    case sent
    /// It did not. `permanent`: this message will never be taken (the server refused the
    /// recipient, or the address is not one), so trying again is pointless.
    case failure(permanent: Bool)
}

/// How one attempt at a purchase's email ended, as the mail pump reports it
/// (``ProjectState/settleMail(_:nowMs:)``).
public struct MailOutcome: Sendable, Equatable {
    public enum Result: Sendable, Equatable {
        case sent
        /// Failed; the next attempt is due at this time.
        case retry(atMs: Int64)
        /// Failed for good: a permanent failure, or the schedule's last attempt.
        case failed
    }

    public var purchase: PurchaseKey
    /// The link generation the email carried.
    public var generation: UInt32
    /// 1 for the first attempt.
    public var attempt: UInt16
    public var result: Result
    /// Why it failed, for people (a mail error's code and message, never an address); `nil` when sent.
    public var error: String?

    public init(purchase: PurchaseKey, generation: UInt32, attempt: UInt16, result: Result, error: String? = nil) {
        self.purchase = purchase
        self.generation = generation
        self.attempt = attempt
        self.result = result
        self.error = error
    }

    /// What attempt number `attempt` (1 for the first) ending in `answer` at `nowMs` leaves the
    /// email: sent, failed at once when the failure is permanent, else due again on the delivery
    /// schedule (its wait jittered by `randomFraction` from `0..<1`) until its last attempt.
    public static func result(afterAttempt attempt: Int, answer: MailAnswer, nowMs: Int64, randomFraction: Double) -> Result {
        switch answer {
        case .sent:
            return .sent
        case .failure(permanent: true):
            return .failed
        case .failure(permanent: false):
            let scheduled = DeliverySchedule.result(afterAttempt: attempt, answer: .failure(retryAfterMs: nil), nowMs: nowMs,
                                                    randomFraction: randomFraction)
            guard case .retry(let atMs) = scheduled else { return .failed }
            return .retry(atMs: atMs)
        }
    }
}

extension ProjectState {
    /// Email attempts' outcomes as the links' next states, to log: sent or failed, the link owes
    /// no email any more; a retry counts the attempt, keeps its error and is due again then.
    /// An outcome that no longer matches the email owed (the link is gone or redeemed, a newer
    /// generation replaced it, or the email owed is another attempt's) is ignored, so a batch
    /// may hold no change at all.
    public func settleMail(_ outcomes: [MailOutcome], nowMs: Int64) -> ChangeBatch {
        var settled: [PurchaseKey: RedemptionLink] = [:]
        var order: [PurchaseKey] = []
        for outcome in outcomes {
            guard var link = settled[outcome.purchase] ?? web.links[outcome.purchase], link.redeemedBy == nil,
                link.generation == outcome.generation, var mail = link.mail, Int(mail.attempts) + 1 == Int(outcome.attempt)
            else { continue }
            switch outcome.result {
            case .sent, .failed:
                link.mail = nil
            case .retry(let atMs):
                mail.attempts += 1
                mail.nextAttemptMs = atMs
                mail.lastError = outcome.error
                link.mail = mail
            }
            if settled.updateValue(link, forKey: outcome.purchase) == nil { order.append(outcome.purchase) }
        }
        let changes = order.compactMap { key in settled[key].map { Change.redemptionLinkStored(key, $0) } }
        return ChangeBatch(changes, atMs: nowMs)
    }

    /// The address the email of `key`'s link goes to: its web profile's `$email`, if it still has one.
    public func mailAddress(of key: PurchaseKey) -> String? {
        web.links[key].flatMap { email(of: $0.webProfile) }
    }
}
