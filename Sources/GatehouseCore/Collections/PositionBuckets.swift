/// The table under the indexes that find elements of an owner's array by key
/// (``HashedSlotIndex``, ``TextKeyIndex``): open addressing with linear probing over 8-byte
/// buckets, each holding 32 bits of a key's hash above and a position + 1 below (0 is empty),
/// never a key. The table is a power of two long and at most 3/4 full. A probe compares keys
/// only where the hash bits match; growing moves entries by the bits they keep, so it never
/// reads an element or hashes a key again; a removal shifts the entries after it back, so no
/// tombstones pile up. The buckets are a ``ChunkedArray``: after a snapshot's capture, a write
/// copies the chunk it lands in, not the table.
struct PositionBuckets: Sendable {
    /// Empty, or a power of two long.
    private var buckets = ChunkedArray<UInt64>()
    /// How many positions the table holds.
    private(set) var count = 0

    init() {}

    @inline(__always)
    private static func entry(_ hash: UInt32, _ position: Int) -> UInt64 {
        UInt64(hash) << 32 | UInt64(position + 1)
    }

    /// The position along `hash`'s probe run for which `matches` holds, or the empty bucket that
    /// ends the run (where that key would go).
    @inline(__always)
    func find(hash: UInt32, where matches: (Int) -> Bool) -> (position: Int?, bucket: Int) {
        guard !buckets.isEmpty else { return (nil, 0) }
        let mask = buckets.count - 1
        var bucket = Int(hash) & mask
        while true {
            let entry = buckets[bucket]
            if entry == 0 { return (nil, bucket) }
            if UInt32(truncatingIfNeeded: entry >> 32) == hash {
                let position = Int(UInt32(truncatingIfNeeded: entry)) - 1
                if matches(position) { return (position, bucket) }
            }
            bucket = (bucket + 1) & mask
        }
    }

    /// Every position held under `hash`, along its probe run (a key held by several elements).
    func forEach(hash: UInt32, _ body: (Int) -> Void) {
        guard !buckets.isEmpty else { return }
        let mask = buckets.count - 1
        var bucket = Int(hash) & mask
        while true {
            let entry = buckets[bucket]
            if entry == 0 { return }
            if UInt32(truncatingIfNeeded: entry >> 32) == hash { body(Int(UInt32(truncatingIfNeeded: entry)) - 1) }
            bucket = (bucket + 1) & mask
        }
    }

    /// Asks for the bucket where `hash`'s probe run starts (``Prefetch``): the first step of a
    /// lookup known ahead of its turn.
    func prefetch(hash: UInt32) {
        guard !buckets.isEmpty else { return }
        buckets.prefetch(Int(hash) & (buckets.count - 1))
    }

    /// The position the first bucket of `hash`'s run holds, when that bucket's hash bits are
    /// `hash`'s: where a lookup of a held key nearly always ends, named without reading an
    /// element to make sure (for asking for that element ahead of the lookup).
    func likelyPosition(hash: UInt32) -> Int? {
        guard !buckets.isEmpty else { return nil }
        let entry = buckets[Int(hash) & (buckets.count - 1)]
        guard entry != 0, UInt32(truncatingIfNeeded: entry >> 32) == hash else { return nil }
        return Int(UInt32(truncatingIfNeeded: entry)) - 1
    }

    /// Holds `position` under `hash`: in `bucket`, the empty bucket ``find(hash:where:)``
    /// answered for its key, unless the table must grow first (or anywhere along its run, when
    /// `bucket` is nil).
    mutating func insert(hash: UInt32, position: Int, at bucket: Int?) {
        precondition(position >= 0 && position < Int(UInt32.max), "position \(position) out of range")
        count += 1
        if let bucket, count * 4 <= buckets.count * 3 {
            buckets[bucket] = Self.entry(hash, position)
            return
        }
        if count * 4 > buckets.count * 3 { resize(to: Swift.max(16, buckets.count * 2)) }
        place(Self.entry(hash, position))
    }

    /// Forgets `position`, held under `hash`. The entries after it in its probe run move back,
    /// so no lookup passes an empty bucket it should not.
    mutating func remove(position: Int, hash: UInt32) {
        let mask = buckets.count - 1
        var hole = bucket(holding: position, hash: hash)
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

    /// The element held at `old` under `hash` moved to `new`.
    mutating func move(_ old: Int, to new: Int, hash: UInt32) {
        precondition(new >= 0 && new < Int(UInt32.max), "position \(new) out of range")
        buckets[bucket(holding: old, hash: hash)] = Self.entry(hash, new)
    }

    /// Every position moves down by `offset` (the owner dropped that many elements, none of them
    /// held, from the front of its array).
    mutating func shiftPositions(down offset: Int) {
        let delta = UInt64(offset)
        for bucket in buckets.indices where buckets[bucket] != 0 {
            precondition(buckets[bucket] & 0xFFFF_FFFF > delta, "a dropped position is still indexed")
            buckets[bucket] -= delta
        }
    }

    /// Sized for `count` positions without growing.
    mutating func reserveCapacity(_ count: Int) {
        var size = Swift.max(16, buckets.count)
        while count * 4 > size * 3 { size *= 2 }
        if size > buckets.count { resize(to: size) }
    }

    /// The bucket that holds `position` under `hash`, found along `hash`'s probe run. The hash
    /// bits must match too: an element may be held under several keys (``ListedKeyIndex``).
    private func bucket(holding position: Int, hash: UInt32) -> Int {
        precondition(!buckets.isEmpty, "position \(position) is not indexed")
        let mask = buckets.count - 1
        let wanted = Self.entry(hash, position)
        var bucket = Int(hash) & mask
        while buckets[bucket] != wanted {
            precondition(buckets[bucket] != 0, "position \(position) is not indexed under its key")
            bucket = (bucket + 1) & mask
        }
        return bucket
    }

    private mutating func place(_ entry: UInt64) {
        let mask = buckets.count - 1
        var bucket = Int(UInt32(truncatingIfNeeded: entry >> 32)) & mask
        while buckets[bucket] != 0 { bucket = (bucket + 1) & mask }
        buckets[bucket] = entry
    }

    private mutating func resize(to size: Int) {
        let old = buckets
        buckets = ChunkedArray(repeating: 0, count: size)
        for entry in old where entry != 0 { place(entry) }
    }
}
