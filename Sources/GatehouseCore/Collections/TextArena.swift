#if canImport(Glibc)
import Glibc
#endif

/// Strings kept end to end, each a LEB128 length then its UTF-8 bytes, and named by the offset
/// where it starts: a million short strings cost their bytes and an 8-byte offset each, where a
/// million `String`s cost 16 bytes each plus a heap object for every one longer than 15 bytes,
/// and a retain and release at every copy. The bytes lie in ``ChunkedBytes`` (each string in one
/// chunk), so a snapshot's copy of the state costs the next string a chunk, not the arena.
///
/// The arena only grows; its owner copies what it still needs into a fresh one
/// (``append(_:from:)``) once enough of it is dead.
struct TextArena: Sendable {
    private(set) var bytes = ChunkedBytes()

    init() {}

    /// Bytes held, live or dead.
    var count: Int { bytes.count }

    /// Appends `text`; answers its offset.
    mutating func append(_ text: String) -> Int {
        var text = text
        return text.withUTF8 { append(utf8: $0) }
    }

    /// Appends UTF-8 bytes as one string; answers its offset.
    mutating func append(utf8: UnsafeBufferPointer<UInt8>) -> Int {
        bytes.appendRun { bytes in
            var remaining = UInt64(utf8.count)
            while remaining >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: remaining) | 0x80)
                remaining >>= 7
            }
            bytes.append(UInt8(remaining))
            bytes.append(contentsOf: utf8)
        }.lowerBound
    }

    /// Copies the string at `offset` of `other`; answers its offset here.
    mutating func append(_ offset: Int, from other: TextArena) -> Int {
        other.withUTF8(at: offset) { append(utf8: $0) }
    }

    /// The UTF-8 bytes of the string at `offset`, lent for the call.
    func withUTF8<Result>(at offset: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try bytes.withChunk(holding: offset) { chunk, offset in
            let (start, length) = Self.place(at: offset, in: chunk)
            return try body(UnsafeBufferPointer(rebasing: chunk[start..<(start + length)]))
        }
    }

    /// Where the bytes of the string at `offset` start, and how many there are (its length is
    /// the LEB128 varint at `offset`).
    static func place(at offset: Int, in all: UnsafeBufferPointer<UInt8>) -> (start: Int, length: Int) {
        var length = 0
        var shift = 0
        var position = offset
        while true {
            let byte = all[position]
            length |= Int(byte & 0x7F) << shift
            position += 1
            if byte < 0x80 { break }
            shift += 7
        }
        return (position, length)
    }

    func string(at offset: Int) -> String {
        withUTF8(at: offset) { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether the string at `offset` has exactly the bytes of `utf8`.
    func hasBytes(at offset: Int, _ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        withUTF8(at: offset) { stored in
            stored.count == utf8.count && (stored.isEmpty || memoryEquals(stored, utf8))
        }
    }
}

extension TextArena {
    /// The order of ``sortedPositions(of:)``, each pair compared whole. Each string is found
    /// once; when all are ASCII (where `String` order is byte order) the sort compares bytes in
    /// place, otherwise it compares `String`s. A million keys compared through
    /// ``withUTF8(at:_:)`` took most of a second.
    func sortedPositionsComparingWhole(of offsets: [Int]) -> [Int] {
        bytes.withContiguousBytes { all -> [Int] in
            var starts = [Int](repeating: 0, count: offsets.count)
            var lengths = [Int](repeating: 0, count: offsets.count)
            var allASCII = true
            for (position, offset) in offsets.enumerated() {
                let (start, length) = Self.place(at: offset, in: all)
                starts[position] = start
                lengths[position] = length
                if allASCII, !UnsafeBufferPointer(rebasing: all[start..<start + length]).allSatisfy({ $0 < 0x80 }) {
                    allASCII = false
                }
            }
            guard allASCII else {
                let strings = offsets.map { string(at: $0) }
                return strings.indices.sorted { strings[$0] < strings[$1] }
            }
            let base = all.baseAddress!
            return starts.withUnsafeBufferPointer { starts in
                lengths.withUnsafeBufferPointer { lengths in
                    Array(offsets.indices).sorted { a, b in
                        let common = min(lengths[a], lengths[b])
                        let order = common == 0 ? 0 : memcmp(base + starts[a], base + starts[b], common)
                        return order != 0 ? order < 0 : lengths[a] < lengths[b]
                    }
                }
            }
        }
    }
}

/// Byte-wise equality of two buffers of the same length.
@inline(__always)
func memoryEquals(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
    guard a.count == b.count else { return false }
    var index = 0
    // Eight bytes a step, then the rest one by one.
    while index + 8 <= a.count {
        let left = UnsafeRawPointer(a.baseAddress! + index).loadUnaligned(as: UInt64.self)
        let right = UnsafeRawPointer(b.baseAddress! + index).loadUnaligned(as: UInt64.self)
        if left != right { return false }
        index += 8
    }
    while index < a.count {
        if a[index] != b[index] { return false }
        index += 1
    }
    return true
}
