extension RandomAccessCollection where Index == Int {
    /// Elements gathered at a time by ``forEachGathered(at:_:)``: enough for their loads to
    /// overlap, few enough for the copies to stay in the cache.
    @usableFromInline static var gatheredPerBatch: Int { 256 }

    /// Calls `body` with the element at each of `positions`, in that order, a batch at a time:
    /// each batch is copied out first, in a loop of independent loads whose cache misses
    /// overlap, then handed over from the cache. Handed over one by one, elements that lie in no
    /// order of their own (a million profiles written by id, purchases by key) cost a cache
    /// miss each, one after the other. For an `Array` or a ``ChunkedArray``.
    @inlinable
    public func forEachGathered(at positions: [Int], _ body: (Element) -> Void) {
        var batch: [Element] = []
        batch.reserveCapacity(Self.gatheredPerBatch)
        for start in stride(from: 0, to: positions.count, by: Self.gatheredPerBatch) {
            batch.removeAll(keepingCapacity: true)
            for position in positions[start..<Swift.min(start + Self.gatheredPerBatch, positions.count)] {
                batch.append(self[position])
            }
            for element in batch { body(element) }
        }
    }
}
