import GatehouseHTTP
import Testing

@Test func theLinkedParserIsVersionTwo() {
    #expect(HTTPParserVersion.current.hasPrefix("2."))
}
