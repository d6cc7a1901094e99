/// The idempotency keys `currency.transact` answered, with their answers: the records lie in one
/// ``ChunkedArray`` (a snapshot's copy costs the next write one chunk) in the order they were
/// remembered (which is the order they are forgotten in, so the
/// forget order costs nothing more), keys and reasons in a ``TextArena``, found through a
/// ``TextKeyIndex`` (cheap hashing, no rehash on growth, `String` equality). A
/// `[String: IdempotencyRecord]` rehashed every key with SipHash at each doubling and held about
/// 180 bytes a key.
struct IdempotencyTable: Sendable {
    struct Stored: Sendable {
        let profile: ProfileID
        let amount: Int64
        let balance: Int64
        let atMs: Int64
        /// The key's offset in ``text``.
        let key: Int
        /// The reason's offset in ``text``, or -1.
        let reason: Int
        let transaction: TransactionName
        let currency: UInt16
    }

    /// Remembered records, oldest first from ``head``; those before it are forgotten.
    private var records = ChunkedArray<Stored>()
    private var head = 0
    private var index = TextKeyIndex()
    private var text = TextArena()
    private var codes = CodeList()

    init() {}

    var count: Int { records.count - head }
    var isEmpty: Bool { count == 0 }

    /// The record of `key`, if remembered.
    func record(forKey key: String) -> IdempotencyRecord? {
        var bytes = key
        let found = bytes.withUTF8 { utf8 in find(key, utf8, hash: TextKeyIndex.hash(key, utf8)).position }
        return found.map { record(at: $0) }
    }

    /// Asks for the bucket where a lookup of `key` starts (``Prefetch``).
    func prefetch(_ key: String) {
        var bytes = key
        bytes.withUTF8 { utf8 in index.prefetch(hash: TextKeyIndex.hash(key, utf8)) }
    }

    /// The live records oldest first with their keys (what the ledger was rebuilt from, in the
    /// order it forgets them).
    var all: [(key: String, record: IdempotencyRecord)] {
        (head..<records.count).map { (text.string(at: records[$0].key), record(at: $0)) }
    }

    /// The live records ordered by key as `String`s order (bytes, for ASCII keys).
    var sortedByKey: [(key: String, record: IdempotencyRecord)] {
        let text = text
        let records = records
        return text.sortedPositions(of: records[head...].map(\.key)).map { position in
            (text.string(at: records[head + position].key), record(at: head + position))
        }
    }

    private func record(at position: Int) -> IdempotencyRecord {
        let stored = records[position]
        return IdempotencyRecord(
            profile: stored.profile, currency: codes[stored.currency], amount: stored.amount,
            reason: stored.reason < 0 ? nil : text.string(at: stored.reason), transactionID: stored.transaction.spelled(in: text),
            balance: stored.balance, atMs: stored.atMs)
    }

    // MARK: Changes

    /// Remembers `record` under `key`, replacing what the key held (in place: it keeps its place
    /// in the forget order, and nothing is forgotten); a new key then forgets, oldest first,
    /// keys older than `keptMs` before `record.atMs`, stopping at the first that is not (a
    /// replaced one may be newer than its place). `transaction` is `record.transactionID` as its
    /// numbers when the caller has them (a rule that just made the id), so it is not parsed back.
    mutating func remember(_ key: String, _ record: IdempotencyRecord, transaction: TransactionName? = nil, keptMs: Int64) {
        var bytes = key
        let replaced = bytes.withUTF8 { utf8 -> Bool in
            let hash = TextKeyIndex.hash(key, utf8)
            let (position, bucket) = find(key, utf8, hash: hash)
            if let position {
                records[position] = stored(record, key: records[position].key, transaction: transaction)
                return true
            }
            index.insert(hash: hash, position: records.count, at: bucket)
            records.append(stored(record, key: text.append(utf8: utf8), transaction: transaction))
            return false
        }
        // Only a new key forgets (as the dictionary's map did).
        guard !replaced else { return }
        while head < records.count, record.atMs - records[head].atMs > keptMs {
            forgetOldest()
        }
        if head >= 1024, head * 2 >= records.count { compact() }
    }

    /// Rebuilt from stored parts: oldest first by time, then key (the order an old ledger kept).
    /// `false` when two records share a key.
    mutating func restore(_ pairs: [(key: String, record: IdempotencyRecord)]) -> Bool {
        records.reserveCapacity(pairs.count)
        index.reserveCapacity(pairs.count)
        for (key, record) in pairs.sorted(by: { ($0.record.atMs, $0.key) < ($1.record.atMs, $1.key) }) {
            var bytes = key
            let fresh = bytes.withUTF8 { utf8 -> Bool in
                let hash = TextKeyIndex.hash(key, utf8)
                let (position, bucket) = find(key, utf8, hash: hash)
                guard position == nil else { return false }
                index.insert(hash: hash, position: records.count, at: bucket)
                records.append(stored(record, key: text.append(utf8: utf8)))
                return true
            }
            guard fresh else { return false }
        }
        return true
    }

    private mutating func stored(_ record: IdempotencyRecord, key: Int, transaction: TransactionName? = nil) -> Stored {
        assert(transaction.map { $0.spelled(in: text) == record.transactionID } ?? true, "a transaction's numbers are its id's")
        return Stored(profile: record.profile, amount: record.amount, balance: record.balance, atMs: record.atMs, key: key,
                      reason: record.reason.map { text.append($0) } ?? -1,
                      transaction: transaction ?? TransactionName(record.transactionID, arena: &text),
                      currency: codes.intern(record.currency))
    }

    private mutating func forgetOldest() {
        index.remove(position: head, hash: TextKeyIndex.hash(at: records[head].key, in: text))
        head += 1
    }

    /// Drops the forgotten records and their text: the live ones move to the front (every
    /// position in the table down by `head`) and their text to a fresh arena.
    private mutating func compact() {
        var fresh = TextArena()
        var live = ChunkedArray<Stored>()
        live.reserveCapacity(records.count - head)
        for stored in records[head...] {
            live.append(Stored(profile: stored.profile, amount: stored.amount, balance: stored.balance, atMs: stored.atMs,
                   key: fresh.append(stored.key, from: text),
                   reason: stored.reason < 0 ? -1 : fresh.append(stored.reason, from: text),
                   transaction: stored.transaction.index == TransactionName.spelled
                       ? TransactionName(sequence: UInt64(fresh.append(Int(stored.transaction.sequence), from: text)),
                                         index: TransactionName.spelled)
                       : stored.transaction,
                   currency: stored.currency))
        }
        index.shiftPositions(down: head)
        records = live
        text = fresh
        head = 0
    }

    private func find(_ key: String, _ utf8: UnsafeBufferPointer<UInt8>, hash: UInt32) -> (position: Int?, bucket: Int) {
        index.find(key, utf8, hash: hash, in: text) { records[$0].key }
    }
}
