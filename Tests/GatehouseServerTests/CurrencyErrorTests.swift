import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// Every bad currency request gets the right error code and changes nothing: no balance, no
/// history entry, no event, no cursor, and no idempotency key used up (PROTOCOL.md, "Error
/// codes", "Virtual currencies"; DESIGN.md, "Virtual currencies", "Reliability and security").
@Suite struct CurrencyErrors {
    typealias C = CurrencyFixture

    /// A project with `owner` (500 COINS, no GEMS) and `other` (10 COINS).
    struct Scene {
        let c: CurrencyFixture
        let owner: String
        let other: String
    }

    static func scene(_ server: TestServer) async throws -> Scene {
        let c = try await C.make(server)
        let owner = try await c.f.create("owner").id
        let other = try await c.f.create("other").id
        #expect(try await c.expectTransact(.id(owner), 700, key: "seed-1").balance == 700)
        #expect(try await c.expectTransact(.id(owner), -200, key: "seed-2").balance == 500)
        #expect(try await c.expectTransact(.id(other), 10, key: "seed-3").balance == 10)
        return Scene(c: c, owner: owner, other: other)
    }

    /// Everything a bad request could have changed.
    struct Observed: Equatable {
        var documents: [JSONObject]
        var histories: [[JSONObject]]
        var events: [JSONObject]
    }

    static func observe(_ scene: Scene) async throws -> Observed {
        let c = scene.c
        var documents: [JSONObject] = []
        var histories: [[JSONObject]] = []
        for profile in [scene.owner, scene.other] {
            documents.append(try await c.f.get(profile))
            for currency in ["COINS", "GEMS"] {
                histories.append(try await c.history(.id(profile), currency: currency, limit: 1000))
            }
        }
        return Observed(documents: documents, histories: histories, events: try await c.f.events())
    }

    /// Runs `body`, which sends bad requests, and checks that balances, histories, documents
    /// (cursors included) and the event feed are as they were.
    static func changesNothing(_ scene: Scene, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void)
        async throws
    {
        let before = try await observe(scene)
        try await body()
        let after = try await observe(scene)
        #expect(after.documents == before.documents, "a document changed", sourceLocation: sourceLocation)
        #expect(after.histories == before.histories, "a history changed", sourceLocation: sourceLocation)
        #expect(after.events == before.events, "the event feed changed", sourceLocation: sourceLocation)
    }

