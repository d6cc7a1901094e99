import GatehouseBase
import GatehouseCore
import GatehouseHTTP
import GatehousePosix
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// Random and mutated HTTP requests against the real listener (bounded: a few hundred, seeded,
/// so a failure repeats): whatever arrives, the server answers or closes, changes nothing, and
/// still answers a good request on a new connection.
@Suite struct HTTPFuzz {
    static let rounds = 300

    /// A good request to mutate: a write, so a mutation that slipped through would show in the state.
    static func seed(_ key: String) -> [UInt8] {
        TestHTTPClient.requestBytes(
            "POST", "/v1/op", headers: [("Authorization", "Bearer \(key)"), ("X-Request-Id", "fuzz")],
            body: Array(#"{"op":"config.put","config":{"entitlements":[{"id":"changed"}]}}"#.utf8)
        )
    }

    static func mutate(_ bytes: [UInt8], _ random: SeededRandomSource) -> [UInt8] {
        var bytes = bytes
        func position() -> Int { Int(random.randomUInt64() % UInt64(max(bytes.count, 1))) }
        for _ in 0...(random.randomUInt64() % 4) {
            switch random.randomUInt64() % 7 {
            case 0 where !bytes.isEmpty: bytes[position()] ^= UInt8(1 << (random.randomUInt64() % 8))
            case 1: bytes.insert(UInt8(truncatingIfNeeded: random.randomUInt64()), at: min(position(), bytes.count))
            case 2 where !bytes.isEmpty: bytes.remove(at: position())
            case 3: bytes = Array(bytes.prefix(position()))
            case 4:
                let header = Array("Content-Length: \(random.randomUInt64() % 5000)\r\n".utf8)
                bytes.insert(contentsOf: header, at: min(18, bytes.count))
            case 5: bytes.insert(contentsOf: Array("Transfer-Encoding: chunked\r\n".utf8), at: min(18, bytes.count))
            default: bytes = random.randomBytes(count: Int(random.randomUInt64() % 300))
            }
        }
        return bytes
    }

    @Test func mutatedRequestsChangeNothingAndTheServerGoesOn() async throws {
        try await withTestServer({ $0.httpBodyBytesMax = 4096 }) { server in
            let keys = try await server.createProject("acme")
            // The mutations are made with the public key: a config.put that got through would be
            // `forbidden`, so any that changed the config would be a hole.
            let good = Self.seed(keys.publicKey)
            let random = SeededRandomSource(seed: 18)
            var statuses: [Int: Int] = [:]
            for _ in 0..<Self.rounds {
                let client = try TestHTTPClient(connectingTo: server.httpAddress, timeoutMilliseconds: 10_000)
                try await client.send(Self.mutate(good, random))
                // A request cut short waits for the rest: end the stream so the server answers or closes.
                client.socket.shutdownWrite()
                while let response = try? await client.readResponse() {
                    statuses[response.status, default: 0] += 1
                    #expect([200, 400, 401, 403, 404, 405, 408, 413, 431].contains(response.status), "\(response.status)")
                }
                await client.close()
            }
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
            #expect(try await backend.call("config.get").object("config")?["entitlements"] == [], "\(statuses)")
            let after = try await HTTPListener.connect(server).request("GET", "/healthz")
            #expect(after.status == 200)
        }
    }
}
