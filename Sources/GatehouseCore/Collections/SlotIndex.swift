/// An index hashing its keys with `Hashable` (SipHash): right for any key, including ones a
/// client chooses.
typealias SlotIndex<Key: Hashable> = HashedSlotIndex<StandardSlotHashing<Key>>

/// How a ``HashedSlotIndex`` hashes its keys: the 32 bits it keeps of each.
protocol SlotHashing {
    associatedtype Key: Hashable
    static func hashBits(_ key: Key) -> UInt32
}

enum StandardSlotHashing<Key: Hashable>: SlotHashing {
    @inline(__always)
    static func hashBits(_ key: Key) -> UInt32 {
        let hash = UInt64(UInt(bitPattern: key.hashValue))
        return UInt32(truncatingIfNeeded: hash ^ (hash >> 32))
    }
}

/// Profile ids are 128 random bits the server drew: a multiply-and-fold of them, seeded once
/// per process, spreads them as well as SipHash does at a tenth of its cost (a lookup per
/// balance change, several per event).
enum ProfileIDSlotHashing: SlotHashing {
    private static let seed = UInt64(UInt(bitPattern: Int.random(in: .min ... .max)))

    @inline(__always)
    static func hashBits(_ id: ProfileID) -> UInt32 { mix(id, extra: 0) }

    /// The id's bits with `extra` (another part of a key) folded in.
    @inline(__always)
    static func mix(_ id: ProfileID, extra: UInt64) -> UInt32 {
        var hash = (id.high ^ seed) &* 0x9E37_79B9_7F4A_7C15
        hash ^= (id.low ^ UInt64(id.tag) << 40 ^ extra) &* 0xBF58_476D_1CE4_E5B9
        hash ^= hash >> 31
        hash &*= 0x94D0_49BB_1331_11EB
        return UInt32(truncatingIfNeeded: hash ^ (hash >> 32))
    }
}

/// A hash index from keys to positions in an array its owner keeps, over ``PositionBuckets``: a
/// lookup hashes the key and reads an element only where the 32 hash bits a bucket keeps match,
/// so a probe rarely touches a wrong element (each such read is a cache miss in a big array),
/// and growing or removing never reads an element or hashes a key again. A key is stored once
/// (in the element) and an entry costs 8 bytes at most 3/4 full, where a `[Key: Int32]` of a
/// million 24-byte keys costs 56 bytes an entry.
///
/// Every method takes the elements and the function that gives an element's key; the index
/// holds only positions whose elements it was told about.
struct HashedSlotIndex<Hashing: SlotHashing>: Sendable {
    typealias Key = Hashing.Key

    private var buckets = PositionBuckets()

    /// How many positions the index holds.
    var count: Int { buckets.count }

    init() {}

    /// The position of the element with `key`, if the index holds it.
    @inline(__always)
    func position<Element>(of key: Key, in elements: some SlotElements<Element>, key keyOf: (Element) -> Key) -> Int? {
        buckets.find(hash: Hashing.hashBits(key)) { keyOf(elements[$0]) == key }.position
    }

    /// Asks for the bucket a lookup of `key` reads first (``Prefetch``).
    func prefetchBucket(of key: Key) {
        buckets.prefetch(hash: Hashing.hashBits(key))
    }

    /// Asks for the element a lookup of `key` most likely ends at: one bucket read, which
    /// ``prefetchBucket(of:)`` asked for earlier.
    func prefetchElement<Element>(of key: Key, in elements: some SlotElements<Element>) {
        guard let position = buckets.likelyPosition(hash: Hashing.hashBits(key)) else { return }
        elements.prefetch(position)
    }

    /// Indexes the element at `position` (already in `elements`) under its key; `false`, and
    /// nothing changes, when the index already holds an element with that key.
    mutating func insert<Element>(_ position: Int, in elements: some SlotElements<Element>, key keyOf: (Element) -> Key) -> Bool {
        let key = keyOf(elements[position])
        let hash = Hashing.hashBits(key)
        let found = buckets.find(hash: hash) { keyOf(elements[$0]) == key }
        guard found.position == nil else { return false }
        buckets.insert(hash: hash, position: position, at: found.bucket)
        return true
    }

    /// Forgets the element at `position`, whose key must not have changed since it was indexed.
    mutating func remove<Element>(_ position: Int, in elements: some SlotElements<Element>, key keyOf: (Element) -> Key) {
        buckets.remove(position: position, hash: Hashing.hashBits(keyOf(elements[position])))
    }

    /// The element with `key` moved from position `old` to `new` (a swap-remove filling a gap).
    mutating func move(_ old: Int, to new: Int, key: Key) {
        buckets.move(old, to: new, hash: Hashing.hashBits(key))
    }

    /// Sized for `count` entries without growing.
    mutating func reserveCapacity<Element>(_ count: Int, in elements: some SlotElements<Element>, key keyOf: (Element) -> Key) {
        buckets.reserveCapacity(count)
    }
}

/// What a slot index reads its elements from: an `Array`, or a ``ChunkedArray`` (the big tables,
/// whose copies share their chunks).
protocol SlotElements<Element> {
    associatedtype Element
    subscript(position: Int) -> Element { get }
    /// Asks for every cache line of the element at `position` (``Prefetch``).
    func prefetch(_ position: Int)
}

extension Array: SlotElements {
    func prefetch(_ position: Int) {
        Prefetch.element(position, of: self)
    }
}

extension ChunkedArray: SlotElements {}

/// An index from keys to the positions of the elements that list them, where one element may
/// list several keys (a profile's aliases, the tokens of the profiles merged into it) and, for
/// ``forEachPosition(of:listedBy:_:)``, several elements one key (the grants of a profile), over
/// ``PositionBuckets``: the keys live in the elements, so an entry costs 8 bytes at most 3/4
/// full, and the table is chunked, so a snapshot's capture costs the next change a chunk, where a
/// `[Key: Owner]` dictionary was copied whole.
///
/// A lookup asks the caller whether the element at a candidate position lists the key; the
/// owner keeps the index in step with its elements.
struct ListedKeyIndex<Hashing: SlotHashing>: Sendable {
    typealias Key = Hashing.Key

    private var buckets = PositionBuckets()

    var count: Int { buckets.count }

    init() {}

    /// The position of the element that lists `key`; `lists(position)` answers whether the
    /// element at a candidate position does.
    @inline(__always)
    func position(of key: Key, listedBy lists: (Int) -> Bool) -> Int? {
        buckets.find(hash: Hashing.hashBits(key), where: lists).position
    }

    /// Every position whose element lists `key`, in no particular order.
    func forEachPosition(of key: Key, listedBy lists: (Int) -> Bool, _ body: (Int) -> Void) {
        buckets.forEach(hash: Hashing.hashBits(key)) { position in
            if lists(position) { body(position) }
        }
    }

    /// Indexes `key`, which the element at `position` now lists.
    mutating func insert(_ key: Key, at position: Int) {
        buckets.insert(hash: Hashing.hashBits(key), position: position, at: nil)
    }

    /// Forgets `key`, indexed at `position`.
    mutating func remove(_ key: Key, at position: Int) {
        buckets.remove(position: position, hash: Hashing.hashBits(key))
    }

    /// The element listing `key` moved from `old` to `new`.
    mutating func move(_ key: Key, from old: Int, to new: Int) {
        buckets.move(old, to: new, hash: Hashing.hashBits(key))
    }

    /// Sized for `count` keys without growing.
    mutating func reserveCapacity(_ count: Int) {
        buckets.reserveCapacity(count)
    }
}
