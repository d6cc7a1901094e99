import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// Every bad line gets its error and the connection stays usable (PROTOCOL.md, "Error codes").
@Suite struct BadInput {
    @Test(arguments: [
        "not json at all",
        "{",
        "{\"op\":\"ping\",}",
        "[1,2,3]",
        "\"just a string\"",
        "42",
        "null",
        "{\"op\":\"ping\"} trailing",
        "{'op':'ping'}",
    ])
    func malformedLineIsBadJSON(_ line: String) async throws {
        try await withTestServer { server in
            let client = try await server.admin()
            try await client.send(line)
            let answer = try await client.readAnswer()
            #expect(answer.errorCode == .badJSON)
            #expect(answer["id"] == .null)
            #expect(try await client.call("ping").isSuccess, "the connection stays usable")
        }
    }

    @Test func garbageBytesAndInvalidUTF8AreBadJSON() async throws {
        try await withTestServer { server in
            let client = try await server.admin()
            let lines: [[UInt8]] = [
                [0xFF, 0xFE, 0x00, 0x01],
                Array(#"{"op":"ping","x":""#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8),
                Array(#"{"op":"ping","x":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8),
                Array(#"{"op":"ping","x":""#.utf8) + [0xE2, 0x82] + Array(#""}"#.utf8),
                (0..<512).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }.filter { $0 != 10 },
            ]
            for line in lines {
                try await client.sendRaw(line + [10])
                #expect(try await client.readAnswer().errorCode == .badJSON)
            }
            #expect(try await client.call("ping").isSuccess)
        }
    }

    @Test func hundredThousandNestedBracketsAreRejectedQuickly() async throws {
        try await withTestServer { server in
            let client = try await server.admin()
            try await client.send(String(repeating: "[", count: 100_000))
            #expect(try await client.readAnswer().errorCode == .badJSON)
            try await client.send(#"{"op":"ping","x":"# + String(repeating: #"{"a":"#, count: 100_000))
            #expect(try await client.readAnswer().errorCode == .badJSON)
            #expect(try await client.call("ping").isSuccess)
        }
    }

    @Test func missingOrMistypedOpIsBadRequestAndKeepsTheID() async throws {
        try await withTestServer { server in
            let client = try await server.admin()
            let noOp = try await client.request(["id": "x1"])
            #expect(noOp.errorCode == .badRequest)
            #expect(noOp["id"] == "x1")
            let numericOp = try await client.request(["id": 5, "op": 12])
            #expect(numericOp.errorCode == .badRequest)
            #expect(numericOp["id"] == .int(5))
        }
    }

    @Test func idIsEchoedExactlyAsSent() async throws {
        try await withTestServer { server in
            let client = try await server.admin()
            for id in ["12345678901234567890123", "-0.5e-7", "1e400", "\"ünïcødé ✓\"", "\"\""] {
                try await client.send(#"{"id":\#(id),"op":"ping"}"#)
                let line = try #require(try await client.readLine())
                #expect(line.hasPrefix(#"{"id":\#(id),"ok":true"#))
            }
            let noID = try await client.request(["op": "ping"])
            #expect(noID["id"] == .null)
        }
    }

    @Test(arguments: [#"{"id":{"a":1},"op":"ping"}"#, #"{"id":[1],"op":"ping"}"#, #"{"id":true,"op":"ping"}"#])
    func idOfAnotherTypeIsBadRequest(_ line: String) async throws {
        try await withTestServer { server in
            let client = try await server.admin()
            try await client.send(line)
            let answer = try await client.readAnswer()
            #expect(answer.errorCode == .badRequest)
            #expect(answer["id"] == .null)
        }
    }

    @Test func unknownOpIsUnknownOp() async throws {
        try await withTestServer { server in
            let client = try await server.admin()
            #expect(try await client.call("profile.teleport").errorCode == .unknownOp)
            let unauthenticated = try server.connect()
            #expect(try await unauthenticated.call("no.such.op").errorCode == .unknownOp)
        }
    }

    @Test func numbersOutOfRangeAreBadRequestAndChangeNothing() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let admin = try await server.admin()
            let before = try #require(try await admin.call("server.stats").int("time_ms"))
            for ms in ["1e400", "-1", "99999999999999999999999", "1.5", "\"10\""] {
                try await admin.send(#"{"id":1,"op":"clock.advance","ms":\#(ms)}"#)
                let answer = try await admin.readAnswer()
                #expect(answer.errorCode == .badRequest, "ms = \(ms)")
            }
            #expect(try await admin.call("server.stats").int("time_ms") == before)
        }
    }

    @Test func unknownRequestFieldsAreIgnored() async throws {
        try await withTestServer { server in
            let admin = try await server.admin()
            let answer = try await admin.call("ping", ["future_field": ["nested": [1, 2]], "another": nil])
            #expect(answer.isSuccess)
        }
    }
}
