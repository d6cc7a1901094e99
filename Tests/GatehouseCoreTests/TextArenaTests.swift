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
