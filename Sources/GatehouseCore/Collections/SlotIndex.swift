/// A hash index from keys to positions in an array its owner keeps: open addressing with linear
/// probing over 4-byte buckets that hold a position, never a key. A lookup hashes the key and
/// compares it with the key of the element at each position it probes, so a key is stored once
/// (in the element) and an entry costs 4 bytes at most 3/4 full, where a `[Key: Int32]` of a
/// million 24-byte keys costs 56 bytes an entry.
///
/// Every method takes the elements and the function that gives an element's key; the index
/// holds only positions whose elements it was told about. A removal shifts the entries after it
/// back (no tombstones), so a table that sees many removals never fills up with dead buckets.
struct SlotIndex<Key: Hashable>: Sendable {
    /// An element's position + 1; 0 is an empty bucket. Empty, or a power of two long.
    private var buckets: [UInt32] = []
    /// How many positions the index holds.
    private(set) var count = 0

    init() {}

    /// The position of the element with `key`, if the index holds it.
    func position<Element>(of key: Key, in elements: [Element], key keyOf: (Element) -> Key) -> Int? {
        guard !buckets.isEmpty else { return nil }
        let mask = buckets.count - 1
        var bucket = key.hashValue & mask
        while buckets[bucket] != 0 {
            let position = Int(buckets[bucket] - 1)
            if keyOf(elements[position]) == key { return position }
            bucket = (bucket + 1) & mask
        }
        return nil
    }

    /// Indexes the element at `position` (already in `elements`) under its key; `false`, and
    /// nothing changes, when the index already holds an element with that key.
    mutating func insert<Element>(_ position: Int, in elements: [Element], key keyOf: (Element) -> Key) -> Bool {
        precondition(position >= 0 && position < Int(UInt32.max), "position \(position) out of range")
        if (count + 1) * 4 > buckets.count * 3 { resize(to: Swift.max(16, buckets.count * 2), in: elements, key: keyOf) }
        let key = keyOf(elements[position])
        let mask = buckets.count - 1
        var bucket = key.hashValue & mask
        while buckets[bucket] != 0 {
            if keyOf(elements[Int(buckets[bucket] - 1)]) == key { return false }
            bucket = (bucket + 1) & mask
        }
        buckets[bucket] = UInt32(position + 1)
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
            let home = keyOf(elements[Int(buckets[next] - 1)]).hashValue & mask
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
        buckets[bucket(holding: old, key: key)] = UInt32(new + 1)
    }

    /// Sized for `count` entries without growing.
    mutating func reserveCapacity<Element>(_ count: Int, in elements: [Element], key keyOf: (Element) -> Key) {
        var size = Swift.max(16, buckets.count)
        while count * 4 > size * 3 { size *= 2 }
        if size > buckets.count { resize(to: size, in: elements, key: keyOf) }
    }

    /// The bucket that holds `position`, found along the probe run of its key.
    private func bucket(holding position: Int, key: Key) -> Int {
        precondition(!buckets.isEmpty, "position \(position) is not indexed")
        let mask = buckets.count - 1
        let wanted = UInt32(position + 1)
        var bucket = key.hashValue & mask
        while buckets[bucket] != wanted {
            precondition(buckets[bucket] != 0, "position \(position) is not indexed under its key")
            bucket = (bucket + 1) & mask
        }
        return bucket
    }

    private mutating func resize<Element>(to size: Int, in elements: [Element], key keyOf: (Element) -> Key) {
        let old = buckets
        buckets = [UInt32](repeating: 0, count: size)
        let mask = size - 1
        for entry in old where entry != 0 {
            var bucket = keyOf(elements[Int(entry - 1)]).hashValue & mask
            while buckets[bucket] != 0 { bucket = (bucket + 1) & mask }
            buckets[bucket] = entry
        }
    }
}
