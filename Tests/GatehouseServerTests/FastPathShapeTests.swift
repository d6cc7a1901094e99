import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// The fast roads (`sync` answered on the loop from the board, `currency.transact` read by its
/// scanner) take every shape the protocol allows and answer byte for byte as the general road
/// does (DESIGN.md, "Performance": "a client is never slower for using a legal request the
/// benchmark did not"). The same lines go first where the fast road takes them (on a
/// connection with nothing running), then behind an `offerings` still running on the
/// connection's inbox, where they cannot: they wait for it and run on the general road.
@Suite struct FastPathShapes {
    /// Shapes of `sync` with a cursor: `{P}` is the profile id, `{C}` the cursor.
    static let syncShapes = [
        #"{"op":"sync","profile_id":{P},"cursor":{C}}"#,
        #"{"id":null,"op":"sync","profile_id":{P},"cursor":{C}}"#,
        #"{"id":-0.5e3,"op":"sync","profile_id":{P},"cursor":{C}}"#,
        #"{"id":123456789012345678901234567890,"op":"sync","profile_id":{P},"cursor":{C}}"#,
        #"{"id":"\u00e9\/\"","op":"sync","profile_id":{P},"cursor":{C}}"#,
        #" { "cursor" : {C} , "x" : [1,{"y":"\"}"}] , "profile_id" : {P} , "op" : "sync" } "#,
        "{\"op\":\"sync\",\r\"profile_id\":{P},\t\"cursor\":{C}}\r",
        #"{"op":"s\u0079nc","profile\u005fid":{P},"cursor":{C}.0,"id":"s"}"#,
        #"{"op":"sync","profile_id":{P},"cursor":1,"cursor":{C},"id":1,"id":2}"#,
        #"{"op":"sync","profile_id":{P},"cursor":{C},"app_version":"2.0","flags":{"beta":true},"n":null}"#,
    ]

    /// Shapes of `currency.transact`: `{P}` is the profile id, `{K}` a key of the shape's own.
    /// The amounts add up to 30.
    static let transactShapes = [
        #"{"op":"currency.transact","profile_id":{P},"currency":"COINS","amount":1,"idempotency_key":{K}}"#,
        #"{"id":7,"op":"currency.transact","profile_id":{P},"currency":"COINS","amount":1,"idempotency_key":{K}}"#,
        #"{"id":"t\u00e9","op":"currency.transact","profile_id":{P},"currency":"COINS","amount":1,"idempotency_key":{K}}"#,
        #"{"id":1.5e2,"op":"currency.transact","profile_id":{P},"currency":"COINS","amount":2,"idempotency_key":{K},"reason":null}"#,
        #"{"op":"currency.transact","customer_user_id":"alice","currency":"COINS","amount":2,"idempotency_key":{K},"reason":"bonus"}"#,
        #"{"op":"currency.transact","customer_user_id":"nobody","profile_id":{P},"currency":"COINS","amount":2,"idempotency_key":{K}}"#,
        #"{"source":{"app":"x","tags":["a","b"]},"trace":null,"op":"currency.transact","profile_id":{P},"currency":"COINS","amount":3,"idempotency_key":{K}}"#,
        #"{"op":"currency.transact","profile_id":{P},"currency":"CO\u0049NS","amount":3.0,"idempotency_key":{K},"reason":"\ud83d\ude00"}"#,
        "{ \"amount\" : 0.4e1 ,\r\"idempotency_key\":{K},\t\"currency\":\"COINS\" , \"profile_id\":{P},\"op\":\"currency.transact\"}\r",
        #"{"op":"currency.transact","profile_id":{P},"currency":"COINS","amount":100,"amount":11,"idempotency_key":{K}}"#,
    ]

    /// Sends `lines` in one write and reads as many answer lines.
    private static func answers(to lines: [String], on client: TestClient) async throws -> [String] {
        try await client.sendRaw(Array((lines.joined(separator: "\n") + "\n").utf8))
        var answers: [String] = []
        for _ in lines { answers.append(try #require(try await client.readLine())) }
        return answers
    }

    private static func filling(_ shape: String, _ values: [String: String]) -> String {
        values.reduce(shape) { line, value in line.split(separator: value.key, omittingEmptySubsequences: false).joined(separator: value.value) }
    }

    @Test func syncInEveryShapeAnswersAlikeOnTheFastRoadAndTheGeneralOne() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let s = try await SyncFixture.make(server)
            let alice = try await s.f.create("alice")
            let cursor = try #require(try await s.sync(alice.id).int("cursor"))
            let lines = Self.syncShapes.map { Self.filling($0, ["{P}": "\"\(alice.id)\"", "{C}": "\(cursor)"]) }
            let blocker = #"{"id":"first","op":"offerings","profile_id":"\#(alice.id)"}"#
            let fast = try await Self.answers(to: lines, on: s.sdk)
            let general = try await Self.answers(to: [blocker] + lines, on: s.sdk).dropFirst()
            #expect(fast == Array(general))
            #expect(fast.first == #"{"id":null,"ok":true,"cursor":\#(cursor),"changed":[]}"#)
            #expect(fast[4] == #"{"id":"é/\"","ok":true,"cursor":\#(cursor),"changed":[]}"#)
            // A hello in the same write as the syncs: they run under the session it opens.
            let fresh = try server.connect()
            let afterHello = try await Self.answers(to: [#"{"op":"hello","key":"\#(s.f.keys.publicKey)"}"#] + lines, on: fresh)
            #expect(Array(afterHello.dropFirst()) == fast)
        }
    }

    @Test func transactInEveryShapeAnswersAlikeOnTheQuickRoadAndTheGeneralOne() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await CurrencyFixture.make(server)
            let alice = try await c.f.create("alice")
            let blocker = #"{"id":"first","op":"offerings","profile_id":"\#(alice.id)"}"#
            for (index, shape) in Self.transactShapes.enumerated() {
                let line = Self.filling(shape, ["{P}": "\"\(alice.id)\"", "{K}": "\"shape-\(index)\""])
                let quick = try await Self.answers(to: [line], on: c.backend)[0]
                #expect(quick.contains(#""ok":true"#), "\(line) → \(quick)")
                // The same request again on the general road: a replay answers the first answer,
                // which it only does when it read the same request (another body is a conflict).
                let general = try await Self.answers(to: [blocker, line], on: c.backend)[1]
                #expect(general == quick, "\(line)")
            }
            #expect(try await c.balance(alice.id) == 30)
        }
    }
}
