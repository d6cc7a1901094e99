/// Every balance's history, densely: one list per (profile, currency), held in the buckets of an
/// open-addressing table (finding a list is one random read, not a bucket then an element), and
/// every entry of every list in one array, each entry pointing at the one before it in its
/// list. An entry holds no `String`: its transaction id is two numbers, its currency the
/// list's, its ref an offset in a ``TextArena``. Appending touches the list's bucket and the end
/// of the entry array; a dictionary of dictionaries of arrays touched three hashed buckets and
/// an array of its own per profile.
///
/// A list keeps its newest entries, as many as the caller says (``Retention``). Once a list has
/// grown past that, its entries also point at the ones after them ("linked": the oldest is then
/// dropped in one step when a new one comes). A list that never has, nearly every one, keeps no
/// such links, so an append writes nothing into an older entry, which with other profiles'
/// entries between them is rarely in the cache.
///
/// The entries lie in a ``ChunkedArray``, so a snapshot's copy of the state costs the next
/// append one chunk, not the whole array. The entries of removed lists and dropped entries stay
/// in the arrays until they are half of them; then the live ones are copied, list by list, into
/// fresh arrays: each entry is copied at most once for every entry dropped.
struct CurrencyHistories: Sendable {
    struct Key: Hashable, Sendable {
        let profile: ProfileID
        let currency: UInt16
    }

    enum KeyHashing: SlotHashing {
        static func hashBits(_ key: Key) -> UInt32 { ProfileIDSlotHashing.mix(key.profile, extra: UInt64(key.currency)) }
    }

    struct List: Sendable {
        let key: Key
        /// The newest entry, in ``entries``.
        var newest: UInt32
        /// 0 only in an empty bucket: a list has an entry.
        var count: UInt32
        /// The oldest entry kept, in ``entries``, once the list is linked; ``none`` until then.
        var oldest: UInt32
        var balance: Int64

        static let empty = List(key: Key(profile: ProfileID(high: 0, low: 0, tag: 0), currency: 0), newest: 0, count: 0,
                                oldest: 0, balance: 0)
    }

    struct Stored: Sendable {
        let amount: Int64
        /// As given: a ledger rebuilt from parts keeps them even where they do not add up, so
        /// its snapshot shows the damage to the reader.
        let balance: Int64
        let atMs: Int64
        let transaction: TransactionName
        /// The entry after this one in a linked list, or ``none`` (in the padding after
        /// `transaction`: the stride stays 56 bytes).
        var next: UInt32
        /// The ref's offset in ``text``.
        let ref: Int
        /// The entry before this one in its list, or ``none``.
        var previous: UInt32
        let source: CurrencySource
    }

    static let none = UInt32.max

    private(set) var codes = CodeList()
    /// Lists in open addressing with linear probing, at most 3/4 full: empty, or a power of two
    /// long.
    private(set) var table = ChunkedArray<List>()
    /// How many lists the table holds.
    private(set) var listCount = 0
    private(set) var entries = ChunkedArray<Stored>()
    private(set) var text = TextArena()
    /// Entries of removed lists, and entries dropped from the front of their lists, still in
    /// ``entries``.
    private var dead = 0
    /// Entries moved by compactions so far (tests: the work an append costs).
    private(set) var entriesMoved = 0

    init() {}

    /// The entries the lists hold (dropped and removed ones not counted).
    var keptEntryCount: Int { entries.count - dead }

    /// Every list, in no particular order.
    var lists: [List] { table.filter { $0.count != 0 } }

    func list(_ profile: ProfileID, _ currency: String) -> List? {
        guard let number = codes.number(of: currency) else { return nil }
        return bucket(of: Key(profile: profile, currency: number)).map { table[$0] }
    }

    var isEmpty: Bool { listCount == 0 }

    /// Asks for the bucket where a lookup of the list of `profile` in `currency` starts
    /// (``Prefetch``).
    func prefetch(_ profile: ProfileID, _ currency: String) {
        guard !table.isEmpty, let number = codes.number(of: currency) else { return }
        table.prefetch(Self.home(Key(profile: profile, currency: number), mask: table.count - 1))
    }

    /// The currency codes of a profile's lists, each with its list.
    func lists(of profile: ProfileID) -> [(currency: String, list: List)] {
        codes.codes.indices.compactMap { number in
            bucket(of: Key(profile: profile, currency: UInt16(number))).map { (codes.codes[number], table[$0]) }
        }
    }

