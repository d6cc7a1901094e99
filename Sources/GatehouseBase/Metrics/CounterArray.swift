import CGatehouseLinux

/// A fixed set of counters, updated from any thread (relaxed atomic adds), read by a scrape.
/// One allocation for the set: a server counts by a small dense index (op × code) without a
/// lock or a dictionary on the request's road.
///
/// `@unchecked Sendable`: every access to the cells is atomic.
public final class CounterArray: @unchecked Sendable {
    private let cells: UnsafeMutablePointer<UInt64>
    public let count: Int

    public init(count: Int) {
        precondition(count >= 0, "a counter array of \(count) counters")
        self.count = count
        cells = .allocate(capacity: max(count, 1))
        cells.initialize(repeating: 0, count: max(count, 1))
    }

    deinit {
        cells.deallocate()
    }

    public func add(_ index: Int, _ amount: UInt64 = 1) {
        precondition(index >= 0 && index < count, "counter \(index) of \(count)")
        cgh_atomic_add_u64(cells + index, amount)
    }

    /// ``add(_:_:)`` for an array only one thread ever adds to (its owner; readers may be any):
    /// no locked instruction.
    public func addOwned(_ index: Int, _ amount: UInt64 = 1) {
        precondition(index >= 0 && index < count, "counter \(index) of \(count)")
        cgh_owned_add_u64(cells + index, amount)
    }

    public func value(_ index: Int) -> UInt64 {
        precondition(index >= 0 && index < count, "counter \(index) of \(count)")
        return cgh_atomic_load_u64(cells + index)
    }
}
