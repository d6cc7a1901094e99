import CGatehouseLinux

/// The cells of one histogram and how an observation finds its bucket, shared by
/// ``DurationHistogram`` and ``HistogramArray``.
///
/// A histogram's cells are contiguous: the sum in nanoseconds, then one cell per bound holding
/// the observations that fall under it and under no smaller bound, then one for those past the
/// last bound. An observation adds to the sum and to one bucket (one or two cache lines); the
/// count is what the buckets add up to, so a scrape that races with writers still reads a count
/// no bucket exceeds.
struct HistogramLayout: Sendable {
    let bounds: [Double]
    /// `bounds` in nanoseconds: an observation counts under the first limit it does not exceed.
    private let limits: [UInt64]

    init(bounds: [Double]) {
        precondition(!bounds.isEmpty, "a histogram needs at least one bound")
        for (lower, upper) in zip(bounds, bounds.dropFirst()) {
            precondition(lower < upper, "histogram bounds must ascend: \(lower) then \(upper)")
        }
        precondition(bounds[0] > 0 && bounds[bounds.count - 1].isFinite, "histogram bounds must be positive and finite")
        self.bounds = bounds
        limits = bounds.map { UInt64(($0 * 1e9).rounded()) }
    }

    /// The sum, a cell per bound, and the one past the last bound.
    var cellsPerHistogram: Int { limits.count + 2 }

    /// `owned`: only this thread ever writes the cells (see `cgh_owned_add_u64`).
    func observe(_ nanoseconds: UInt64, times: UInt64 = 1, in cells: UnsafeMutablePointer<UInt64>, owned: Bool = false) {
        let bucket = cells + 1 + bucket(of: nanoseconds)
        if owned {
            cgh_owned_add_u64(cells, nanoseconds &* times)
            cgh_owned_add_u64(bucket, times)
        } else {
            cgh_atomic_add_u64(cells, nanoseconds &* times)
            cgh_atomic_add_u64(bucket, times)
        }
    }

    /// The first bound `nanoseconds` does not exceed, or `limits.count` when it exceeds them all.
    private func bucket(of nanoseconds: UInt64) -> Int {
        var low = 0
        var high = limits.count
        while low < high {
            let middle = (low + high) / 2
            if nanoseconds <= limits[middle] { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// One pass over the buckets, summing as it goes.
    func snapshot(of cells: UnsafeMutablePointer<UInt64>) -> HistogramSnapshot {
        var cumulative: [UInt64] = []
        cumulative.reserveCapacity(limits.count)
        var running: UInt64 = 0
        for index in 0..<limits.count {
            running &+= cgh_atomic_load_u64(cells + 1 + index)
            cumulative.append(running)
        }
        running &+= cgh_atomic_load_u64(cells + 1 + limits.count)
        let sumNanoseconds = cgh_atomic_load_u64(cells)
        return HistogramSnapshot(bounds: bounds, cumulativeCounts: cumulative, count: running,
                                 sumSeconds: Double(sumNanoseconds) / 1e9)
    }

    func hasObservations(_ cells: UnsafeMutablePointer<UInt64>) -> Bool {
        (1..<cellsPerHistogram).contains { cgh_atomic_load_u64(cells + $0) != 0 }
    }

    /// Zeroed cells for `histograms` histograms, one allocation.
    func allocateCells(histograms: Int) -> UnsafeMutablePointer<UInt64> {
        let total = max(histograms * cellsPerHistogram, 1)
        let cells = UnsafeMutablePointer<UInt64>.allocate(capacity: total)
        cells.initialize(repeating: 0, count: total)
        return cells
    }
}
