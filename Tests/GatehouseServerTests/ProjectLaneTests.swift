import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// Project ops run on the project's lane, in rounds shared by every connection, while other
/// deferred requests run on the connection's inbox: a connection's requests still run, and
/// answer, in the order it sent them, whichever way each one takes.
@Suite struct ProjectLanes {
    typealias C = CurrencyFixture

    /// Sends `lines` in one write and reads as many answers, checking each carries its line's id.
    private static func pipeline(_ lines: [String], on client: TestClient, sourceLocation: SourceLocation = #_sourceLocation)
        async throws -> [JSONObject]
    {
        try await client.sendRaw(Array((lines.joined(separator: "\n") + "\n").utf8))
        var answers: [JSONObject] = []
        for index in lines.indices {
            let answer = try await client.readAnswer()
            #expect(answer.int("id") == Int64(index + 1), "answers come back in request order: \(answer)", sourceLocation: sourceLocation)
            answers.append(answer)
        }
        return answers
    }

    private static func transact(_ id: Int, _ profileID: String, _ amount: Int64, key: String) -> String {
        #"{"id":\#(id),"op":"currency.transact","profile_id":"\#(profileID)","currency":"COINS","amount":\#(amount),"idempotency_key":"\#(key)"}"#
    }

    private static func profileGet(_ id: Int, _ profileID: String) -> String {
        #"{"id":\#(id),"op":"profile.get","profile_id":"\#(profileID)"}"#
    }

    @Test func pipelinedTransactsRunInOrder() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let (profile, _) = try await c.f.create()
            let lines = (1...40).map { Self.transact($0, profile, Int64($0), key: "k\($0)") }
            let answers = try await Self.pipeline(lines, on: c.backend)
            // Each credit's balance is the sum of those before it: they ran in the order sent.
            var expected: Int64 = 0
            for (index, answer) in answers.enumerated() {
                expected += Int64(index + 1)
                #expect(answer.int("balance") == expected, "\(answer)")
            }
            C.expectConsistent(try await c.history(.id(profile), limit: 100), balance: expected)
        }
    }

    @Test func anInboxRequestAfterProjectStepsSeesTheirChanges() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let (profile, _) = try await c.f.create()
            // profile.get runs on the inbox: it waits for the credits before it, and the credit
            // after it waits for it in turn.
            let answers = try await Self.pipeline([
                Self.transact(1, profile, 5, key: "a"),
                Self.transact(2, profile, 6, key: "b"),
                Self.profileGet(3, profile),
                Self.transact(4, profile, 7, key: "c"),
                Self.profileGet(5, profile),
            ], on: c.backend)
            #expect(answers[1].int("balance") == 11)
            #expect(answers[2].object("currencies")?.int("COINS") == 11, "\(answers[2])")
            #expect(answers[3].int("balance") == 18)
            #expect(answers[4].object("currencies")?.int("COINS") == 18)
        }
    }

    @Test func aPipelinedHelloMovesTheLaterStepsToTheOtherProject() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let acme = try await C.make(server, project: "acme")
            let beta = try await C.make(server, project: "beta")
            let (inAcme, _) = try await acme.f.create()
            let (inBeta, _) = try await beta.f.create()
            let answers = try await Self.pipeline([
                Self.transact(1, inAcme, 3, key: "x"),
                #"{"id":2,"op":"hello","key":"\#(beta.f.keys.secretKey)"}"#,
                Self.transact(3, inBeta, 4, key: "x"),
                // Acme's profile is another project's to beta: the session switched before this step ran.
                Self.transact(4, inAcme, 5, key: "y"),
                #"{"id":5,"op":"hello","key":"\#(acme.f.keys.secretKey)"}"#,
                Self.transact(6, inAcme, 5, key: "y"),
            ], on: acme.backend)
            #expect(answers[0].int("balance") == 3)
            #expect(answers[1].string("project") == "beta")
            #expect(answers[2].int("balance") == 4)
            #expect(answers[3].errorCode == .forbidden)
            #expect(answers[5].int("balance") == 8)
            #expect(try await beta.balance(inBeta) == 4)
            #expect(try await acme.balance(inAcme) == 8)
        }
    }

    @Test func aRefusedStepAnswersInItsPlaceAndChangesNothing() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let (profile, _) = try await c.f.create()
            let answers = try await Self.pipeline([
                Self.transact(1, profile, 5, key: "a"),
                Self.transact(2, profile, 0, key: "b"),
                #"{"id":3,"op":"currency.transact","profile_id":"\#(profile)","currency":"COINS","amount":"1","idempotency_key":"c"}"#,
                Self.transact(4, "gh_notAProfileOfThisProjectAtAll01", 1, key: "d"),
                Self.transact(5, profile, 2, key: "e"),
            ], on: c.backend)
            #expect(answers[0].int("balance") == 5)
            #expect(answers[1].errorCode == .badRequest)
            #expect(answers[2].errorCode == .badRequest)
            #expect(answers[3].errorCode != nil)
            #expect(answers[4].int("balance") == 7)
            #expect(try await c.history(.id(profile)).count == 2)
        }
    }

    @Test func aStepAfterTheKeyWasRotatedIsUnauthenticatedAndChangesNothing() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let (profile, _) = try await c.f.create()
            try await c.expectTransact(.id(profile), 5, key: "a")
            let rotated = try await c.f.admin.call("project.rotate_keys", ["project": "acme", "which": "secret"])
            #expect(rotated.isSuccess, "\(rotated)")
            let answers = try await Self.pipeline([Self.transact(1, profile, 5, key: "b"), Self.transact(2, profile, 5, key: "c")],
                                                  on: c.backend)
            #expect(answers.allSatisfy { $0.errorCode == .unauthenticated })
            let fresh = try server.connect()
            try await fresh.hello(try #require(rotated.object("keys")?.string("secret")))
            let history = try await c.historyAnswer(.id(profile), via: fresh)
            #expect(history["entries"]?.arrayValue?.count == 1, "\(history)")
        }
    }

    @Test func statsCountTheLaneStepsAndTheVisitsTheyShared() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let (profile, _) = try await c.f.create()
            let before = try #require(try await c.f.admin.call("server.stats").object("lanes"))
            _ = try await Self.pipeline((1...30).map { Self.transact($0, profile, 1, key: "s\($0)") }, on: c.backend)
            let after = try #require(try await c.f.admin.call("server.stats").object("lanes"))
            let steps = (after.int("steps") ?? 0) - (before.int("steps") ?? 0)
            let rounds = (after.int("rounds") ?? 0) - (before.int("rounds") ?? 0)
            #expect(steps == 30, "every step counted once: \(before) → \(after)")
            #expect((1...30).contains(rounds), "in at least one round, at most one each: \(before) → \(after)")
        }
    }

    /// A line is read by the quick reader (``TransactScan``) on a connection with nothing
    /// running; the same line behind a request on the connection's inbox waits for it and takes
    /// the general road. Both roads answer alike, refusals included.
    @Test func theQuickReaderAndTheGeneralParserAnswerAlike() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let (profile, _) = try await c.f.create()
            let blocker = #"{"id":0,"op":"offerings","profile_id":"\#(profile)"}"#
            let cases: [(amount: String, key: String, profile: String, reason: String?)] = [
                ("5", "q1", profile, nil), ("-2", "q2", profile, "why"), ("0", "q3", profile, nil),
                ("9999999999", "q4", profile, nil), ("1", String(repeating: "k", count: 129), profile, nil),
                ("1", "q5", profile, ""), ("1", "q6", "gh_short", nil), ("1", "q1", profile, nil),
            ]
            var answers: [(quick: JSONObject, general: JSONObject)] = []
            for item in cases {
                let reason = item.reason.map { #","reason":"\#($0)""# } ?? ""
                let line = #"{"id":1,"op":"currency.transact","profile_id":"\#(item.profile)","currency":"COINS","amount":\#(item.amount),"idempotency_key":"\#(item.key)"\#(reason)}"#
                let quick = try await Self.pipeline([line], on: c.backend)[0]
                try await c.backend.sendRaw(Array((blocker + "\n" + line + "\n").utf8))
                _ = try await c.backend.readAnswer()
                answers.append((quick, try await c.backend.readAnswer()))
            }
            // The credits: 5 then, on the general road, the same key replayed; -2 and its replay.
            #expect(answers[0].quick.int("balance") == 5)
            #expect(answers[1].quick.int("balance") == 3)
            for (index, pair) in answers.enumerated() {
                #expect(pair.general == pair.quick, "\(cases[index]) → \(pair.quick) / \(pair.general)")
            }
            // Each refusal is a bad request; a key used before for another request is a conflict.
            for index in 2..<7 { #expect(answers[index].quick.errorCode == .badRequest, "\(cases[index])") }
            #expect(answers[7].quick.errorCode == .conflict)
            C.expectConsistent(try await c.history(.id(profile)), balance: 3)
        }
    }

    @Test func theQuickReaderLeavesARoleThatMayNotTransactToTheGeneralRefusal() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let (profile, _) = try await c.f.create()
            let answers = try await Self.pipeline([Self.transact(1, profile, 5, key: "a")], on: c.f.sdk)
            #expect(answers[0].errorCode == .forbidden)
            #expect(try await c.history(.id(profile)).isEmpty)
        }
    }

    @Test func manyConnectionsShareTheLaneWithoutLosingOrMixingWrites() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let connections = 12
            let credits = 15
            var profiles: [String] = []
            var clients: [TestClient] = []
            for _ in 0..<connections {
                profiles.append(try await c.f.create().id)
                let client = try server.connect()
                try await client.hello(c.f.keys.secretKey)
                clients.append(client)
            }
            // Every connection sends its whole pipeline before any answer is read.
            for (client, profile) in zip(clients, profiles) {
                let lines = (1...credits).map { Self.transact($0, profile, 1, key: "\(profile)-\($0)") }
                try await client.sendRaw(Array((lines.joined(separator: "\n") + "\n").utf8))
            }
            for client in clients {
                for step in 1...credits {
                    let answer = try await client.readAnswer()
                    #expect(answer.int("id") == Int64(step))
                    #expect(answer.int("balance") == Int64(step), "\(answer)")
                }
            }
            for profile in profiles {
                #expect(try await c.balance(profile) == Int64(credits))
            }
        }
    }
}
