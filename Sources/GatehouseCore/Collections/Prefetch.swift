import CGatehouseLinux

/// Cache hints for lookups known before their turn: replay looks at the records after the one
/// it applies (``ProjectState/prefetchBuckets(for:)``), so the cache misses of a big state's
/// random reads overlap instead of coming one after another. A hint reads nothing and changes
/// nothing.
enum Prefetch {
    private static let lineBytes = 64

    /// Asks for every cache line `elements[position]` lies on; nothing for a position out of
    /// range.
    @inline(__always)
    static func element<Element>(_ position: Int, of elements: [Element]) {
        guard position >= 0, position < elements.count else { return }
        elements.withUnsafeBufferPointer { buffer in
            let start = UInt(bitPattern: buffer.baseAddress! + position)
            let end = start + UInt(MemoryLayout<Element>.size) - 1
            var line = start & ~UInt(lineBytes - 1)
            while line <= end {
                cgh_prefetch(UnsafeRawPointer(bitPattern: line))
                line += UInt(lineBytes)
            }
        }
    }
}
