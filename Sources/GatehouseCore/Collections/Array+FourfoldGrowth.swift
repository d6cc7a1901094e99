extension Array {
    /// Past this many bytes, a full array grows fourfold rather than double
    /// (``reserveForAppend(_:)``).
    static var fourfoldGrowthBytes: Int { 1 << 20 }

    /// Call before appending `extra` elements to one of the big append-only byte arrays (text
    /// arenas, the event feed's details; the big arrays of values are ``ChunkedArray``s, which
    /// never move an element). When the append would grow an
    /// array of a mebibyte or more, it grows fourfold instead of double: each growth copies every
    /// element into fresh pages, which the kernel must fault in, and frees the old ones, so a log
    /// replay that appends millions of entries spent a sixth of its time growing arrays. Growing
    /// fourfold copies a third as much. The room reserved but not yet used is address space, not
    /// resident memory: its pages are only touched as entries arrive.
    @inline(__always)
    mutating func reserveForAppend(_ extra: Int) {
        let needed = count + extra
        guard needed > capacity, capacity * MemoryLayout<Element>.stride >= Self.fourfoldGrowthBytes else { return }
        reserveCapacity(Swift.max(needed, capacity * 4))
    }
}
