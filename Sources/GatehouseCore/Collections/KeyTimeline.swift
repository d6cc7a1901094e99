/// Text keys in the order they were remembered, each with its time and a payload, found by key
/// and forgotten oldest first once they fall out of a window: the shape of the idempotency keys a
/// ledger has answered (``IdempotencyTable``) and of the store notifications a purchase book has
/// applied (``NotificationMemory``).
///
/// The entries lie in one ``ChunkedArray`` in the order they came, which is the order they are
/// forgotten in, so forgetting one is a step of `head`; the keys (and any text a payload keeps)
/// lie in a ``TextArena``, found through a ``TextKeyIndex``. A snapshot's copy of the state costs
/// the next key a chunk, not the table, and a key costs its bytes and about 40 more, where a
/// `Set<String>` or a `[String: Value]` held a heap string and a hash bucket for each (about 150
/// bytes) and was copied whole by the first write after a snapshot's capture.
struct KeyTimeline<Payload: Sendable>: Sendable {
    struct Entry: Sendable {
        /// Where the key lies in ``text``.
        let key: Int
        var atMs: Int64
        var payload: Payload
    }

    private var entries = ChunkedArray<Entry>()
    /// `entries[..<head]` is forgotten; the array and the arena are compacted once that is most.
    private var head = 0
    private var index = TextKeyIndex()
    /// The keys, and the text payloads keep (as offsets into it).
    private(set) var text = TextArena()
    /// Entries moved by compactions so far (tests: forgetting costs at most one move for each
    /// entry forgotten).
    private(set) var entriesMoved = 0

    init() {}

    var count: Int { entries.count - head }
    var isEmpty: Bool { count == 0 }

    /// The positions of the entries held, oldest first.
    var positions: Range<Int> { head..<entries.count }

    subscript(position: Int) -> Entry { entries[position] }

    func key(at position: Int) -> String { text.string(at: entries[position].key) }

    /// Lends each entry's key (its UTF-8 bytes) with the entry, oldest first, without making a
    /// `String` of each.
    func forEach(_ body: (UnsafeBufferPointer<UInt8>, Entry) -> Void) {
        for position in positions {
            let entry = entries[position]
            text.withUTF8(at: entry.key) { body($0, entry) }
        }
    }

    /// The positions of the entries held, in the order of their keys (as `String`s order them).
    var positionsByKey: [Int] {
        let first = head
        return text.sortedPositions(of: entries[head...].map(\.key)).map { first + $0 }
    }

    /// What a key is found by (``TextKeyIndex/hash(_:_:)``).
    static func hash(_ key: String) -> UInt32 {
        var bytes = key
        return bytes.withUTF8 { utf8 in TextKeyIndex.hash(key, utf8) }
    }

    /// The position of the entry with `key`, if one is held.
    @inline(__always)
    func position(of key: String) -> Int? {
        var bytes = key
        return bytes.withUTF8 { utf8 in find(key, utf8, hash: TextKeyIndex.hash(key, utf8)).position }
    }

    /// Asks for the bucket a lookup of the key whose ``hash(_:)`` is `hash` reads first (``Prefetch``).
    func prefetch(hash: UInt32) {
        index.prefetch(hash: hash)
    }

    // MARK: Changes

    /// Adds `key` at `atMs` with the payload `make` builds (in the arena, for any text of its
    /// own) as the newest entry, unless `key` is held already. Answers the key's position and
    /// whether it was added.
    @inline(__always)
    mutating func append(_ key: String, atMs: Int64, _ make: (inout TextArena) -> Payload) -> (position: Int, added: Bool) {
        var bytes = key
        return bytes.withUTF8 { utf8 in
            let hash = TextKeyIndex.hash(key, utf8)
            let (found, bucket) = find(key, utf8, hash: hash)
            if let found { return (found, false) }
            let keyOffset = text.append(utf8: utf8)
            let payload = make(&text)
            index.insert(hash: hash, position: entries.count, at: bucket)
            entries.append(Entry(key: keyOffset, atMs: atMs, payload: payload))
            return (entries.count - 1, true)
        }
    }

    /// Gives the entry at `position` a new time and payload; it keeps its place in the order.
    mutating func replace(at position: Int, atMs: Int64, _ make: (inout TextArena) -> Payload) {
        let payload = make(&text)
        entries[position].atMs = atMs
        entries[position].payload = payload
    }

    /// Forgets the oldest entries while they are more than `keptMs` older than `nowMs`. Once
    /// most of the array is forgotten, the live entries move to a fresh array and their keys to
    /// a fresh arena; `move` copies a payload's own text there (``TextArena/append(_:from:)``).
    mutating func forget(olderThan keptMs: Int64, at nowMs: Int64, moving move: (Payload, TextArena, inout TextArena) -> Payload) {
        while head < entries.count, nowMs - entries[head].atMs > keptMs {
            index.remove(position: head, hash: TextKeyIndex.hash(at: entries[head].key, in: text))
            head += 1
        }
        if head >= Self.compactionFloor, head * 2 >= entries.count { compact(moving: move) }
    }

    /// Entries forgotten before the array is compacted, at the least.
    static var compactionFloor: Int { 1024 }

    private mutating func compact(moving move: (Payload, TextArena, inout TextArena) -> Payload) {
        var fresh = TextArena()
        var live = ChunkedArray<Entry>()
        live.reserveCapacity(entries.count - head)
        for entry in entries[head...] {
            live.append(Entry(key: fresh.append(entry.key, from: text), atMs: entry.atMs, payload: move(entry.payload, text, &fresh)))
        }
        index.shiftPositions(down: head)
        entriesMoved += live.count
        entries = live
        text = fresh
        head = 0
    }

    /// Room for `count` more entries without growing the index.
    mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(entries.count + count)
        index.reserveCapacity(index.count + count)
    }

    @inline(__always)
    private func find(_ key: String, _ utf8: UnsafeBufferPointer<UInt8>, hash: UInt32) -> (position: Int?, bucket: Int) {
        index.find(key, utf8, hash: hash, in: text) { entries[$0].key }
    }
}

extension KeyTimeline where Payload == Void {
    /// ``forget(olderThan:at:moving:)`` of entries that keep no text of their own.
    mutating func forget(olderThan keptMs: Int64, at nowMs: Int64) {
        forget(olderThan: keptMs, at: nowMs) { _, _, _ in () }
    }
}
