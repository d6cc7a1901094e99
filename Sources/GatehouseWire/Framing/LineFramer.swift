/// Cuts a connection's byte stream into request lines (PROTOCOL.md, "Transport and framing").
///
/// A value-type state machine with no I/O: the connection reads socket bytes into it (through
/// `withUnsafeWritableTail`, straight from `read(2)`, or `append`) and calls `next()` until it
/// answers `.needMoreData`.
///
/// The line limit applies to a line's bytes excluding the `"\n"` terminator; a `"\r"` before
/// it counts. A line of exactly `maxLineBytes` bytes is accepted, one byte more is
/// `.lineTooLong`, and that is known as soon as more than `maxLineBytes` bytes are buffered
/// without a newline, because a hostile peer may never send one.
///
/// Memory: bytes of returned lines are reclaimed lazily, when the tail needs room, so a burst
/// of small lines costs no copying per line; only the unfinished line at the end is moved.
public struct LineFramer: Sendable {
    /// May change between lines (a connection's limit grows once it has said `hello`); a line
    /// already too long stays refused.
    public var maxLineBytes: Int {
        didSet { precondition(maxLineBytes > 0, "maxLineBytes must be positive") }
    }

    /// A zero-filled arena; `start..<end` holds the bytes not yet returned as lines and
    /// `end..<storage.count` is free tail space.
    private var storage: [UInt8] = []
    private var start = 0
    private var end = 0
    /// `start..<scanned` is known to hold no newline, so a long line is searched only once.
    private var scanned = 0
    private var isTooLong = false

    /// An arena larger than this is released once it is empty, so one big line does not pin
    /// megabytes to an idle connection for its lifetime.
    private static let retainedCapacity = 16 * 1024
    private static let initialCapacity = 4 * 1024

    public enum Next: Equatable, Sendable {
        case line(Range<Int>)
        case needMoreData
        case lineTooLong
    }

    public init(maxLineBytes: Int) {
        precondition(maxLineBytes > 0, "maxLineBytes must be positive")
        self.maxLineBytes = maxLineBytes
    }

    /// Bytes buffered but not yet returned as lines.
    public var bufferedByteCount: Int { end - start }

    /// The storage that `.line` ranges index into; valid until the next mutating call.
    public var buffer: [UInt8] { storage }

    /// Calls `body` with the bytes of a line that `next()` returned (valid until the next
    /// mutating call).
    public func withLine<R>(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        precondition(range.lowerBound >= 0 && range.upperBound <= end, "line range is stale or foreign")
        return try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    // MARK: Filling

    /// Copies bytes in. After `.lineTooLong` they are dropped: the connection is closing.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !isTooLong, !bytes.isEmpty else { return }
        makeRoom(for: bytes.count)
        let offset = end
        storage.withUnsafeMutableBytes { storage in
            UnsafeMutableRawBufferPointer(rebasing: storage[offset...]).copyMemory(from: bytes)
        }
        end += bytes.count
    }

    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// Lets the caller read(2) straight into the buffer: ensures at least `minimumCapacity`
    /// writable bytes at the tail, calls `body` with all the free tail, and keeps the first n
    /// bytes where n is what body returns (0...count; negative = nothing kept). Returns n.
    public mutating func withUnsafeWritableTail(
        minimumCapacity: Int,
        _ body: (UnsafeMutableRawBufferPointer) throws -> Int
    ) rethrows -> Int {
        precondition(minimumCapacity >= 0, "minimumCapacity must not be negative")
        makeRoom(for: max(minimumCapacity, 1))
        let offset = end
        let written = try storage.withUnsafeMutableBytes { storage in
            try body(UnsafeMutableRawBufferPointer(rebasing: storage[offset...]))
        }
        precondition(written <= storage.count - offset, "body reported more bytes than the tail holds")
        if written > 0, !isTooLong { end += written }
        return written
    }

    /// Ensures `count` free bytes after `end`, compacting before growing.
    private mutating func makeRoom(for count: Int) {
        if start == end { reset() }
        guard storage.count - end < count else { return }
        if start > 0 {
            compact()
            guard storage.count - end < count else { return }
        }
        let newSize = max(storage.count * 2, end + count, Self.initialCapacity)
        storage.append(contentsOf: repeatElement(0, count: newSize - storage.count))
    }

    /// Everything is consumed: start over at offset 0 for free, and let go of a big arena.
    private mutating func reset() {
        (start, end, scanned) = (0, 0, 0)
        if storage.count > Self.retainedCapacity { storage = [] }
    }

    /// Moves the unconsumed bytes to the front.
    private mutating func compact() {
        let (from, count) = (start, end - start)
        storage.withUnsafeMutableBytes { raw in
            raw.baseAddress!.copyMemory(from: raw.baseAddress! + from, byteCount: count)
        }
        (start, end, scanned) = (0, count, scanned - from)
    }

    // MARK: Lines

    /// The next complete line as a range into `buffer` (valid until the next mutating call),
    /// without its "\n" and without one "\r" before it. Blank lines (empty, or only
    /// spaces/tabs/\r) are skipped, never returned. After `.lineTooLong` the framer stays in
    /// that state and drops its bytes.
    public mutating func next() -> Next {
        while !isTooLong {
            guard let newline = firstNewline() else { return waitForNewline() }
            let lineStart = start
            start = newline + 1
            scanned = start
            guard newline - lineStart <= maxLineBytes else { return tooLong() }
            let line = withoutCarriageReturn(lineStart..<newline)
            if !isBlank(line) { return .line(line) }
        }
        return .lineTooLong
    }

    private mutating func waitForNewline() -> Next {
        scanned = end
        return end - start > maxLineBytes ? tooLong() : .needMoreData
    }

    private mutating func tooLong() -> Next {
        isTooLong = true
        start = end
        return .lineTooLong
    }

    private func withoutCarriageReturn(_ line: Range<Int>) -> Range<Int> {
        guard !line.isEmpty, storage[line.upperBound - 1] == UInt8(ascii: "\r") else { return line }
        return line.lowerBound..<(line.upperBound - 1)
    }

    private func isBlank(_ line: Range<Int>) -> Bool {
        storage.withUnsafeBytes { raw in
            !raw[line].contains { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") && $0 != UInt8(ascii: "\r") }
        }
    }

    /// The offset of the first "\n" in `scanned..<end`.
    private func firstNewline() -> Int? {
        let (from, to) = (scanned, end)
        guard from < to else { return nil }
        return storage.withUnsafeBytes { Self.firstNewline(in: $0, from: from, to: to) }
    }

    /// A word at a time (SWAR): XOR turns '\n' bytes into zero bytes, and the classic
    /// "has a zero byte" test finds them eight at a time, without Glibc's memchr.
    private static func firstNewline(in raw: UnsafeRawBufferPointer, from: Int, to: Int) -> Int? {
        let newlines: UInt64 = 0x0A0A_0A0A_0A0A_0A0A
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var index = from
        while to - index >= 8 {
            // Little-endian order makes the lowest flagged byte the first in memory; bytes above
            // a real match may be flagged falsely, which the lowest-bit pick ignores.
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) ^ newlines
            let zeros = (word &- ones) & ~word & highs
            if zeros != 0 { return index + zeros.trailingZeroBitCount / 8 }
            index += 8
        }
        while index < to {
            if raw[index] == UInt8(ascii: "\n") { return index }
            index += 1
        }
        return nil
    }
}
