/// Cumulative-bucket histogram of durations in seconds, Prometheus style, observed from any
/// thread without a lock (relaxed atomic adds; ``HistogramLayout``).
///
/// `@unchecked Sendable`: every access to the cells is atomic.
public final class DurationHistogram: @unchecked Sendable {
    /// For requests: 10 µs to 2.5 s.
    public static let requestBounds: [Double] = [
        0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
        1, 2.5,
    ]
    /// For fsyncs and snapshots: 100 µs (a sync of a page cache that had little to do) to 10 s
    /// (a large project's snapshot, a struggling disk).
    public static let storageBounds: [Double] = [
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10,
    ]

    private let layout: HistogramLayout
    private let cells: UnsafeMutablePointer<UInt64>

    public init(bounds: [Double]) {
        layout = HistogramLayout(bounds: bounds)
        cells = layout.allocateCells(histograms: 1)
    }

    deinit {
        cells.deallocate()
    }

    public func observe(nanoseconds: UInt64) {
        layout.observe(nanoseconds, in: cells)
    }

    public func snapshot() -> HistogramSnapshot {
        layout.snapshot(of: cells)
    }
}
