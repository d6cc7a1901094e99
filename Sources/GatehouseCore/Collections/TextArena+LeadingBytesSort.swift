#if canImport(Glibc)
import Glibc
#endif

extension TextArena {
    /// The positions `0..<offsets.count` ordered as the strings at `offsets` order as `String`s
    /// do (the sorted parts of a snapshot). For ASCII strings, which often share a long prefix
    /// (a million terms `test:2000000…`, store transaction ids `2000000…`): each string's first
    /// 8 bytes after the prefix they all share, big-endian in a `UInt64`, are sorted along with
    /// its position, and only strings whose 8 bytes tie are compared in full. Comparing every
    /// pair in full read both strings from wherever they lay in the arena, a third of a second
    /// for a million. Strings that are not all ASCII are sorted by
    /// ``sortedPositionsComparingWhole(of:)``.
    func sortedPositions(of offsets: [Int]) -> [Int] {
        bytes.withContiguousBytes { all -> [Int]? in
            let places = offsets.map { Self.place(at: $0, in: all) }
            guard places.allSatisfy({ UnsafeBufferPointer(rebasing: all[$0.start..<$0.start + $0.length]).allSatisfy { $0 < 0x80 } })
            else { return nil }
            let shared = Self.sharedPrefixCount(places, in: all)
            var keyed = places.indices.map { (key: Self.leadingBytes(of: places[$0], after: shared, in: all), position: $0) }
            let base = all.baseAddress
            keyed.sort { a, b in
                guard a.key == b.key else { return a.key < b.key }
                let (x, y) = (places[a.position], places[b.position])
                let common = min(x.length, y.length)
                let order = common == 0 ? 0 : memcmp(base! + x.start, base! + y.start, common)
                return order != 0 ? order < 0 : x.length < y.length
            }
            return keyed.map(\.position)
        } ?? sortedPositionsComparingWhole(of: offsets)
    }

    /// How many leading bytes every string of `places` shares with the first.
    private static func sharedPrefixCount(_ places: [(start: Int, length: Int)], in all: UnsafeBufferPointer<UInt8>) -> Int {
        guard let first = places.first else { return 0 }
        var shared = first.length
        for place in places.dropFirst() where shared > 0 {
            var count = 0
            while count < min(shared, place.length), all[first.start + count] == all[place.start + count] { count += 1 }
            shared = count
        }
        return shared
    }

    /// Bytes `skipped ..< skipped + 8` of the string at `place`, big-endian, zeros past its end.
    private static func leadingBytes(of place: (start: Int, length: Int), after skipped: Int, in all: UnsafeBufferPointer<UInt8>)
        -> UInt64
    {
        var key: UInt64 = 0
        for index in skipped..<skipped + 8 {
            key = key << 8 | (index < place.length ? UInt64(all[place.start + index]) : 0)
        }
        return key
    }
}