    /// A list's entries, newest first, at most `limit`.
    func newest(of list: List, limit: Int) -> [CurrencyEntry] {
        var result: [CurrencyEntry] = []
        result.reserveCapacity(min(limit, Int(list.count)))
        var position = list.newest
        while position != Self.none, result.count < limit {
            let stored = entries[Int(position)]
            result.append(entry(stored))
            position = stored.previous
        }
        return result
    }

    /// A list's entries, oldest first.
    func all(of list: List) -> [CurrencyEntry] {
        newest(of: list, limit: Int(list.count)).reversed()
    }

    private func entry(_ stored: Stored) -> CurrencyEntry {
        CurrencyEntry(transactionID: stored.transaction.spelled(in: text), amount: stored.amount, balance: stored.balance,
                      source: stored.source, ref: text.string(at: stored.ref), atMs: stored.atMs)
    }

    // MARK: Changes

    /// Appends an entry moving the balance of `profile` in `currency` by `amount`, held within
    /// 0 … `maximum`, under a transaction id the rules made (its numbers, never spelled text);
    /// the list then keeps its newest `kept` entries. Answers what really moved and the balance
    /// after, or `nil` when nothing moves (no list is made then).
    mutating func append(
        _ profile: ProfileID, _ currency: String, amount: Int64, maximum: Int64, transaction: TransactionName,
        source: CurrencySource, ref: String, atMs: Int64, kept: Int
    ) -> (amount: Int64, balance: Int64)? {
        precondition(transaction.index != TransactionName.spelled, "a new entry's transaction id is numbers")
        precondition(kept >= 1, "a list keeps at least its newest entry")
        let key = Key(profile: profile, currency: codes.intern(currency))
        let bucket = bucket(of: key)
        let before = bucket.map { table[$0].balance } ?? 0
        let after = min(max(before + amount, 0), maximum)
        guard after != before else { return nil }
        precondition(entries.count < Int(Self.none), "too many currency history entries")
        let stored = Stored(amount: after - before, balance: after, atMs: atMs, transaction: transaction, next: Self.none,
                            ref: text.append(ref), previous: bucket.map { table[$0].newest } ?? Self.none, source: source)
        entries.append(stored)
        let newest = UInt32(entries.count - 1)
        guard let bucket else {
            insert(List(key: key, newest: newest, count: 1, oldest: Self.none, balance: after))
            return (after - before, after)
        }
        if table[bucket].oldest != Self.none { entries[Int(table[bucket].newest)].next = newest }
        table[bucket].newest = newest
        table[bucket].count += 1
        table[bucket].balance = after
        if table[bucket].count > kept { dropOldest(of: bucket, keeping: kept) }
        return (after - before, after)
    }

    /// Drops a list's oldest entries until it holds `kept`; the balance stays (it is the newest
    /// entry's).
    private mutating func dropOldest(of bucket: Int, keeping kept: Int) {
        if table[bucket].oldest == Self.none { link(bucket) }
        while table[bucket].count > kept {
            let oldest = Int(table[bucket].oldest)
            let next = entries[oldest].next
            entries[Int(next)].previous = Self.none
            table[bucket].oldest = next
            table[bucket].count -= 1
            dead += 1
        }
        compactIfMostlyDead()
    }

    /// Links a list that has just grown past what it keeps: one walk from its newest entry back,
    /// once in the list's life (a compaction keeps the links).
    private mutating func link(_ bucket: Int) {
        var after = Self.none
        var position = table[bucket].newest
        while true {
            entries[Int(position)].next = after
            let previous = entries[Int(position)].previous
            guard previous != Self.none else { break }
            after = position
            position = previous
        }
        table[bucket].oldest = position
    }

    /// Adds a whole list read back from storage, oldest first, whose balances the reader
    /// checked; `false`, and nothing changes, when the list exists already.
    mutating func restore(_ profile: ProfileID, _ currency: String, _ history: [CurrencyEntry]) -> Bool {
        let key = Key(profile: profile, currency: codes.intern(currency))
        guard bucket(of: key) == nil, let last = history.last else { return false }
        precondition(entries.count + history.count < Int(Self.none), "too many currency history entries")
        var previous = Self.none
        for item in history {
            let transaction = TransactionName(item.transactionID, arena: &text)
            let position = UInt32(entries.count)
            entries.append(Stored(amount: item.amount, balance: item.balance, atMs: item.atMs, transaction: transaction,
                                  next: Self.none, ref: text.append(item.ref), previous: previous, source: item.source))
            previous = position
        }
        // Unlinked, like every list until an append finds it past what it keeps.
        insert(List(key: key, newest: previous, count: UInt32(history.count), oldest: Self.none, balance: last.balance))
        return true
    }

