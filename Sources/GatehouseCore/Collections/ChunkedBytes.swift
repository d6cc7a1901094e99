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
    /// The chunks at the front whose bytes are gone (``freeChunks(before:)``): empty arrays, their
    /// starts kept, until they are half of the list.
    private var freedChunks = 0
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
        if chunks.isEmpty || chunks[chunks.count - 1].count >= Self.chunkBytes {
            var fresh: [UInt8] = []
            fresh.reserveCapacity(Self.chunkBytes)
            chunks.append(fresh)
            starts.append(count)
        }
        // The last chunk is written in place.
        let last = chunks.count - 1
        let runStart = chunks[last].count
        write(&chunks[last])
        let runLength = chunks[last].count - runStart
        precondition(runLength >= 0, "a run only appends")
        if runStart > 0, chunks[last].count > Self.chunkBytes {
            // The run spills past the chunk: it starts a chunk of its own.
            let run = Array(chunks[last][runStart...])
            chunks[last].removeSubrange(runStart...)
            chunks.append(run)
            starts.append(count)
        }
        if chunks[chunks.count - 1].isEmpty {
            // Nothing written into a fresh chunk: no chunk is ever empty.
            chunks.removeLast()
            starts.removeLast()
        }
        count += runLength
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

    /// Calls `body` with the chunk that holds the byte at `offset` and where in it that byte lies
    /// (a reader that finds a run's end itself, as a length-prefixed string does).
    func withChunk<Result>(holding offset: Int, _ body: (UnsafeBufferPointer<UInt8>, Int) throws -> Result) rethrows
        -> Result
    {
        let chunk = chunkIndex(holding: offset)
        return try chunks[chunk].withUnsafeBufferPointer { try body($0, offset - starts[chunk]) }
    }

    /// Calls `body` with every byte end to end, at its logical offset: the one chunk itself, or a
    /// copy of all of them (for a pass over many runs, such as a sort).
    func withContiguousBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        precondition(freedChunks == 0 && starts.first ?? 0 == 0, "the bytes no longer start at 0")
        if chunks.count == 1 { return try chunks[0].withUnsafeBufferPointer(body) }
        var all: [UInt8] = []
        all.reserveCapacity(count)
        for chunk in chunks { all.append(contentsOf: chunk) }
        return try all.withUnsafeBufferPointer(body)
    }

    /// Frees the chunks whose bytes all lie before `offset` (the runs of events the feed has
    /// forgotten). Nothing is moved: offsets stay logical, and reading a freed byte traps. Once
    /// the freed chunks are half the list, their slots are taken off its front.
    mutating func freeChunks(before offset: Int) {
        while freedChunks < chunks.count, end(ofChunk: freedChunks) <= offset {
            chunks[freedChunks] = []
            freedChunks += 1
        }
        guard freedChunks > 0, freedChunks * 2 >= chunks.count else { return }
        chunks.removeFirst(freedChunks)
        starts.removeFirst(freedChunks)
        freedChunks = 0
    }

    private func end(ofChunk index: Int) -> Int {
        index + 1 < starts.count ? starts[index + 1] : count
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

    /// The bytes the chunks hold, freed ones excluded (tests: what forgetting gave back).
    var heldCount: Int { chunks.reduce(0) { $0 + $1.count } }

    /// Whether chunk `index` of `self` and of `other` are one buffer (tests: what a copy shares).
    func sharesChunk(_ index: Int, with other: ChunkedBytes) -> Bool {
        chunks[index].withUnsafeBufferPointer { mine in
            other.chunks[index].withUnsafeBufferPointer { theirs in mine.baseAddress == theirs.baseAddress }
        }
    }
}
