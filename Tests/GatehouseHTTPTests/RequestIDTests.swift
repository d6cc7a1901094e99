import GatehouseBase
import GatehouseHTTP
import Testing

@Suite struct RequestIDAcceptance {
    @Test func printableIdsUpTo128AreKept() {
        #expect(HTTPRequestID.accept("abc-123") == "abc-123")
        #expect(HTTPRequestID.accept("a b~!") == "a b~!")
        let longest = String(repeating: "x", count: 128)
        #expect(HTTPRequestID.accept(longest) == longest)
        #expect(HTTPRequestID.accept("x") == "x")
    }

    @Test(arguments: [
        nil, "", String(repeating: "x", count: 129), " lead", "trail ", " ", "tab\there", "nul\u{0}", "del\u{7F}", "line\r\nX-Evil: 1",
        "caf\u{E9}",
    ])
    func othersAreReplaced(header: String?) {
        #expect(HTTPRequestID.accept(header) == nil)
    }
}

@Suite struct RequestIDGeneration {
    @Test func idsAreUniqueAndSharePerGeneratorPrefix() {
        var generator = HTTPRequestIDGenerator(random: SeededRandomSource(seed: 7))
        let ids = (0..<1000).map { _ in generator.next() }
        #expect(Set(ids).count == ids.count)
        let prefix = ids[0].split(separator: "-")[0]
        #expect(prefix.count == 16 && ids.allSatisfy { $0.hasPrefix(prefix + "-") })
        #expect(ids[0].hasSuffix("-1") && ids[15].hasSuffix("-10"))
        #expect(ids.allSatisfy { HTTPRequestID.accept($0) == $0 })
    }

    @Test func generatorsWithDifferentRandomnessDiffer() {
        var one = HTTPRequestIDGenerator(random: SeededRandomSource(seed: 1))
        var two = HTTPRequestIDGenerator(random: SeededRandomSource(seed: 2))
        #expect(one.next() != two.next())
        var system = HTTPRequestIDGenerator()
        #expect(system.next().count == 18)
    }
}
