@testable import GatehouseHTTP
import Testing

@Suite struct ArenaMemory {
    @Test func aBigArenaIsReleasedOnceEmpty() {
        var arena = ByteArena()
        arena.append(UnsafeRawBufferPointer(start: nil, count: 0))
        [UInt8](repeating: 7, count: 64 * 1024).withUnsafeBytes { arena.append($0) }
        #expect(arena.capacity >= 64 * 1024)
        arena.consume(32 * 1024)
        #expect(arena.capacity >= 64 * 1024, "still holds unread bytes")
        arena.consume(32 * 1024)
        #expect(arena.capacity == 0)
    }

    @Test func aSmallArenaIsKeptForTheNextRequest() {
        var arena = ByteArena()
        [UInt8](repeating: 7, count: 100).withUnsafeBytes { arena.append($0) }
        let capacity = arena.capacity
        arena.consume(100)
        #expect(arena.capacity == capacity && arena.isEmpty)
    }

    @Test func consumedBytesAreReclaimedBeforeGrowing() {
        var arena = ByteArena()
        [UInt8](repeating: 1, count: 3000).withUnsafeBytes { arena.append($0) }
        let capacity = arena.capacity
        arena.consume(2900)
        [UInt8](repeating: 2, count: 3000).withUnsafeBytes { arena.append($0) }
        #expect(arena.capacity == capacity && arena.count == 3100)
        #expect(arena.withUnreadBytes(upTo: 101) { Array($0) } == Array(repeating: 1, count: 100) + [2])
    }

    @Test func aParserLetsGoOfABigBodyOnceItIsReturned() {
        var parser = HTTPRequestParser()
        parser.append(Array("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 100000\r\n\r\n".utf8) + Array(repeating: 0x61, count: 100_000))
        guard case .request(let request) = parser.next() else { Issue.record("no request"); return }
        #expect(request.body.count == 100_000)
        #expect(parser.core.arena.capacity == 0 && parser.bufferedByteCount == 0)
    }
}
