@testable import GatehouseCore
import Testing

/// Strings kept in an arena sort as `String`s do: byte order for ASCII (shorter prefixes first),
/// `String` order once any is not ASCII.
@Suite struct TextArenaSortTests {
    static func sorted(_ strings: [String]) -> [String] {
        var arena = TextArena()
        let offsets = strings.map { arena.append($0) }
        return arena.sortedPositionsComparingWhole(of: offsets).map { strings[$0] }
    }

    @Test(arguments: [
        [],
        ["b"],
        ["test:t2", "test:t10", "test:t1", "", "test:", "app_store:9", "test:t1"],
        ["Zeta", "alpha", "Alpha", "_x", "0", "a b", String(repeating: "k", count: 200), String(repeating: "k", count: 199)],
        ["é", "e\u{301}", "z", "e", "Ω", "f"],
        ["\u{212A}", "K", "k", "a"],
    ])
    func sortsAsStringsDo(_ strings: [String]) {
        #expect(Self.sorted(strings) == strings.sorted())
    }

    @Test func manyRandomASCIIKeysSortByBytes() {
        var random = SystemRandomNumberGenerator()
        let strings = (0..<20_000).map { _ in "test:" + String(UInt64.random(in: 0...UInt64.max, using: &random) % 1_000_000_007) }
        #expect(Self.sorted(strings) == strings.sorted())
    }
}

/// The arena's bytes lie in chunks: strings read back whole wherever they fall, and a copy
/// keeps what it had while the original goes on growing.
@Suite struct TextArenaChunkTests {
    @Test func stringsInManyChunksReadBackWhole() {
        var arena = TextArena()
        let strings = (0..<30_000).map { "key-\($0)-" + String(repeating: "x", count: $0 % 40) }
        let offsets = strings.map { arena.append($0) }
        #expect(arena.bytes.chunkCount > 5)
        #expect(zip(offsets, strings).allSatisfy { arena.string(at: $0) == $1 })
        let long = String(repeating: "L", count: 3 * ChunkedBytes.chunkBytes)
        let longOffset = arena.append(long)
        #expect(arena.string(at: longOffset) == long, "a string longer than a chunk has a chunk of its own")
    }

    @Test func stringsInManyChunksSortAsStringsDo() {
        var arena = TextArena()
        var generator = SystemRandomNumberGenerator()
        let strings = (0..<30_000).map { _ in "2000000" + String(UInt64.random(in: 0..<100_000_000, using: &generator)) }
        let offsets = strings.map { arena.append($0) }
        #expect(arena.bytes.chunkCount > 1)
        #expect(arena.sortedPositions(of: offsets).map { strings[$0] } == strings.sorted())
        #expect(arena.sortedPositionsComparingWhole(of: offsets).map { strings[$0] } == strings.sorted())
    }

    @Test func aCopyKeepsItsStringsWhileTheOriginalGrows() {
        var arena = TextArena()
        let offsets = (0..<10_000).map { arena.append("s\($0)") }
        let captured = arena
        for number in 0..<10_000 { _ = arena.append("t\(number)") }
        #expect(captured.count < arena.count)
        #expect(offsets.enumerated().allSatisfy { captured.string(at: $1) == "s\($0)" && arena.string(at: $1) == "s\($0)" })
    }
}
