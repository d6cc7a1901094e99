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

/// A hash index from keys to positions in an array its owner keeps: open addressing with linear
/// probing over 8-byte buckets that hold a position and 32 bits of its key's hash, never a key.
/// A lookup hashes the key and reads an element only where those bits match, so a probe rarely
/// touches a wrong element (each such read is a cache miss in a big array), and growing or
/// removing never reads an element or hashes a key again. A key is stored once (in the element)
/// and an entry costs 8 bytes at most 3/4 full, where a `[Key: Int32]` of a million 24-byte keys
/// costs 56 bytes an entry.
///
/// Every method takes the elements and the function that gives an element's key; the index
/// holds only positions whose elements it was told about. A removal shifts the entries after it
/// back (no tombstones), so a table that sees many removals never fills up with dead buckets.
struct HashedSlotIndex<Hashing: SlotHashing>: Sendable {
    typealias Key = Hashing.Key

    /// The key's 32 hash bits above, the element's position + 1 below; 0 is an empty bucket.
    /// Empty, or a power of two long.
    private var buckets: [UInt64] = []
    /// How many positions the index holds.
    private(set) var count = 0

    init() {}

    /// The 32 bits of the key's hash the index keeps: its home bucket is their low bits.
    @inline(__always)
    private static func hashBits(_ key: Key) -> UInt32 { Hashing.hashBits(key) }

    @inline(__always)
    private static func entry(_ hash: UInt32, _ position: Int) -> UInt64 {
        UInt64(hash) << 32 | UInt64(position + 1)
    }

    /// The position of the element with `key`, if the index holds it.
    func position<Element>(of key: Key, in elements: [Element], key keyOf: (Element) -> Key) -> Int? {
        guard !buckets.isEmpty else { return nil }
        let hash = Self.hashBits(key)
        let mask = buckets.count - 1
        var bucket = Int(hash) & mask
        while true {
            let entry = buckets[bucket]
            if entry == 0 { return nil }
            if UInt32(truncatingIfNeeded: entry >> 32) == hash {
                let position = Int(UInt32(truncatingIfNeeded: entry)) - 1
                if keyOf(elements[position]) == key { return position }
            }
            bucket = (bucket + 1) & mask
        }
    }

    /// Indexes the element at `position` (already in `elements`) under its key; `false`, and
    /// nothing changes, when the index already holds an element with that key.
    mutating func insert<Element>(_ position: Int, in elements: [Element], key keyOf: (Element) -> Key) -> Bool {
        precondition(position >= 0 && position < Int(UInt32.max), "position \(position) out of range")
        if (count + 1) * 4 > buckets.count * 3 { resize(to: Swift.max(16, buckets.count * 2)) }
        let key = keyOf(elements[position])
        let hash = Self.hashBits(key)
        let mask = buckets.count - 1
        var bucket = Int(hash) & mask
        while buckets[bucket] != 0 {
            let entry = buckets[bucket]
            if UInt32(truncatingIfNeeded: entry >> 32) == hash, keyOf(elements[Int(UInt32(truncatingIfNeeded: entry)) - 1]) == key {
                return false
            }
            bucket = (bucket + 1) & mask
        }
        buckets[bucket] = Self.entry(hash, position)
        count += 1
        return true
    }

    /// Forgets the element at `position`, whose key must not have changed since it was indexed.
    /// The entries after it in its probe run move back, so no lookup passes an empty bucket it
    /// should not.
    mutating func remove<Element>(_ position: Int, in elements: [Element], key keyOf: (Element) -> Key) {
        let mask = buckets.count - 1
        var hole = bucket(holding: position, key: keyOf(elements[position]))
        var next = (hole + 1) & mask
        while buckets[next] != 0 {
            let home = Int(UInt32(truncatingIfNeeded: buckets[next] >> 32)) & mask
            // The entry may fill the hole unless its home lies cyclically in (hole, next].
            if (next - home) & mask >= (next - hole) & mask {
                buckets[hole] = buckets[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole] = 0
        count -= 1
    }

    /// The element with `key` moved from position `old` to `new` (a swap-remove filling a gap).
    mutating func move(_ old: Int, to new: Int, key: Key) {
        precondition(new >= 0 && new < Int(UInt32.max), "position \(new) out of range")
        let bucket = bucket(holding: old, key: key)
        buckets[bucket] = Self.entry(UInt32(truncatingIfNeeded: buckets[bucket] >> 32), new)
    }

    /// Sized for `count` entries without growing.
    mutating func reserveCapacity<Element>(_ count: Int, in elements: [Element], key keyOf: (Element) -> Key) {
        var size = Swift.max(16, buckets.count)
        while count * 4 > size * 3 { size *= 2 }
        if size > buckets.count { resize(to: size) }
    }

    /// The bucket that holds `position`, found along the probe run of its key.
    private func bucket(holding position: Int, key: Key) -> Int {
        precondition(!buckets.isEmpty, "position \(position) is not indexed")
        let mask = buckets.count - 1
        let wanted = UInt64(position + 1)
        var bucket = Int(Self.hashBits(key)) & mask
        while buckets[bucket] & 0xFFFF_FFFF != wanted {
            precondition(buckets[bucket] != 0, "position \(position) is not indexed under its key")
            bucket = (bucket + 1) & mask
        }
        return bucket
    }

    /// Moves every entry to a table of `size` buckets by the hash bits it keeps: no element is
    /// read and no key hashed again.
    private mutating func resize(to size: Int) {
        let old = buckets
        buckets = [UInt64](repeating: 0, count: size)
        let mask = size - 1
        for entry in old where entry != 0 {
            var bucket = Int(UInt32(truncatingIfNeeded: entry >> 32)) & mask
            while buckets[bucket] != 0 { bucket = (bucket + 1) & mask }
            buckets[bucket] = entry
        }
    }
}
