/// The values of the outbox (DESIGN.md, "Outbound delivery"): which event, to where, how it went.

/// A feed event's place: its change's sequence number and its index in that change. Orders as
/// the feed does.
public struct EventKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let cursor: UInt64
    public let index: UInt32

    public init(cursor: UInt64, index: UInt32) {
        self.cursor = cursor
        self.index = index
    }

    public init(_ event: Event) {
        self.init(cursor: event.cursor, index: event.index)
    }

    /// The key of an event id as ``Event/id`` spells it (`evt_<cursor>_<index>`); `nil` for
    /// any other text.
    public init?(eventID: String) {
        var text = Substring(eventID).utf8
        guard text.starts(with: "evt_".utf8) else { return nil }
        text.removeFirst(4)
        guard let separator = text.firstIndex(of: UInt8(ascii: "_")),
            let cursor = UInt64(String(decoding: text[..<separator], as: UTF8.self))
        else { return nil }
        guard let index = Event.index(inID: eventID, cursor: cursor) else { return nil }
        self.init(cursor: cursor, index: index)
    }

    /// `evt_<cursor>_<index>`, the event's id.
    public var eventID: String { Event.id(cursor: cursor, index: index) }
    public var description: String { eventID }

    public static func < (a: EventKey, b: EventKey) -> Bool {
        (a.cursor, a.index) < (b.cursor, b.index)
    }
}

/// Where a delivery goes: one of the config's webhooks, or OneSignal.
public enum OutboxTarget: Sendable, Hashable, Comparable, CustomStringConvertible {
    case webhook(String)
    case oneSignal

    /// The name ops use: the webhook's id, or `integrations.onesignal` (no webhook id holds a dot).
    public var name: String {
        switch self {
        case .webhook(let id): id
        case .oneSignal: Self.oneSignalName
        }
    }

    public static let oneSignalName = "integrations.onesignal"

    public init(name: String) {
        self = name == Self.oneSignalName ? .oneSignal : .webhook(name)
    }

    /// `webhook` or `push`: the `kind` label of the outbox metrics.
    public var kind: String {
        switch self {
        case .webhook: "webhook"
        case .oneSignal: "push"
        }
    }

    public var description: String { name }

    public static func < (a: OutboxTarget, b: OutboxTarget) -> Bool {
        switch (a, b) {
        case (.webhook(let x), .webhook(let y)): x < y
        case (.webhook, .oneSignal): true
        case (.oneSignal, _): false
        }
    }
}

/// What an event's delivered body says about the profile and the config, as they were when the
/// event happened. Taken once, when the event is recorded, and kept while the event is owed (and
/// with each failed delivery), so every attempt sends the same bytes whatever changed since.
public struct EventIdentity: Sendable, Equatable {
    /// RevenueCat's `app_user_id`: the customer user id, else the install id, else the profile id.
    public var appUserID: String
    /// RevenueCat's `original_app_user_id`: the install id the profile began with, else its id.
    public var originalAppUserID: String
    /// Every id of the profile: its id, its install id, its customer user id, and those of the
    /// profiles merged into it.
    public var aliases: [String]
    /// The entitlements the event's product unlocks, by the config of the time.
    public var entitlementIDs: [String]
    /// A currency event's currency name, by the config of the time.
    public var currencyName: String?
    /// A `TRANSFER`'s sides, as app user ids.
    public var transferredFrom: [String]
    public var transferredTo: [String]
    /// The customer user ids a push goes to: the profile's, and for a `TRANSFER` both sides'.
    public var pushTo: [String]

    public init(appUserID: String, originalAppUserID: String, aliases: [String], entitlementIDs: [String] = [],
                currencyName: String? = nil, transferredFrom: [String] = [], transferredTo: [String] = [], pushTo: [String] = [])
    {
        self.appUserID = appUserID
        self.originalAppUserID = originalAppUserID
        self.aliases = aliases
        self.entitlementIDs = entitlementIDs
        self.currencyName = currencyName
        self.transferredFrom = transferredFrom
        self.transferredTo = transferredTo
        self.pushTo = pushTo
    }

    /// An event about no profile (a `TEST`, a purchase no one owns yet).
    public static let nobody = EventIdentity(appUserID: "", originalAppUserID: "", aliases: [])
}

/// A delivery still owed: how many attempts it has had, and when the next is due.
public struct PendingDelivery: Sendable, Equatable {
    public var attempts: UInt16
    public var nextAttemptMs: Int64

    public init(attempts: UInt16, nextAttemptMs: Int64) {
        self.attempts = attempts
        self.nextAttemptMs = nextAttemptMs
    }
}

