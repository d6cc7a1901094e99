/// A family of histograms with the same bounds, keyed by a small dense index (a server keys
/// by transport × op), in one allocation.
///
/// `@unchecked Sendable`: every access to the cells is atomic.
public final class HistogramArray: @unchecked Sendable {
    public let count: Int
    private let layout: HistogramLayout
    private let cells: UnsafeMutablePointer<UInt64>

    public init(count: Int, bounds: [Double]) {
        precondition(count >= 0, "a histogram array of \(count) histograms")
        self.count = count
        layout = HistogramLayout(bounds: bounds)
        cells = layout.allocateCells(histograms: count)
    }

    deinit {
        cells.deallocate()
    }

    public func observe(_ index: Int, nanoseconds: UInt64) {
        layout.observe(nanoseconds, in: histogram(index))
    }

    /// ``observe(_:nanoseconds:)`` for an array only one thread ever observes into (its owner;
    /// readers may be any): no locked instruction.
    /// `times` observations of the same duration at once (the answers of one read, timed together).
    public func observeOwned(_ index: Int, nanoseconds: UInt64, times: UInt64 = 1) {
        layout.observe(nanoseconds, times: times, in: histogram(index), owned: true)
    }

    public func snapshot(_ index: Int) -> HistogramSnapshot {
        layout.snapshot(of: histogram(index))
    }

    /// Whether anything was observed under `index`: a scrape can leave out the op × transport
    /// pairs nobody used.
    public func hasObservations(_ index: Int) -> Bool {
        layout.hasObservations(histogram(index))
    }

    private func histogram(_ index: Int) -> UnsafeMutablePointer<UInt64> {
        precondition(index >= 0 && index < count, "histogram \(index) of \(count)")
        return cells + index * layout.cellsPerHistogram
    }
}
