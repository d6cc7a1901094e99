import GatehouseCore
@testable import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// A front door unauthenticated clients cannot hold open (DESIGN.md, "Reliability and
/// security"): a deadline to say `hello` that trickled bytes do not put off, a small line limit
/// before it, and a budget of buffered bytes for the whole server that sheds the connections
/// holding the most unauthenticated input first. Deadlines run on a clock the test moves.
@Suite struct FrontDoor {
    /// A client whose reads give up after 10 s, so a connection that should have been closed
    /// and was not fails the test instead of hanging it.
    static func connect(_ server: TestServer) throws -> TestClient {
        try TestClient(connectingTo: server.address, timeoutMilliseconds: 10_000)
    }

    /// Reads until the server closes the connection; answers the lines it sent first.
    static func readUntilClosed(_ client: TestClient) async throws -> [String] {
        var lines: [String] = []
        while let line = try await client.readLine() { lines.append(line) }
        return lines
    }

    /// Polls `server.stats` until the server has taken `count` connections: a client's connect
    /// returns when the kernel has it, before the server accepts it and starts its deadlines.
    static func waitForOpen(_ count: Int, _ server: TestServer) async throws {
        let admin = try await server.admin()
        let deadline = ContinuousClock.now + .seconds(10)
        while try await admin.call("server.stats").object("connections")?.int("open") != Int64(count + 1) {
            guard ContinuousClock.now < deadline else {
                Issue.record("the server never had \(count) connections open")
                return
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        await admin.close()
    }

    static func isOpen(_ client: TestClient) async throws -> Bool {
        try await client.call("ping").isSuccess
    }

    @Test func aConnectionThatDoesNotSayHelloIsClosedAtItsDeadlineWhateverItTrickles() async throws {
        let clock = ManualConnectionClock()
        try await withTestServer({ $0.connectionClock = clock }) { server in
            #expect(server.server.configuration.helloTimeout == .seconds(10), "the default")
            let helloed = try Self.connect(server)
            try await helloed.hello(TestServer.adminKey)
            let silent = try Self.connect(server)
            let trickling = try Self.connect(server)
            try await Self.waitForOpen(3, server)
            try await trickling.sendRaw(Array(#"{"op":"hel"#.utf8))
            clock.advance(.seconds(6))
            // Bytes before a hello are not activity: they do not move the deadline.
            try await trickling.sendRaw(Array(#"lo","key":"wr"#.utf8))
            clock.advance(.seconds(5))
            #expect(try await Self.readUntilClosed(trickling).isEmpty)
            #expect(try await Self.readUntilClosed(silent).isEmpty)
            #expect(try await Self.isOpen(helloed), "a connection that said hello stays")
        }
    }

    @Test func aHelloInTimeEndsTheDeadline() async throws {
        let clock = ManualConnectionClock()
        try await withTestServer({
            $0.connectionClock = clock
            $0.helloTimeout = .seconds(3)
        }) { server in
            let late = try Self.connect(server)
            let prompt = try Self.connect(server)
            try await Self.waitForOpen(2, server)
            clock.advance(.seconds(2))
            try await prompt.hello(TestServer.adminKey)
            clock.advance(.seconds(2))
            #expect(try await Self.readUntilClosed(late).isEmpty)
            #expect(try await Self.isOpen(prompt))
        }
    }

    /// Before hello the idle timeout counts from the moment the connection was accepted.
    @Test func bytesBeforeHelloDoNotResetTheIdleTimer() async throws {
        let clock = ManualConnectionClock()
        try await withTestServer({
            $0.connectionClock = clock
            $0.helloTimeout = .seconds(100)
            $0.idleTimeout = .seconds(20)
        }) { server in
            let anonymous = try Self.connect(server)
            let helloed = try Self.connect(server)
            try await helloed.hello(TestServer.adminKey)
            try await Self.waitForOpen(2, server)
            clock.advance(.seconds(15))
            try await anonymous.sendRaw(Array("{".utf8))
            #expect(try await Self.isOpen(helloed), "a request after hello is activity")
            clock.advance(.seconds(6))
            #expect(try await Self.readUntilClosed(anonymous).isEmpty)
            #expect(try await Self.isOpen(helloed))
        }
    }

    @Test func beforeHelloALineIsLimitedTo16KiB() async throws {
        try await withTestServer { server in
            let limit = 16 * 1024
            #expect(server.server.configuration.unauthenticatedLineBytesMax == limit)
            let fits = try Self.connect(server)
            try await fits.send(#"{"op":"ping","pad":""# + String(repeating: "x", count: limit - 22) + #""}"#)
            #expect(try await fits.readAnswer().errorCode == .unauthenticated, "exactly 16 KiB is a line")
            let long = try Self.connect(server)
            try await long.send(#"{"op":"ping","pad":""# + String(repeating: "x", count: limit - 21) + #""}"#)
            let lines = try await Self.readUntilClosed(long)
            let refused = try #require(try lines.first.map { try JSONParser.parse($0).objectValue })
            #expect(refused?.errorCode == .lineTooLong)
            #expect(refused?.object("error")?.int("limit") == Int64(limit))
            // After hello the server's own limit applies.
            try await fits.hello(TestServer.adminKey)
            let big = try await fits.request(["id": 9, "op": "ping", "pad": .string(String(repeating: "y", count: 100_000))])
            #expect(big.isSuccess)
        }
    }

    /// Polls `server.stats` until the server holds `bytes` buffered (it reads on its own loop).
    static func waitForBuffered(_ bytes: Int, _ admin: TestClient) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while try await admin.call("server.stats").object("connections")?.int("buffered_bytes") != Int64(bytes) {
            guard ContinuousClock.now < deadline else {
                Issue.record("the server never held \(bytes) bytes")
                return
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    @Test func overTheBudgetTheConnectionsWithTheMostUnauthenticatedInputGoFirst() async throws {
        let kib = 1024
        try await withTestServer({ $0.bufferedBytesMax = 32 * kib }) { server in
            let admin = try await server.admin()
            let keys = try await server.createProject("acme")
            let backend = try Self.connect(server)
            try await backend.hello(keys.secretKey)
            // A backend half-way through a long line, and two strangers half-way through theirs.
            try await backend.sendRaw(Array(#"{"op":"config.get","pad":""#.utf8) + Array(repeating: UInt8(ascii: "b"), count: 12 * kib - 26))
            try await Self.waitForBuffered(12 * kib, admin)
            let smaller = try Self.connect(server)
            try await smaller.sendRaw(Array(repeating: UInt8(ascii: "s"), count: 10 * kib))
            try await Self.waitForBuffered(22 * kib, admin)
            let larger = try Self.connect(server)
            try await larger.sendRaw(Array(repeating: UInt8(ascii: "l"), count: 14 * kib))
            #expect(try await Self.readUntilClosed(larger).isEmpty, "36 KiB is over the budget: the most unauthenticated input goes")
            try await Self.waitForBuffered(22 * kib, admin)
            try await smaller.sendRaw(Array("\n".utf8))
            #expect(try await smaller.readAnswer().errorCode == .badJSON, "the smaller stranger is still served")
            try await backend.sendRaw(Array(#""}"#.utf8) + [UInt8(ascii: "\n")])
            #expect(try await backend.readAnswer().isSuccess, "and so is the backend")
            #expect(try await admin.call("server.stats").object("connections")?.int("buffered_bytes") == 0)
        }
    }

    @Test func withNoStrangerLeftTheConnectionHoldingTheMostGoes() async throws {
        let kib = 1024
        try await withTestServer({ $0.bufferedBytesMax = 32 * kib }) { server in
            let admin = try await server.admin()
            let first = try Self.connect(server)
            try await first.hello(TestServer.adminKey)
            let second = try Self.connect(server)
            try await second.hello(TestServer.adminKey)
            try await first.sendRaw(Array(repeating: UInt8(ascii: "a"), count: 20 * kib))
            try await Self.waitForBuffered(20 * kib, admin)
            try await second.sendRaw(Array(repeating: UInt8(ascii: "b"), count: 16 * kib))
            #expect(try await Self.readUntilClosed(first).isEmpty)
            try await Self.waitForBuffered(16 * kib, admin)
            try await second.sendRaw(Array("\n".utf8))
            #expect(try await second.readAnswer().errorCode == .badJSON)
        }
    }
}

/// `--hello-timeout` and `--max-buffered-bytes` on the command line.
@Suite struct FrontDoorOptions {
    static func configuration(_ arguments: [String]) throws -> ServerConfiguration {
        try ServeCommand.makeConfiguration(try ServeCommand.parser.parse(arguments), environment: [:])
    }

    @Test func theFlagsSetTheLimits() throws {
        let defaults = try Self.configuration([])
        #expect(defaults.helloTimeout == .seconds(10) && defaults.bufferedBytesMax == 256 << 20)
        let set = try Self.configuration(["--hello-timeout=3", "--max-buffered-bytes", "67108864"])
        #expect(set.helloTimeout == .seconds(3) && set.bufferedBytesMax == 64 << 20)
    }

    @Test(arguments: ["--hello-timeout=0", "--hello-timeout=3601", "--hello-timeout=soon", "--max-buffered-bytes=1000",
                      "--max-buffered-bytes=-1"])
    func valuesOutOfRangeAreUsageErrors(_ argument: String) {
        #expect(throws: UsageError.self) { try Self.configuration([argument]) }
    }
}