    /// `bad_request` whose message names `field`.
    static func expectBadRequest(_ answer: JSONObject, naming field: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer.errorCode == .badRequest, "\(answer)", sourceLocation: sourceLocation)
        let message = answer.object("error")?.string("message") ?? ""
        #expect(message.contains(field), "the message names \(field): \(message)", sourceLocation: sourceLocation)
    }

    static func expectCode(_ answer: JSONObject, _ code: ErrorCode, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer.errorCode == code, "\(answer)", sourceLocation: sourceLocation)
    }

    /// Sends a `currency.transact` line built from raw JSON member texts (to send any literal).
    static func rawTransact(_ client: TestClient, _ members: [(String, String)]) async throws -> JSONObject {
        let body = members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",")
        try await client.send("{\"id\":\"raw\",\"op\":\"currency.transact\"\(body.isEmpty ? "" : ",")\(body)}")
        let answer = try await client.readAnswer()
        #expect(answer["id"] == "raw")
        return answer
    }

    /// A well-formed id of this project that no profile has.
    static func unknownID(like id: String) throws -> String {
        let parsed = try #require(ProfileID(parsing: id))
        return ProfileID(high: ~parsed.high, low: parsed.low ^ 0x5A5A, tag: parsed.tag).description
    }

    // MARK: Balances' bounds

    @Test func aDebitLargerThanTheBalanceIsInsufficientFundsWithTheBalance() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let c = scene.c
            try await Self.changesNothing(scene) {
                let overdraft = try await c.transact(.id(scene.owner), -501, key: "overdraft")
                Self.expectCode(overdraft, .insufficientFunds)
                #expect(overdraft.object("error")?.int("balance") == 500, "\(overdraft)")
                let empty = try await c.transact(.id(scene.owner), -1, key: "overdraft", currency: "GEMS")
                Self.expectCode(empty, .insufficientFunds)
                #expect(empty.object("error")?.int("balance") == 0, "\(empty)")
                let huge = try await c.transact(.customer("other"), .int(-C.balanceMax), key: "overdraft")
                Self.expectCode(huge, .insufficientFunds)
                #expect(huge.object("error")?.int("balance") == 10, "\(huge)")
            }
            // The refusal did not use up the key.
            #expect(try await c.expectTransact(.id(scene.owner), -500, key: "overdraft").balance == 0)
        }
    }

    @Test func aCreditPastTheMaximumIsBadRequest() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let c = scene.c
            try await Self.changesNothing(scene) {
                Self.expectBadRequest(try await c.transact(.id(scene.owner), .int(C.balanceMax - 500 + 1), key: "big"), naming: "amount")
                Self.expectBadRequest(try await c.transact(.id(scene.owner), .int(C.balanceMax), key: "big"), naming: "amount")
                Self.expectBadRequest(try await c.transact(.id(scene.other), .int(C.balanceMax - 9), key: "big"), naming: "amount")
            }
            // Up to the maximum exactly, with the key the refusals left unused.
            #expect(try await c.expectTransact(.id(scene.owner), C.balanceMax - 500, key: "big").balance == C.balanceMax)
            try await Self.changesNothing(scene) {
                Self.expectBadRequest(try await c.transact(.id(scene.owner), 1, key: "one-more"), naming: "amount")
            }
        }
    }

    // MARK: Fields

    @Test(arguments: [
        "0", "-0", "0.0", "1.5", "-0.5", "1e-3", "\"10\"", "true", "null", "[]", "{}", "[5]",
        "2000000001", "-2000000001", "9223372036854775808", "-9223372036854775809", "1e300", "1e400",
    ])
    func aBadAmountIsBadRequestNamingAmount(_ literal: String) async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let c = scene.c
            try await Self.changesNothing(scene) {
                let answer = try await Self.rawTransact(c.backend, [
                    ("profile_id", "\"\(scene.owner)\""), ("currency", "\"COINS\""), ("amount", literal), ("idempotency_key", "\"bad-amount\""),
                ])
                Self.expectBadRequest(answer, naming: "amount")
            }
            #expect(try await c.expectTransact(.id(scene.owner), 1, key: "bad-amount").balance == 501)
        }
    }

    @Test func aMissingAmountIsBadRequestNamingAmount() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let c = scene.c
            try await Self.changesNothing(scene) {
                let answer = try await Self.rawTransact(c.backend, [
                    ("profile_id", "\"\(scene.owner)\""), ("currency", "\"COINS\""), ("idempotency_key", "\"no-amount\""),
                ])
                Self.expectBadRequest(answer, naming: "amount")
            }
        }
    }

    @Test func aMissingEmptyLongOrMistypedIdempotencyKeyIsBadRequest() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let c = scene.c
            let owner = "\"\(scene.owner)\""
            try await Self.changesNothing(scene) {
                let missing = try await Self.rawTransact(c.backend, [("profile_id", owner), ("currency", "\"COINS\""), ("amount", "5")])
                Self.expectBadRequest(missing, naming: "idempotency_key")
                Self.expectBadRequest(try await c.transact(.id(scene.owner), 5, key: ""), naming: "idempotency_key")
                Self.expectBadRequest(try await c.transact(.id(scene.owner), 5, key: String(repeating: "k", count: 129)),
                                      naming: "idempotency_key")
                Self.expectBadRequest(try await c.transact(.id(scene.owner), 5, key: String(repeating: "é", count: 129)),
                                      naming: "idempotency_key")
                for literal in ["5", "null", "[\"k\"]", "{}"] {
                    let answer = try await Self.rawTransact(c.backend, [
                        ("profile_id", owner), ("currency", "\"COINS\""), ("amount", "5"), ("idempotency_key", literal),
                    ])
                    Self.expectBadRequest(answer, naming: "idempotency_key")
                }
            }
            // 1 and 128 characters are keys.
            #expect(try await c.expectTransact(.id(scene.owner), 1, key: "k").balance == 501)
            #expect(try await c.expectTransact(.id(scene.owner), 1, key: String(repeating: "k", count: 128)).balance == 502)
            #expect(try await c.expectTransact(.id(scene.owner), 1, key: String(repeating: "é", count: 128)).balance == 503)
        }
    }

    @Test func aLongOrMistypedReasonIsBadRequest() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let c = scene.c
            try await Self.changesNothing(scene) {
                Self.expectBadRequest(try await c.transact(.id(scene.owner), 5, key: "why", reason: String(repeating: "r", count: 501)),
                                      naming: "reason")
                let number = try await Self.rawTransact(c.backend, [
                    ("profile_id", "\"\(scene.owner)\""), ("currency", "\"COINS\""), ("amount", "5"), ("idempotency_key", "\"why\""),
                    ("reason", "7"),
                ])
                Self.expectBadRequest(number, naming: "reason")
            }
            #expect(try await c.expectTransact(.id(scene.owner), 5, key: "why", reason: String(repeating: "r", count: 500)).balance == 505)
        }
    }

    @Test func aMissingOrMistypedCurrencyIsBadRequest() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let c = scene.c
            let owner = "\"\(scene.owner)\""
            try await Self.changesNothing(scene) {
                let missing = try await Self.rawTransact(c.backend, [("profile_id", owner), ("amount", "5"), ("idempotency_key", "\"cur\"")])
                Self.expectBadRequest(missing, naming: "currency")
                let number = try await Self.rawTransact(c.backend, [
                    ("profile_id", owner), ("currency", "5"), ("amount", "5"), ("idempotency_key", "\"cur\""),
                ])
                Self.expectBadRequest(number, naming: "currency")
                Self.expectBadRequest(try await c.backend.call("currency.history", ["profile_id": .string(scene.owner)]), naming: "currency")
            }
        }
    }

    @Test func neitherProfileIDNorCustomerUserIDIsBadRequest() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let c = scene.c
            try await Self.changesNothing(scene) {
                let transact = try await c.backend.call("currency.transact", ["currency": "COINS", "amount": 5, "idempotency_key": "who"])
                Self.expectBadRequest(transact, naming: "profile_id")
                Self.expectBadRequest(try await c.backend.call("currency.history", ["currency": "COINS"]), naming: "profile_id")
                // Malformed or mistyped ids are bad requests too.
                for id: JSONValue in ["gh_nope", 42, "", nil] {
                    Self.expectBadRequest(try await c.backend.call("currency.transact", [
                        "profile_id": id, "currency": "COINS", "amount": 5, "idempotency_key": "who",
                    ]), naming: "profile_id")
                    Self.expectBadRequest(try await c.backend.call("currency.history", ["profile_id": id, "currency": "COINS"]),
                                          naming: "profile_id")
                }
                Self.expectBadRequest(try await c.backend.call("currency.transact", [
                    "customer_user_id": 42, "currency": "COINS", "amount": 5, "idempotency_key": "who",
                ]), naming: "customer_user_id")
            }
            #expect(try await c.expectTransact(.id(scene.owner), 5, key: "who").balance == 505)
        }
    }

    @Test(arguments: ["0", "1001", "-1", "1.5", "\"10\"", "true", "100000000000000000000"])
    func aHistoryLimitOutOfRangeIsBadRequestNamingLimit(_ literal: String) async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let c = scene.c
            try await c.backend.send(
                "{\"id\":\"h\",\"op\":\"currency.history\",\"profile_id\":\"\(scene.owner)\",\"currency\":\"COINS\",\"limit\":\(literal)}")
            let answer = try await c.backend.readAnswer()
            #expect(answer["id"] == "h")
            Self.expectBadRequest(answer, naming: "limit")
            // The bounds themselves are fine.
            #expect(try await c.history(.id(scene.owner), limit: 1).count == 1)
            #expect(try await c.history(.id(scene.owner), limit: 1000).count == 2)
        }
    }

    // MARK: Idempotency conflicts

    @Test func theSameKeyWithAnotherBodyIsConflict() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let c = scene.c
            let first = try await c.transact(.id(scene.owner), 10, key: "dup")
            #expect(first.isSuccess)
            try await Self.changesNothing(scene) {
                Self.expectCode(try await c.transact(.id(scene.owner), 11, key: "dup"), .conflict)
                Self.expectCode(try await c.transact(.id(scene.owner), -10, key: "dup"), .conflict)
                Self.expectCode(try await c.transact(.id(scene.other), 10, key: "dup"), .conflict)
                Self.expectCode(try await c.transact(.customer("other"), 10, key: "dup"), .conflict)
                Self.expectCode(try await c.transact(.id(scene.owner), 10, key: "dup", currency: "GEMS"), .conflict)
                Self.expectCode(try await c.transact(.id(scene.owner), 10, key: "dup", reason: "another reason"), .conflict)
                // The key of a debit, reused for a credit of the same size.
                Self.expectCode(try await c.transact(.id(scene.owner), 200, key: "seed-2"), .conflict)
            }
            // The first request itself still replays.
            #expect(C.withoutID(try await c.transact(.id(scene.owner), 10, key: "dup")) == C.withoutID(first))
            #expect(try await c.balance(scene.owner) == 510)
        }
    }

    // MARK: Not found, forbidden

    @Test func anUnknownCurrencyIsNotFound() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let c = scene.c
            try await Self.changesNothing(scene) {
                for currency in ["DIAMONDS", "coins", "COINS "] {
                    Self.expectCode(try await c.transact(.id(scene.owner), 5, key: "cur", currency: currency), .notFound)
                    Self.expectCode(try await c.historyAnswer(.id(scene.owner), currency: currency), .notFound)
                }
            }
            #expect(try await c.expectTransact(.id(scene.owner), 5, key: "cur").balance == 505)
        }
    }

    @Test func anUnknownProfileIsNotFound() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let c = scene.c
            let deleted = try await c.f.create("deleted").id
            #expect(try await c.expectTransact(.id(deleted), 5, key: "gone").balance == 5)
            #expect(try await c.backend.call("profile.delete", ["profile_id": .string(deleted)]).isSuccess)
            let unknown = try Self.unknownID(like: scene.owner)
            try await Self.changesNothing(scene) {
                for who: C.Who in [.id(unknown), .id(deleted), .customer("nobody"), .customer("deleted")] {
                    Self.expectCode(try await c.transact(who, 5, key: "ghost"), .notFound)
                    Self.expectCode(try await c.historyAnswer(who), .notFound)
                }
            }
            #expect(try await c.expectTransact(.id(scene.owner), 5, key: "ghost").balance == 505)
        }
    }

    @Test func anotherProjectsProfileIsForbidden() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let c = scene.c
            let other = try await C.make(server, project: "other")
            let stranger = try await other.f.create("stranger").id
            #expect(try await other.expectTransact(.id(stranger), 40, key: "theirs").balance == 40)
            let strangerBefore = try await other.history(.id(stranger))
            try await Self.changesNothing(scene) {
                Self.expectCode(try await c.transact(.id(stranger), 5, key: "cross"), .forbidden)
                Self.expectCode(try await c.transact(.id(stranger), 40, key: "theirs"), .forbidden)
                Self.expectCode(try await c.historyAnswer(.id(stranger)), .forbidden)
                // Customer user ids are looked up inside the connection's project only.
                Self.expectCode(try await c.transact(.customer("stranger"), 5, key: "cross"), .notFound)
                Self.expectCode(try await c.historyAnswer(.customer("stranger")), .notFound)
            }
            #expect(try await other.history(.id(stranger)) == strangerBefore)
            #expect(try await other.balance(stranger) == 40)
            // Keys belong to their project: the other project's key is free here.
            #expect(try await c.expectTransact(.id(scene.owner), 5, key: "theirs").balance == 505)
            #expect(try await c.expectTransact(.id(scene.owner), 5, key: "cross").balance == 510)
        }
    }

    @Test func anSDKConnectionMayNeitherTransactNorReadHistory() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let c = scene.c
            let sdk = c.f.sdk
            try await Self.changesNothing(scene) {
                Self.expectCode(try await c.transact(.id(scene.owner), 5, key: "app", via: sdk), .forbidden)
                Self.expectCode(try await c.transact(.id(scene.owner), 700, key: "seed-1", via: sdk), .forbidden)
                Self.expectCode(try await c.historyAnswer(.id(scene.owner), via: sdk), .forbidden)
                Self.expectCode(try await c.transact(.customer("owner"), 5, key: "app", via: sdk), .forbidden)
                Self.expectCode(try await c.historyAnswer(.customer("owner"), via: sdk), .forbidden)
            }
            #expect(try await c.expectTransact(.id(scene.owner), 5, key: "app").balance == 505)
        }
    }

    // MARK: Keys of refused requests

    @Test func aFailedTransactDoesNotUseUpItsKey() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let c = scene.c
            let other = try await C.make(server, project: "other")
            let stranger = try await other.f.create().id
            let key = "once-refused"
            try await Self.changesNothing(scene) {
                Self.expectCode(try await c.transact(.id(scene.owner), -501, key: key), .insufficientFunds)
                Self.expectCode(try await c.transact(.id(scene.owner), .int(C.balanceMax), key: key), .badRequest)
                Self.expectCode(try await c.transact(.id(scene.owner), 0, key: key), .badRequest)
                Self.expectCode(try await c.transact(.id(scene.owner), 1.5, key: key), .badRequest)
                Self.expectCode(try await c.transact(.id(scene.owner), 5, key: key, reason: String(repeating: "r", count: 501)), .badRequest)
                Self.expectCode(try await c.transact(.id(scene.owner), 5, key: key, currency: "DIAMONDS"), .notFound)
                Self.expectCode(try await c.transact(.id(try Self.unknownID(like: scene.owner)), 5, key: key), .notFound)
                Self.expectCode(try await c.transact(.customer("nobody"), 5, key: key), .notFound)
                Self.expectCode(try await c.transact(.id(stranger), 5, key: key), .forbidden)
                Self.expectCode(try await c.transact(.id(scene.owner), 5, key: key, via: c.f.sdk), .forbidden)
            }
            // A debit of another size, on another currency even: the key is fresh.
            let ok = try await c.transact(.id(scene.owner), -499, key: key)
            #expect(ok.isSuccess, "\(ok)")
            #expect(ok.int("balance") == 1)
            #expect(C.withoutID(try await c.transact(.id(scene.owner), -499, key: key)) == C.withoutID(ok))
            #expect(try await c.history(.id(scene.owner)).count == 3)
        }
    }
}