    /// Room for `lists` lists and `entries` entries in all, allocated once.
    mutating func reserveCapacity(lists count: Int, entries entryCount: Int) {
        var size = Swift.max(16, table.count)
        while count * 4 > size * 3 { size *= 2 }
        if size > table.count { resize(to: size) }
        entries.reserveCapacity(entryCount)
    }

    /// A profile's lists go (a deleted or merged-away profile).
    mutating func remove(_ profile: ProfileID) {
        for number in codes.codes.indices {
            guard let bucket = bucket(of: Key(profile: profile, currency: UInt16(number))) else { continue }
            dead += Int(table[bucket].count)
            removeBucket(bucket)
        }
        compactIfMostlyDead()
    }

    private mutating func compactIfMostlyDead() {
        if dead >= 4096, dead * 2 >= entries.count { compact() }
    }

    // MARK: The table

    @inline(__always)
    private static func home(_ key: Key, mask: Int) -> Int { Int(KeyHashing.hashBits(key)) & mask }

    private func bucket(of key: Key) -> Int? {
        guard !table.isEmpty else { return nil }
        let mask = table.count - 1
        var bucket = Self.home(key, mask: mask)
        while table[bucket].count != 0 {
            if table[bucket].key == key { return bucket }
            bucket = (bucket + 1) & mask
        }
        return nil
    }

    /// Adds a list whose key the table does not hold.
    private mutating func insert(_ list: List) {
        if (listCount + 1) * 4 > table.count * 3 { resize(to: Swift.max(16, table.count * 2)) }
        place(list)
        listCount += 1
    }

    private mutating func place(_ list: List) {
        let mask = table.count - 1
        var bucket = Self.home(list.key, mask: mask)
        while table[bucket].count != 0 { bucket = (bucket + 1) & mask }
        table[bucket] = list
    }

    private mutating func resize(to size: Int) {
        let old = table
        table = ChunkedArray(repeating: .empty, count: size)
        for list in old where list.count != 0 { place(list) }
    }

    /// Empties `bucket`; the lists after it in its probe run move back (no tombstones).
    private mutating func removeBucket(_ bucket: Int) {
        let mask = table.count - 1
        var hole = bucket
        var next = (hole + 1) & mask
        while table[next].count != 0 {
            let home = Self.home(table[next].key, mask: mask)
            // The list may fill the hole unless its home lies cyclically in (hole, next].
            if (next - home) & mask >= (next - hole) & mask {
                table[hole] = table[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        table[hole] = .empty
        listCount -= 1
    }

    /// Copies the live entries and their refs into fresh arrays, each list's oldest first.
    private mutating func compact() {
        var fresh = ChunkedArray<Stored>()
        fresh.reserveCapacity(entries.count - dead)
        var freshText = TextArena()
        var chain: [UInt32] = []
        for slot in table.indices where table[slot].count != 0 {
            chain.removeAll(keepingCapacity: true)
            var position = table[slot].newest
            while position != Self.none {
                chain.append(position)
                position = entries[Int(position)].previous
            }
            var previous = Self.none
            let linked = table[slot].oldest != Self.none
            if linked { table[slot].oldest = UInt32(fresh.count) }
            for position in chain.reversed() {
                let stored = entries[Int(position)]
                let transaction = stored.transaction.index == TransactionName.spelled
                    ? TransactionName(sequence: UInt64(freshText.append(Int(stored.transaction.sequence), from: text)),
                                      index: TransactionName.spelled)
                    : stored.transaction
                let moved = UInt32(fresh.count)
                if linked, previous != Self.none { fresh[Int(previous)].next = moved }
                fresh.append(Stored(amount: stored.amount, balance: stored.balance, atMs: stored.atMs, transaction: transaction,
                                    next: Self.none, ref: freshText.append(stored.ref, from: text), previous: previous,
                                    source: stored.source))
                previous = moved
            }
            table[slot].newest = previous
        }
        entriesMoved += fresh.count
        entries = fresh
        text = freshText
        dead = 0
    }
}
