/// Writes like ``ByteWriter``, onto the end of one it takes over, but gathers what it writes in
/// a buffer of its own (held in the writer, so on the stack) and appends that to the array in
/// one go: whenever it fills, for anything longer than it, and at ``finish()``.
///
/// Each append to an array checks that its buffer is unique and has room, 30 instructions for
/// a byte and about 100 for a few bytes through Array's generic path; a record of a few dozen
/// small fields (a `currency.transact`'s log record, its event's details) paid that for every
/// field and byte. Here a byte is a bounds check and a store.
public struct StagedByteWriter: ByteWriting {
    @usableFromInline typealias Staging = InlineArray<256, UInt8>

    /// How many bytes are gathered before they are appended.
    public static var stagedBytesMax: Int { Staging.count }

    @usableFromInline var target: ByteWriter
    @usableFromInline var staged = Staging(repeating: 0)
    @usableFromInline var stagedCount = 0

    /// Writes on after the bytes of `writer`, which it takes over (left empty until
    /// ``finish()`` hands them back).
    @inlinable public init(adopting writer: inout ByteWriter) {
        // An empty writer to leave behind: no capacity, no allocation.
        target = ByteWriter(capacity: 0)
        swap(&target, &writer)
    }

    /// Everything written, as the writer taken over with these bytes after its own (this one is
    /// left empty). `mutating`, not `consuming`: a writer consumed as the property of another
    /// may be copied first, and the array it holds would then be copied whole by the last append.
    @inlinable public mutating func finish() -> ByteWriter {
        appendStaged()
        var finished = ByteWriter(capacity: 0)
        swap(&finished, &target)
        return finished
    }

    @inlinable public mutating func writeUInt8(_ value: UInt8) {
        if stagedCount == Self.stagedBytesMax { appendStaged() }
        staged[stagedCount] = value
        stagedCount += 1
    }

    @inlinable public mutating func writeRaw(_ bytes: UnsafeBufferPointer<UInt8>) {
        if bytes.count > Self.stagedBytesMax - stagedCount {
            appendStaged()
            // Longer than the buffer: appended as it is, after what was gathered.
            if bytes.count > Self.stagedBytesMax { return target.writeRaw(bytes) }
        }
        guard let source = bytes.baseAddress else { return }
        let start = stagedCount
        withUnsafeMutableBytes(of: &staged) { buffer in
            UnsafeMutableRawBufferPointer(rebasing: buffer[start..<(start + bytes.count)]).copyMemory(
                from: UnsafeRawBufferPointer(start: source, count: bytes.count))
        }
        stagedCount += bytes.count
    }

    @inlinable mutating func appendStaged() {
        guard stagedCount > 0 else { return }
        let count = stagedCount
        withUnsafeBytes(of: &staged) { buffer in
            target.writeRaw(UnsafeBufferPointer(rebasing: buffer.assumingMemoryBound(to: UInt8.self)[..<count]))
        }
        stagedCount = 0
    }
}
