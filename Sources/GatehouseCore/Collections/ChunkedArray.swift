/// An array of values kept in chunks of a fixed number of elements (about 64 KiB each), for the
/// state's big tables: profiles, purchases and their holder links, the subscription timer heap,
/// a ledger's lists and history entries, term grants, idempotency records, the event feed's
/// entries, and the hash buckets of every index over them.
///
/// A snapshot captures the project's state as a value while the project goes on writing. With
/// one `Array` per table, the first append after the capture copied the whole table (hundreds of
/// megabytes for a busy tenant: page faults, a copy, and later a free of the old buffer, all
/// inside the project's actor, which answered nothing meanwhile). Here a copy shares the chunks;
/// a write after it copies the list of chunks and the one chunk it lands in. Growing never moves
/// an element either: a full chunk stays where it is and a new one starts.
///
/// Reading an element is two loads (the chunk, then the element).
/// Public for reading (a purchase table's `values`); inlinable, so readers in other modules get
/// the two loads rather than a generic call.
public struct ChunkedArray<Element>: RandomAccessCollection, MutableCollection {
    @usableFromInline var chunks: [[Element]] = []
    public private(set) var count = 0
    /// The chunks at the front whose elements are gone (``freeChunks(before:)``): empty arrays,
    /// so the positions after them stay where they were.
    private var freedChunks = 0

    init() {}

    init(_ elements: some Sequence<Element>) {
        reserveCapacity(elements.underestimatedCount)
        for element in elements { append(element) }
    }

    /// The elements of an array, copied a chunk at a time (a table read back from a snapshot).
    init(_ elements: [Element]) {
        let size = 1 << Self.chunkShift
        chunks.reserveCapacity((elements.count + size - 1) / size)
        for start in stride(from: 0, to: elements.count, by: size) {
            var chunk: [Element] = []
            chunk.reserveCapacity(size)
            chunk.append(contentsOf: elements[start..<Swift.min(start + size, elements.count)])
            chunks.append(chunk)
        }
        count = elements.count
    }

    init(repeating element: Element, count: Int) {
        precondition(count >= 0, "a negative count")
        chunks.reserveCapacity((count + Self.chunkMask) >> Self.chunkShift)
        var left = count
        while left > 0 {
            let size = Swift.min(left, 1 << Self.chunkShift)
            chunks.append([Element](repeating: element, count: size))
            left -= size
        }
        self.count = count
    }

    /// Elements per chunk: a power of two, about 64 KiB of elements (at least 16).
    @inlinable
    static var chunkShift: Int {
        let stride = Swift.max(1, MemoryLayout<Element>.stride)
        let perChunk = Swift.max(16, (64 << 10) / stride)
        return Int.bitWidth - 1 - perChunk.leadingZeroBitCount
    }

    @inlinable
    static var chunkMask: Int { (1 << chunkShift) - 1 }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { count }

    /// A position out of range traps in the arrays' own checks: a negative one or one past the
    /// last chunk in the list of chunks, one past the end within the last chunk in that chunk.
    @inlinable
    public subscript(position: Int) -> Element {
        get { chunks[position >> Self.chunkShift][position & Self.chunkMask] }
        _modify { yield &chunks[position >> Self.chunkShift][position & Self.chunkMask] }
    }

    mutating func append(_ element: Element) {
        if count & Self.chunkMask == 0 {
            // The first chunk grows as an array does (a small table stays small); later ones are
            // made whole at once.
            var chunk: [Element] = []
            if !chunks.isEmpty { chunk.reserveCapacity(1 << Self.chunkShift) }
            chunks.append(chunk)
        }
        chunks[chunks.count - 1].append(element)
        count += 1
    }

    /// Room in the list of chunks for `count` elements (chunks themselves are made as needed).
    mutating func reserveCapacity(_ count: Int) {
        chunks.reserveCapacity((count + Self.chunkMask) >> Self.chunkShift)
    }

    /// Removes and answers the last element; there must be one.
    @discardableResult
    mutating func removeLast() -> Element {
        precondition(count > 0, "cannot remove the last element of an empty array")
        let last = chunks[chunks.count - 1].removeLast()
        if chunks[chunks.count - 1].isEmpty { chunks.removeLast() }
        count -= 1
        return last
    }

    /// Frees the chunks that hold only positions before `position`, for a table that forgets its
    /// oldest elements (the event feed): nothing is moved, and every position after them stays
    /// where it was. A freed position must not be read again (its chunk's own check traps).
    mutating func freeChunks(before position: Int) {
        precondition(position >= 0 && position <= count, "position \(position) out of range")
        let whole = position >> Self.chunkShift
        while freedChunks < whole {
            chunks[freedChunks] = []
            freedChunks += 1
        }
    }

    /// Takes the freed chunks off the front of the list of chunks once they are at least half
    /// of it, so the list's own length stays bounded; every position moves down by the number
    /// answered (a whole number of chunks, 0 when nothing is taken off). Each chunk's slot is
    /// moved at most once for every chunk freed.
    mutating func dropFreedChunks() -> Int {
        guard freedChunks > 0, freedChunks * 2 >= chunks.count else { return 0 }
        let dropped = freedChunks << Self.chunkShift
        chunks.removeFirst(freedChunks)
        freedChunks = 0
        count -= dropped
        return dropped
    }

    mutating func removeAll() {
        chunks = []
        count = 0
        freedChunks = 0
    }

    /// How many chunks hold the elements (tests: what a copy shares).
    var chunkCount: Int { chunks.count }

    /// Where each chunk's elements lie (tests: which chunks a change left in place, and which it
    /// made anew).
    var chunkAddresses: [UnsafeRawPointer?] {
        chunks.map { chunk in chunk.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) } }
    }

    /// Whether chunk `index` of `self` and of `other` are one buffer (tests: what a copy shares).
    func sharesChunk(_ index: Int, with other: ChunkedArray) -> Bool {
        chunks[index].withUnsafeBufferPointer { mine in
            other.chunks[index].withUnsafeBufferPointer { theirs in mine.baseAddress == theirs.baseAddress }
        }
    }

    /// Asks for every cache line `self[position]` lies on (``Prefetch``); nothing for a
    /// position out of range.
    @inline(__always)
    func prefetch(_ position: Int) {
        guard position >= 0, position < count else { return }
        Prefetch.element(position & Self.chunkMask, of: chunks[position >> Self.chunkShift])
    }
}

extension ChunkedArray: Sendable where Element: Sendable {}


extension ChunkedArray: Equatable where Element: Equatable {
    public static func == (left: ChunkedArray, right: ChunkedArray) -> Bool {
        left.elementsEqual(right)
    }
}
