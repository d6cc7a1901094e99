import GatehouseBase
import GatehouseCore
import GatehousePosix
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// Limits that keep one client from hurting the others (DESIGN.md, "Reliability and security").
@Suite struct Limits {
    @Test func clientThatNeverReadsIsThrottledAndOthersAreServed() async throws {
        try await withTestServer { server in
            let hog = try await server.admin()
            hog.socket.setNonBlocking()
            let line = Array(#"{"op":"ping","pad":"................................................"}"#.utf8) + [10]
            let chunk = [UInt8]((0..<256).flatMap { _ in line })
            var sent = 0
            var blocked = false
            let cap = 512 << 20
            while sent < cap, !blocked {
                let result: IOResult<Int> = try chunk.withUnsafeBytes { raw in try hog.socket.write(raw) }
                switch result {
                case .processed(let count): sent += count
                case .wouldBlock: blocked = true
                }
            }
            #expect(blocked, "the server kept reading \(sent) bytes from a client that never reads")
            // Meanwhile, a well-behaved client is answered.
            let other = try await server.admin()
            #expect(try await other.call("ping").isSuccess)
            #expect(try await other.call("project.list").isSuccess)
        }
    }

    @Test func requestsHeldBackByTheLimitsAreRunOnceAnswersDrain() async throws {
        // Tiny limits, so the batch below is buffered far past them and must resume on its own.
        try await withTestServer({ $0.outputBytesHighWater = 2048; $0.inFlightRequestsMax = 4 }) { server in
            let client = try await server.admin()
            var batch = ""
            for index in 0..<2000 {
                batch += index % 3 == 0 ? #"{"id":\#(index),"op":"project.list"}"# : #"{"id":\#(index),"op":"server.stats"}"#
                batch += "\n"
            }
            try await client.sendRaw(Array(batch.utf8))
            for index in 0..<2000 {
                #expect(try await client.readAnswer()["id"] == .int(index))
            }
        }
    }

    @Test func connectionsOverTheLimitGetOverloadedAndTheOthersCarryOn() async throws {
        try await withTestServer({ $0.connectionsMax = 4 }) { server in
            var held: [TestClient] = []
            for _ in 0..<4 {
                let client = try await server.admin()
                held.append(client)
            }
            for _ in 0..<20 {
                let extra = try server.connect()
                let answer = try await extra.readAnswer()
                #expect(answer.errorCode == .overloaded)
                #expect(answer["id"] == .null)
                #expect(try await extra.readLine() == nil)
            }
            #expect(try await held[0].call("ping").isSuccess)
            let stats = try await held[1].call("server.stats")
            #expect((stats.object("connections")?.int("rejected") ?? 0) >= 20)
        }
    }

    @Test func idleConnectionIsClosed() async throws {
        try await withTestServer({ $0.idleTimeout = .seconds(1) }) { server in
            let client = try await server.admin()
            // No sleep: the read waits for the server's close (or fails the test after 15 s).
            #expect(try await client.readLine() == nil)
            // A fresh connection is served. Hello and ping go in one write, so a busy test
            // machine cannot leave this connection idle between them either.
            let fresh = try server.connect()
            try await fresh.sendRaw(Array("{\"op\":\"hello\",\"key\":\"\(TestServer.adminKey)\"}\n{\"op\":\"ping\"}\n".utf8))
            #expect(try await fresh.readAnswer().isSuccess)
            #expect(try await fresh.readAnswer().isSuccess)
        }
    }

    @Test func peerVanishingMidAnswerDoesNotHurtTheServer() async throws {
        try await withTestServer { server in
            for _ in 0..<5 {
                let client = try await server.admin()
                let batch = String(repeating: #"{"op":"project.list"}"# + "\n" + #"{"op":"server.stats"}"# + "\n", count: 2000)
                try await client.sendRaw(Array(batch.utf8))
                await client.close()
            }
            let fresh = try await server.admin()
            #expect(try await fresh.call("server.stats").isSuccess)
        }
    }
}
