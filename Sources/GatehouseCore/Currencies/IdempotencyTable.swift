/// The idempotency keys `currency.transact` answered, with their answers, in a ``KeyTimeline``:
/// the records in the order they were remembered (the order they are forgotten in), keys and
/// reasons in its arena, found through its index (cheap hashing, no rehash on growth, `String`
/// equality). A `[String: IdempotencyRecord]` rehashed every key with SipHash at each doubling
/// and held about 180 bytes a key.
struct IdempotencyTable: Sendable {
    /// A record without its key and time (the timeline holds those).
    struct Stored: Sendable {
        let profile: ProfileID
        let amount: Int64
        let balance: Int64
        /// The reason's offset in the timeline's arena, or -1 for none.
        let reason: Int
        let transaction: TransactionName
        let currency: UInt16
    }

    private var timeline = KeyTimeline<Stored>()
    private var codes = CodeList()

    init() {}

    var count: Int { timeline.count }
    var isEmpty: Bool { timeline.isEmpty }

    /// The record remembered under `key`, if any.
    func record(forKey key: String) -> IdempotencyRecord? {
        timeline.position(of: key).map { record(at: $0) }
    }

    /// Asks for the bucket a lookup of `key` reads first (``Prefetch``).
    func prefetch(_ key: String) {
        timeline.prefetch(hash: KeyTimeline<Stored>.hash(key))
    }

    /// Every key with its record, in the order they were remembered.
    var all: [(key: String, record: IdempotencyRecord)] {
        timeline.positions.map { (timeline.key(at: $0), record(at: $0)) }
    }

    /// Every key with its record, in key order (as storage writes them).
    var sortedByKey: [(key: String, record: IdempotencyRecord)] {
        timeline.positionsByKey.map { (timeline.key(at: $0), record(at: $0)) }
    }

    private func record(at position: Int) -> IdempotencyRecord {
        let entry = timeline[position]
        let stored = entry.payload
        let text = timeline.text
        return IdempotencyRecord(
            profile: stored.profile, currency: codes[stored.currency], amount: stored.amount,
            reason: stored.reason < 0 ? nil : text.string(at: stored.reason), transactionID: stored.transaction.spelled(in: text),
            balance: stored.balance, atMs: entry.atMs)
    }

    // MARK: Changes

    /// Forgets the records older than `keptMs` before `record`, then remembers `record` under
    /// `key` (replacing what the key held, if it is still remembered). `transaction`, when the
    /// caller has it, is the record's transaction id already split into its numbers
    /// (``TransactionName``), so it is not parsed again.
    mutating func remember(_ key: String, _ record: IdempotencyRecord, transaction: TransactionName? = nil, keptMs: Int64) {
        // First: a key whose window is over is forgotten before it is used again, so it joins
        // the timeline as the newest entry instead of keeping its old place.
        forget(olderThan: keptMs, at: record.atMs)
        let currency = codes.intern(record.currency)
        let (position, added) = timeline.append(key, atMs: record.atMs) { text in
            Self.stored(record, currency: currency, transaction: transaction, text: &text)
        }
        guard !added else { return }
        timeline.replace(at: position, atMs: record.atMs) { text in
            Self.stored(record, currency: currency, transaction: transaction, text: &text)
        }
    }

    mutating func forget(olderThan keptMs: Int64, at nowMs: Int64) {
        timeline.forget(olderThan: keptMs, at: nowMs, moving: Self.move)
    }

    /// Entries the timeline has moved to compact itself (tests: the work a write costs).
    var entriesMoved: Int { timeline.entriesMoved }

    /// Fills an empty table with records storage held; `false` when a key is listed twice.
    /// Oldest first (then by key), the order they are forgotten in.
    mutating func restore(_ pairs: [(key: String, record: IdempotencyRecord)]) -> Bool {
        timeline.reserveCapacity(pairs.count)
        for (key, record) in pairs.sorted(by: { ($0.record.atMs, $0.key) < ($1.record.atMs, $1.key) }) {
            let currency = codes.intern(record.currency)
            let added = timeline.append(key, atMs: record.atMs) { text in
                Self.stored(record, currency: currency, transaction: nil, text: &text)
            }.added
            guard added else { return false }
        }
        return true
    }

    private static func stored(_ record: IdempotencyRecord, currency: UInt16, transaction: TransactionName?, text: inout TextArena)
        -> Stored
    {
        assert(transaction.map { $0.spelled(in: text) == record.transactionID } ?? true, "a transaction's numbers are its id's")
        return Stored(profile: record.profile, amount: record.amount, balance: record.balance,
                      reason: record.reason.map { text.append($0) } ?? -1,
                      transaction: transaction ?? TransactionName(record.transactionID, arena: &text),
                      currency: currency)
    }

    /// A record's own text, copied into the arena the timeline compacts into.
    private static func move(_ stored: Stored, from text: TextArena, to fresh: inout TextArena) -> Stored {
        Stored(profile: stored.profile, amount: stored.amount, balance: stored.balance,
               reason: stored.reason < 0 ? -1 : fresh.append(stored.reason, from: text),
               transaction: stored.transaction.index == TransactionName.spelled
                   ? TransactionName(sequence: UInt64(fresh.append(Int(stored.transaction.sequence), from: text)),
                                     index: TransactionName.spelled)
                   : stored.transaction,
               currency: stored.currency)
    }
}
