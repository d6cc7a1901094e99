import Foundation
import GatehouseCore
import GatehouseHTTP
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// `GET /metrics` (HTTP.md, "Metrics"): the admin key's unless `--metrics-public`, read by
/// Python's `prometheus_client` parser (a real reader of the format), with counters that move.
@Suite struct MetricsEndpoint {
    /// What `prometheus_client` reads: each family's type, and each sample's name, labels and value.
    struct Scrape {
        let families: [String: JSONObject]

        func type(_ family: String) -> String? { families[family]?.string("type") }

        /// The value of the sample `name` whose labels include `labels`, or nil.
        func value(_ family: String, _ name: String? = nil, _ labels: [String: String] = [:]) -> Double? {
            for sample in families[family]?["samples"]?.arrayValue ?? [] {
                guard let sample = sample.objectValue, sample.string("name") == (name ?? family),
                    let sampleLabels = sample.object("labels"),
                    labels.allSatisfy({ sampleLabels.string($0.key) == $0.value })
                else { continue }
                return sample["value"]?.numberValue?.double
            }
            return nil
        }
    }

    static let parse = """
        import json, sys
        from prometheus_client.parser import text_string_to_metric_families
        text = open(sys.argv[1]).read()
        out = {}
        for family in text_string_to_metric_families(text):
            out[family.name] = {"type": family.type, "samples": [
                {"name": s.name, "labels": s.labels, "value": s.value} for s in family.samples]}
        print(json.dumps(out))
        """

    static func scrape(_ server: TestServer, key: String? = TestServer.adminKey) async throws -> Scrape {
        let client = try HTTPListener.connect(server)
        let response = try await client.request("GET", "/metrics", headers: key.map { [("Authorization", "Bearer \($0)")] } ?? [])
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8")
        let directory = try await offThePool { try TemporaryDirectory() }
        let path = directory.appending("metrics.txt")
        let body = response.body
        try await offThePool { try Data(body).write(to: URL(fileURLWithPath: path)) }
        let output = try await PythonProcess.run(parse, arguments: [path])
        let object = try #require(try JSONParser.parse(output).objectValue)
        var families: [String: JSONObject] = [:]
        for member in object.members { families[member.key] = member.value.objectValue }
        return Scrape(families: families)
    }

    @Test func onlyTheAdminKeyReadsTheMetricsUnlessTheyArePublic() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let client = try HTTPListener.connect(server)
            #expect(try await client.request("GET", "/metrics").status == 401)
            #expect(try await client.request("GET", "/metrics", headers: [("Authorization", "Bearer nope_nope_nope_nope")]).status == 401)
            #expect(try await client.request("GET", "/metrics", headers: [("Authorization", "Bearer \(keys.secretKey)")]).status == 403)
            #expect(try await client.request("GET", "/metrics", headers: [("Authorization", "Bearer \(TestServer.adminKey)")]).status == 200)
        }
        try await withTestServer({ $0.metricsPublic = true }) { server in
            let anyone = try HTTPListener.connect(server)
            #expect(try await anyone.request("GET", "/metrics").status == 200)
        }
    }

    @Test func aRealParserReadsTheMetricsAndTheCountersMove() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let line = try server.connect()
            try await line.hello(keys.secretKey)
            let before = try await Self.scrape(server)
            #expect(before.type("gatehouse_requests") == "counter")
            #expect(before.type("gatehouse_request_duration_seconds") == "histogram")
            #expect(before.value("gatehouse_build_info", nil, ["version": GatehouseVersion.current]) == 1)
            #expect(before.value("gatehouse_projects") == 1)
            #expect(before.value("gatehouse_read_only") == 0)
            #expect((before.value("process_resident_memory_bytes") ?? 0) > 0)
            #expect((before.value("process_open_fds") ?? 0) > 0)
            #expect((before.value("process_start_time_seconds") ?? 0) > 1_700_000_000)
            #expect(before.value("gatehouse_connections", nil, ["transport": "line"]) ?? 0 >= 1)

            let pings = ["transport": "line", "op": "ping", "code": "ok"]
            let pingsBefore = before.value("gatehouse_requests", "gatehouse_requests_total", pings) ?? 0
            let appendsBefore = before.value("gatehouse_wal_appends", "gatehouse_wal_appends_total") ?? 0
            for _ in 0..<3 { #expect(try await line.call("ping").isSuccess) }
            // Pipelined: the answers of one read are counted together, each of them.
            try await line.sendRaw(Array(String(repeating: #"{"op":"ping"}"# + "\n", count: 4).utf8))
            for _ in 0..<4 { #expect(try await line.readAnswer().isSuccess) }
            #expect(try await line.call("profile.create").isSuccess)
            #expect(try await line.call("nope").errorCode == .unknownOp)

            let after = try await Self.scrape(server)
            #expect(after.value("gatehouse_requests", "gatehouse_requests_total", pings) == pingsBefore + 7)
            #expect(after.value("gatehouse_requests", "gatehouse_requests_total", ["transport": "line", "op": "other", "code": "unknown_op"]) == 1)
            #expect(after.value("gatehouse_request_duration_seconds", "gatehouse_request_duration_seconds_count", ["transport": "line", "op": "ping"])
                ?? 0 >= 7)
            #expect((after.value("gatehouse_wal_appends", "gatehouse_wal_appends_total") ?? 0) > appendsBefore)
            #expect(after.value("gatehouse_profiles") == 1)
            #expect((after.value("gatehouse_requests", "gatehouse_requests_total", ["transport": "http", "op": "other", "code": "ok"]) ?? 0) >= 1,
                    "the first scrape is counted")
        }
    }

    @Test func everyLoopsCountsAreAddedUp() async throws {
        // Each loop counts its own connections' answers; a scrape shows their sum.
        try await withTestServer({ $0.ioThreads = 2 }) { server in
            let keys = try await server.createProject("acme")
            let before = try await Self.scrape(server)
            let pings = ["transport": "line", "op": "ping", "code": "ok"]
            var clients: [TestClient] = []
            for _ in 0..<4 {
                let client = try server.connect()
                try await client.hello(keys.publicKey)
                for _ in 0..<5 { #expect(try await client.call("ping").isSuccess) }
                clients.append(client)
            }
            let after = try await Self.scrape(server)
            let counted = (after.value("gatehouse_requests", "gatehouse_requests_total", pings) ?? 0)
                - (before.value("gatehouse_requests", "gatehouse_requests_total", pings) ?? 0)
            #expect(counted == 20)
            for client in clients { await client.close() }
        }
    }

    @Test func noLabelCarriesAKeyOrAnID() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let line = try server.connect()
            try await line.hello(keys.secretKey)
            let created = try await line.call("profile.create", ["customer_user_id": "alice@example.com"])
            let id = try #require(created.object("profile")?.string("profile_id"))
            let client = try HTTPListener.connect(server)
            let text = try await client.request("GET", "/metrics", headers: [("Authorization", "Bearer \(TestServer.adminKey)")]).bodyText
            for secret in [keys.secretKey, keys.publicKey, TestServer.adminKey, id, "alice@example.com", "acme"] {
                #expect(!text.contains(secret), "\(secret)")
            }
        }
    }
}
