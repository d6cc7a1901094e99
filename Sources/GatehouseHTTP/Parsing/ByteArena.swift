/// The bytes a connection has read and http_parser has not yet been given.
///
/// A zero-filled array: `start..<end` holds the unread bytes and `end..<storage.count` is free
/// tail space a caller may `read(2)` into. http_parser copies out what it needs as it goes (into
/// the request being assembled), so consumed bytes are never needed again; they are reclaimed
/// lazily, when the tail needs room, so pipelined requests cost no copying each.
struct ByteArena {
    private var storage: [UInt8] = []
    private var start = 0
    private var end = 0

    /// An arena larger than this is released once it is empty, so one big request does not pin
    /// its megabyte to an idle keep-alive connection.
    private static let retainedCapacity = 16 * 1024
    private static let initialCapacity = 4 * 1024

    var count: Int { end - start }
    var isEmpty: Bool { start == end }
    var capacity: Int { storage.count }

    // MARK: Filling

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        makeRoom(for: bytes.count)
        let offset = end
        storage.withUnsafeMutableBytes { storage in
            UnsafeMutableRawBufferPointer(rebasing: storage[offset...]).copyMemory(from: bytes)
        }
        end += bytes.count
    }

    /// Ensures `minimumCapacity` free bytes at the tail, lets `body` write into all of it, and
    /// keeps the first n bytes it reports (none when `keep` is false or n is negative).
    mutating func withUnsafeWritableTail<E: Error>(
        minimumCapacity: Int,
        keep: Bool,
        _ body: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) -> Int {
        precondition(minimumCapacity >= 0, "minimumCapacity must not be negative")
        makeRoom(for: max(minimumCapacity, 1))
        let offset = end
        // Array's closures rethrow untyped errors; a Result carries the typed one across.
        let outcome = storage.withUnsafeMutableBytes { storage in
            Result { () throws(E) -> Int in try body(UnsafeMutableRawBufferPointer(rebasing: storage[offset...])) }
        }
        let written = try outcome.get()
        precondition(written <= storage.count - offset, "body reported more bytes than the tail holds")
        if written > 0, keep { end += written }
        return written
    }

    /// Ensures `count` free bytes after `end`, compacting before growing.
    private mutating func makeRoom(for count: Int) {
        guard storage.count - end < count else { return }
        if start > 0 {
            compact()
            guard storage.count - end < count else { return }
        }
        let newSize = max(storage.count * 2, end + count, Self.initialCapacity)
        storage.append(contentsOf: repeatElement(0, count: newSize - storage.count))
    }

    private mutating func compact() {
        let (from, count) = (start, end - start)
        storage.withUnsafeMutableBytes { raw in
            raw.baseAddress!.copyMemory(from: raw.baseAddress! + from, byteCount: count)
        }
        (start, end) = (0, count)
    }

    // MARK: Reading

    /// Calls `body` with at most `limit` of the unread bytes, from the first.
    func withUnreadBytes<R>(upTo limit: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let range = start..<(start + min(limit, end - start))
        return storage.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    var first: UInt8? { isEmpty ? nil : storage[start] }

    /// Marks `count` bytes as read; an emptied arena starts over at offset 0, and a big one is let go.
    mutating func consume(_ count: Int) {
        precondition(count >= 0 && count <= end - start, "consumed more bytes than were buffered")
        start += count
        guard start == end else { return }
        (start, end) = (0, 0)
        if storage.count > Self.retainedCapacity { storage = [] }
    }

    mutating func removeAll() {
        consume(count)
    }
}
