/// Bytes appended in runs (one event's details each), kept in chunks of about 64 KiB so that a
/// copy (a snapshot's capture of the state) shares them and the next append copies one chunk at
/// most, where one `[UInt8]` was copied whole: the ``ChunkedArray`` of byte runs that must stay
/// contiguous.
///
/// Offsets are logical: the runs lie end to end from 0 as if in one array (what the event feed's
/// entries and the snapshot's stored form count in). A run never crosses a chunk: one that
/// would is moved to a chunk of its own start, so reading a run is one slice of one chunk. A
/// chunk holds at least one run and may be bigger than 64 KiB when its one run is (or when it
/// is the details a snapshot was read back with).
struct ChunkedBytes: Sendable {
    /// Past this many bytes, a chunk takes no more runs.
    static let chunkBytes = 64 << 10

    private var chunks: [[UInt8]] = []
    /// The logical offset of each chunk's first byte.
    private var starts: [Int] = []
    /// Bytes held: the logical end.
    private(set) var count = 0

    init() {}

    /// Holds `bytes` as they are, in one chunk (details read back from a snapshot).
    init(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        chunks = [bytes]
        starts = [0]
        count = bytes.count
    }

    /// Appends one run, which `write` appends to the array it is lent (and must not otherwise
    /// change); answers the run's logical range.
    @discardableResult
    mutating func appendRun(_ write: (inout [UInt8]) -> Void) -> Range<Int> {
        var chunk: [UInt8]
        var chunkStart = count
        if let last = chunks.last, last.count < Self.chunkBytes {
            chunk = chunks.removeLast()
            chunkStart = starts.removeLast()
        } else {
            chunk = []
            chunk.reserveCapacity(Self.chunkBytes)
        }
        let runStart = chunk.count
        write(&chunk)
        precondition(chunk.count >= runStart, "a run only appends")
        let runLength = chunk.count - runStart
        if runStart > 0, chunk.count > Self.chunkBytes {
            // The run spills past the chunk: it starts a chunk of its own.
            let run = Array(chunk[runStart...])
            chunk.removeSubrange(runStart...)
            append(chunk, at: chunkStart)
            append(run, at: chunkStart + runStart)
        } else {
            append(chunk, at: chunkStart)
        }
        return (count - runLength)..<count
    }

    private mutating func append(_ chunk: [UInt8], at start: Int) {
        guard !chunk.isEmpty else { return }
        chunks.append(chunk)
        starts.append(start)
        count = start + chunk.count
    }

    /// The bytes of `range`, which must lie within one chunk (one run, or runs of one chunk): a
    /// slice of that chunk, not a copy.
    func slice(_ range: Range<Int>) -> ArraySlice<UInt8> {
        guard !range.isEmpty else { return [] }
        let chunk = chunkIndex(holding: range.lowerBound)
        let start = starts[chunk]
        return chunks[chunk][(range.lowerBound - start)..<(range.upperBound - start)]
    }

    /// Calls `body` with the bytes from `offset` to the end, chunk by chunk, in order.
    func forEachRun(from offset: Int, _ body: (ArraySlice<UInt8>) -> Void) {
        guard offset < count else { return }
        var chunk = chunkIndex(holding: offset)
        var from = offset - starts[chunk]
        while chunk < chunks.count {
            body(chunks[chunk][from...])
            from = 0
            chunk += 1
        }
    }

    /// The bytes from `offset` on, now from 0, in fresh chunks (those before it are dropped).
    func dropping(before offset: Int) -> ChunkedBytes {
        var rest = ChunkedBytes()
        forEachRun(from: offset) { run in rest.append(Array(run), at: rest.count) }
        return rest
    }

    /// The chunk that holds the byte at `offset`.
    private func chunkIndex(holding offset: Int) -> Int {
        precondition(offset >= 0 && offset < count, "byte \(offset) out of range")
        // The last chunk whose start is at or before `offset` (no chunk is empty).
        var low = 0
        var high = starts.count
        while high - low > 1 {
            let middle = (low + high) / 2
            if starts[middle] <= offset { low = middle } else { high = middle }
        }
        return low
    }

    /// How many chunks hold the bytes (tests).
    var chunkCount: Int { chunks.count }

    /// Whether chunk `index` of `self` and of `other` are one buffer (tests: what a copy shares).
    func sharesChunk(_ index: Int, with other: ChunkedBytes) -> Bool {
        chunks[index].withUnsafeBufferPointer { mine in
            other.chunks[index].withUnsafeBufferPointer { theirs in mine.baseAddress == theirs.baseAddress }
        }
    }
}