/// A delivery given up on: after its last scheduled attempt, or when its endpoint was disabled or
/// its event left the feed. `webhook.replay` can queue it again while its event is in the feed.
public struct FailedDelivery: Sendable, Equatable {
    public var event: EventKey
    public var atMs: Int64
    /// `attempts_exhausted`, `disabled`, `feed_overflow`.
    public var reason: String
    public var identity: EventIdentity

    public init(event: EventKey, atMs: Int64, reason: String, identity: EventIdentity) {
        self.event = event
        self.atMs = atMs
        self.reason = reason
        self.identity = identity
    }
}

/// One attempt, as `webhook.deliveries` lists it.
public struct DeliveryAttempt: Sendable, Equatable {
    public var event: EventKey
    /// 1 for the first attempt.
    public var attempt: UInt16
    public var atMs: Int64
    /// The answer's status; `nil` when none came (refused, timed out, connection lost).
    public var status: Int?
    public var latencyMs: Int64
    /// Why it failed, for people (never a secret); `nil` when delivered.
    public var error: String?

    public init(event: EventKey, attempt: UInt16, atMs: Int64, status: Int?, latencyMs: Int64, error: String?) {
        self.event = event
        self.attempt = attempt
        self.atMs = atMs
        self.status = status
        self.latencyMs = latencyMs
        self.error = error
    }
}

/// How one attempt ended, as the deliverer logs it (``ProjectState/Change/deliveriesSettled(_:)``).
public struct DeliveryOutcome: Sendable, Equatable {
    public enum Result: Sendable, Equatable {
        case delivered
        /// Failed; the next attempt is due at this time.
        case retry(atMs: Int64)
        /// Failed for the last time.
        case failed
        /// `410 Gone`: the endpoint is disabled.
        case gone
    }

    public var target: OutboxTarget
    public var attempt: DeliveryAttempt
    public var result: Result

    public init(target: OutboxTarget, attempt: DeliveryAttempt, result: Result) {
        self.target = target
        self.attempt = attempt
        self.result = result
    }
}

/// What an answer means for a delivery, before the schedule is applied.
public enum AttemptAnswer: Sendable, Equatable {
    /// A 2xx (and for OneSignal, no `errors`).
    case success
    /// `410 Gone`.
    case gone
    /// Anything else; `retryAfterMs` from the answer's `Retry-After`.
    case failure(retryAfterMs: Int64?)
}

/// The delivery schedule (DESIGN.md, "Outbound delivery"), as pure rules: the caller gives the
/// time and the random draw.
public enum DeliverySchedule {
    /// The waits before the 2nd … 8th attempts, before jitter.
    public static let retryDelaysMs: [Int64] = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]
    /// Attempts in all, the first included.
    public static var attemptsMax: Int { retryDelaysMs.count + 1 }
    /// Each wait is moved by up to this fraction either way.
    public static let jitter = 0.2
    /// The longest `Retry-After` honoured; a longer one is cut to this.
    public static let retryAfterMaxMs: Int64 = 36_000_000
    /// An endpoint whose every attempt has failed for this long is disabled.
    public static let disableAfterFailingMs: Int64 = 5 * 24 * 3_600_000
    /// How long an attempt may take; a 2xx must come within it.
    public static let attemptTimeoutMs: Int64 = 30_000
    /// Attempts in flight to one endpoint at most.
    public static let inFlightPerEndpointMax = 16
    /// Attempts `webhook.deliveries` remembers per endpoint.
    public static let recentAttemptsKept = 100

    /// What attempt number `attempt` (1 for the first) ending in `answer` at `nowMs` leaves the
    /// delivery: delivered, due again (the schedule's wait, jittered by `randomFraction` from
    /// `0..<1`, or a longer `Retry-After`), failed, or its endpoint gone.
    public static func result(afterAttempt attempt: Int, answer: AttemptAnswer, nowMs: Int64, randomFraction: Double)
        -> DeliveryOutcome.Result
    {
        precondition(attempt >= 1, "a result follows an attempt")
        switch answer {
        case .success: return .delivered
        case .gone: return .gone
        case .failure(let retryAfterMs):
            guard attempt < attemptsMax else { return .failed }
            let base = Double(retryDelaysMs[attempt - 1])
            let jittered = Int64((base * (1 - jitter + 2 * jitter * min(max(randomFraction, 0), 1))).rounded())
            let asked = min(max(retryAfterMs ?? 0, 0), retryAfterMaxMs)
            return .retry(atMs: nowMs + max(jittered, asked))
        }
    }
}
