@testable import GatehouseCore
import Testing

/// Sorting by the bytes after a shared prefix gives exactly the order `String`s sort in.
@Suite struct TextArenaLeadingBytesSort {
    private func sorted(_ strings: [String]) -> [String] {
        var arena = TextArena()
        let offsets = strings.map { arena.append($0) }
        return arena.sortedPositions(of: offsets).map { strings[$0] }
    }

    @Test(arguments: [
        [],
        ["only"],
        ["test:2000000000012", "test:2000000000003", "test:200000000001", "test:2000000000012x", "test:20000000000"],
        // Ties in the 8 bytes after the shared prefix, a NUL inside, the empty string.
        ["abcdefghij-2", "abcdefghij-1", "abcdefgh", "abcdefgh\u{0}", "", "abcdefghij"],
        // Not ASCII: sorted as `String`s.
        ["é", "e", "z", "ea"],
    ])
    func stringsSortAsStrings(_ strings: [String]) {
        #expect(sorted(strings) == strings.sorted())
    }

    @Test func manyIdsSharingAPrefixSortAsStrings() {
        var generator = SystemRandomNumberGenerator()
        let strings = (0..<3_000).map { _ in "2000000" + String(UInt64.random(in: 0..<100_000_000, using: &generator)) }
        #expect(sorted(strings) == strings.sorted())
    }
}
