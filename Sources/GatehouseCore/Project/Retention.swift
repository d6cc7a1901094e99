/// How long and how much a project keeps of what grows with its write rate, so its memory is
/// bounded whatever that rate (DESIGN.md, "Virtual currencies"; PROTOCOL.md, "The event feed").
///
/// A server setting (`gatehouse serve --feed-max-events`, `--history-per-currency`,
/// `--idempotency-hours`), not part of a state's stored form. `apply` forgets what falls out of
/// a window after every batch, and `currency.transact` takes a key whose window is over as new.
/// A server started with other limits applies them from the next change on; a replay applies
/// the limits of the server that replays.
public struct Retention: Sendable, Equatable {
    public static let hourMs: Int64 = 3_600_000
    public static let dayMs: Int64 = 24 * hourMs

    /// Events older than this are forgotten.
    public var feedAgeMs: Int64 = 7 * Self.dayMs
    /// At most this many events are kept, the newest.
    public var feedEventsMax = 10_000_000
    /// A profile keeps this many of its newest history entries in each currency.
    public var historyEntriesPerCurrency = 1_000
    /// A `currency.transact` idempotency key is remembered this long (Stripe keeps its keys a day).
    public var idempotencyMs: Int64 = 24 * Self.hourMs

    public init() {}

    public static let standard = Retention()
}
