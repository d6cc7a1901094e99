import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// A project for `sync`: the store fixture with a currency, a consumable that grants it and an
/// offering, on a server whose clock moves only when told to.
struct SyncFixture {
    static let day = StoreFixture.day
    static let allParts = ["identity", "entitlements", "currencies", "purchases", "offerings"]

    let f: StoreFixture

    static func config(gracePeriodMs: Int64 = 0) -> JSONValue {
        [
            "entitlements": [["id": "pro"], ["id": "extra"]],
            "products": [
                ["id": "pro_monthly", "type": "subscription", "entitlements": ["pro"]],
                ["id": "lifetime", "type": "non_consumable", "entitlements": ["pro"]],
                ["id": "coins_1000", "type": "consumable", "grants": [["currency": "COINS", "amount": 1000, "on": "purchase"]]],
            ],
            "currencies": [["code": "COINS", "name": "Coins"]],
            "offerings": [["id": "default", "is_default": true,
                           "packages": [["id": "monthly", "type": "monthly", "product": "pro_monthly"]]]],
            "login": "alias",
            "restore": "transfer",
            "grace_period_ms": .int(gracePeriodMs),
            "stores": ["test": true],
        ]
    }

    static func make(_ server: TestServer, project: String = "acme") async throws -> SyncFixture {
        let f = try await StoreFixture.make(server, project: project)
        try await f.putConfig(config())
        return SyncFixture(f: f)
    }

    var backend: TestClient { f.backend }
    var sdk: TestClient { f.sdk }

    /// `sync` of `id` with `cursor` (none: a first sync).
    func sync(_ id: String, _ cursor: Int64? = nil, via client: TestClient? = nil) async throws -> JSONObject {
        var parameters: JSONObject = ["profile_id": .string(id)]
        if let cursor { parameters.append("cursor", .int(cursor)) }
        return try await (client ?? sdk).call("sync", parameters)
    }

    static func changed(_ answer: JSONObject) -> [String]? {
        answer["changed"]?.arrayValue?.map { $0.stringValue ?? "?" }
    }

    /// The exact line of "nothing changed".
    static func nothingChangedLine(id: String, cursor: Int64) -> String {
        #"{"id":\#(id),"ok":true,"cursor":\#(cursor),"changed":[]}"#
    }

    /// Sends `sync` with `cursor` as a raw line and checks the raw answer is exactly "nothing changed".
    func expectNothingChanged(_ id: String, _ cursor: Int64, via client: TestClient? = nil,
                              sourceLocation: SourceLocation = #_sourceLocation) async throws
    {
        let client = client ?? sdk
        try await client.send(#"{"id":"raw","op":"sync","profile_id":"\#(id)","cursor":\#(cursor)}"#)
        let line = try await client.readLine()
        #expect(line == Self.nothingChangedLine(id: #""raw""#, cursor: cursor), sourceLocation: sourceLocation)
    }
}

/// `sync` over real connections (PROTOCOL.md, "Sync and push"; DESIGN.md, "Events and cursors",
/// "Lock-free reads").
@Suite struct SyncTests {
    typealias S = SyncFixture
    typealias F = StoreFixture
    static let day = StoreFixture.day

    /// The profile document members `sync` carries (the document's own `cursor` left out).
    static let documentKeys = ["profile", "entitlements", "subscriptions", "purchases", "currencies"]

    @Test(arguments: ["sdk", "server"])
    func aFirstSyncGivesTheDocumentAndEveryPart(role: String) async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let s = try await S.make(server)
            let client = role == "sdk" ? s.sdk : s.backend
            let alice = try await s.f.create("alice")
            #expect(try await s.f.report(alice.id, F.subscription("t1", purchasedMs: s.f.startMs, expiresMs: s.f.startMs + Self.day)).isSuccess)
            let answer = try await s.sync(alice.id, via: client)
            #expect(answer.isSuccess, "\(answer)")
            #expect(answer.keys == ["id", "ok", "cursor", "changed"] + Self.documentKeys)
            #expect(S.changed(answer) == S.allParts)
            var document = try await s.f.get(alice.id)
            let documentCursor = try #require(document.int("cursor"))
            document["cursor"] = nil
            document["attributes"] = nil
            document["ok"] = nil
            for key in Self.documentKeys { #expect(answer[key] == document[key], "\(key)") }
            let cursor = try #require(answer.int("cursor"))
            #expect(cursor >= documentCursor)
            // With the answered cursor: exactly "nothing changed".
            let again = try await s.sync(alice.id, cursor, via: client)
            #expect(again.keys == ["id", "ok", "cursor", "changed"])
            #expect(again.int("cursor") == cursor && S.changed(again) == [])
            try await s.expectNothingChanged(alice.id, cursor, via: client)
        }
    }

    @Test(arguments: ["sdk", "server"])
    func nothingChangedPipelinedAHundredTimesInOneWriteIsExact(role: String) async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let s = try await S.make(server)
            let client = role == "sdk" ? s.sdk : s.backend
            let alice = try await s.f.create("alice")
            let cursor = try #require(try await s.sync(alice.id, via: client).int("cursor"))
            var lines: [String] = []
            var expected: [String] = []
            for index in 0..<100 {
                switch index % 4 {
                case 0:
                    lines.append(#"{"id":\#(index),"op":"sync","profile_id":"\#(alice.id)","cursor":\#(cursor)}"#)
                    expected.append(S.nothingChangedLine(id: "\(index)", cursor: cursor))
                case 1:
                    lines.append(#"{ "cursor" : \#(cursor) , "profile_id" : "\#(alice.id)" , "op" : "sync" , "id" : "s\#(index)" }"#)
                    expected.append(S.nothingChangedLine(id: #""s\#(index)""#, cursor: cursor))
                case 2:
                    // A member sync does not know is skipped: the same answer.
                    lines.append(#"{"op":"sync","profile_id":"\#(alice.id)","cursor":\#(cursor),"id":\#(index),"extra":[1,2]}"#)
                    expected.append(S.nothingChangedLine(id: "\(index)", cursor: cursor))
                default:
                    lines.append(#"{"id":-\#(index),"op":"sync","profile_id":"\#(alice.id)","cursor":\#(cursor)}"#)
                    expected.append(S.nothingChangedLine(id: "-\(index)", cursor: cursor))
                }
            }
            try await client.sendRaw(Array((lines.joined(separator: "\n") + "\n").utf8))
            var answers: [String?] = []
            for _ in 0..<100 { answers.append(try await client.readLine()) }
            #expect(answers == expected.map { Optional($0) })
        }
    }

    @Test func aSyncPipelinedAfterAWriteSeesTheWrite() async throws {
        // Answers come in request order, and so do the effects: a sync sent after a change on the
        // same connection reports it, however quickly it follows.
        try await withTestServer({ $0.testClock = true }) { server in
            let s = try await S.make(server)
            let alice = try await s.f.create("alice")
            let cursor = try #require(try await s.sync(alice.id, via: s.backend).int("cursor"))
            var lines: [String] = []
            for index in 0..<20 {
                lines.append(#"{"id":"t\#(index)","op":"currency.transact","profile_id":"\#(alice.id)","currency":"COINS","amount":1,"idempotency_key":"k\#(index)"}"#)
                lines.append(#"{"id":\#(index),"op":"sync","profile_id":"\#(alice.id)","cursor":\#(cursor)}"#)
            }
            try await s.backend.sendRaw(Array((lines.joined(separator: "\n") + "\n").utf8))
            for index in 0..<20 {
                let transact = try await s.backend.readAnswer()
                #expect(transact["id"] == .string("t\(index)") && transact.isSuccess)
                let sync = try await s.backend.readAnswer()
                #expect(sync["id"] == .int(Int64(index)))
                #expect(S.changed(sync) == ["currencies"], "\(sync)")
                #expect(sync.object("currencies")?.int("COINS") == Int64(index + 1))
            }
        }
    }

    @Test func everyOpReportsItsPartsWithAGrowingCursorAndThenNothing() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let s = try await S.make(server)
            let f = s.f
            let t = f.startMs
            let anonymous = try #require(F.id(try await s.sdk.call("profile.create")))
            var cursor = try #require(try await s.sync(anonymous).int("cursor"))

            func expectChange(_ parts: [String], _ what: String, id: String? = nil,
                              sourceLocation: SourceLocation = #_sourceLocation) async throws
            {
                let id = id ?? anonymous
                let answer = try await s.sync(id, cursor)
                #expect(S.changed(answer) == parts, "\(what): \(answer)", sourceLocation: sourceLocation)
                let next = try #require(answer.int("cursor"), sourceLocation: sourceLocation)
                if parts.isEmpty {
                    #expect(next == cursor, "\(what)", sourceLocation: sourceLocation)
                    #expect(answer.keys == ["id", "ok", "cursor", "changed"], sourceLocation: sourceLocation)
                } else {
                    #expect(next > cursor, "\(what): the cursor grows", sourceLocation: sourceLocation)
                    #expect(Array(answer.keys.dropFirst(4)) == Self.documentKeys, sourceLocation: sourceLocation)
                }
                cursor = next
                try await s.expectNothingChanged(id, cursor, sourceLocation: sourceLocation)
            }

            func ok(_ answer: JSONObject, sourceLocation: SourceLocation = #_sourceLocation) {
                #expect(answer.isSuccess, "\(answer)", sourceLocation: sourceLocation)
            }

            ok(try await s.sdk.call("profile.attributes", ["profile_id": .string(anonymous), "attributes": ["a": "b"]]))
            try await expectChange([], "attributes")
            ok(try await s.sdk.call("profile.identify", ["profile_id": .string(anonymous), "customer_user_id": "alice"]))
            try await expectChange(["identity"], "identify")
            let token = "6f0c7d4e-3b1a-4c2d-9e8f-0a1b2c3d4e5f"
            ok(try await s.sdk.call("profile.identify", ["profile_id": .string(anonymous), "customer_user_id": "alice",
                                                         "app_account_token": .string(token)]))
            try await expectChange(["identity"], "token")
            ok(try await f.report(anonymous, F.subscription("t1", purchasedMs: t, expiresMs: t + 30 * Self.day), via: s.sdk))
            try await expectChange(["entitlements", "purchases"], "purchase.report")
            ok(try await f.notify(F.event("n1", "renewal", "t1", atMs: t + 1, [
                "transaction_id": "t1-2", "expires_ms": .int(t + 60 * Self.day), "price": 9.99,
            ])))
            try await expectChange(["entitlements", "purchases"], "renewal")
            ok(try await f.notify(F.event("n2", "cancel", "t1", atMs: t + 2)))
            try await expectChange(["entitlements", "purchases"], "cancel")
            // A repeat of a notification id changes nothing.
            #expect(try await f.notify(F.event("n2", "cancel", "t1", atMs: t + 2))["applied"] == false)
            try await expectChange([], "repeated notification")
            ok(try await s.backend.call("entitlement.grant", ["profile_id": .string(anonymous), "entitlement": "extra", "expires_ms": .null]))
            try await expectChange(["entitlements"], "entitlement.grant")
            ok(try await s.backend.call("entitlement.revoke", ["profile_id": .string(anonymous), "entitlement": "extra"]))
            try await expectChange(["entitlements"], "entitlement.revoke")
            ok(try await s.backend.call("currency.transact", ["profile_id": .string(anonymous), "currency": "COINS", "amount": 5,
                                                              "idempotency_key": "k1"]))
            try await expectChange(["currencies"], "currency.transact")
            // The same key and body again: the first answer, no change.
            ok(try await s.backend.call("currency.transact", ["profile_id": .string(anonymous), "currency": "COINS", "amount": 5,
                                                              "idempotency_key": "k1"]))
            try await expectChange([], "idempotent replay")
            ok(try await f.report(anonymous, F.oneTime("c1", product: "coins_1000", purchasedMs: t), via: s.sdk))
            try await expectChange(["currencies", "purchases"], "consumable")
            ok(try await f.restore(anonymous, [F.oneTime("c1", product: "coins_1000", purchasedMs: t)], via: s.sdk))
            try await expectChange([], "restoring what it owns")
            ok(try await s.backend.call("config.put", ["config": S.config(gracePeriodMs: 1_000)]))
            try await expectChange(["offerings"], "config.put")
            // Others' changes do not concern it.
            let bob = try await f.create("bob")
            ok(try await s.backend.call("currency.transact", ["profile_id": .string(bob.id), "currency": "COINS", "amount": 5,
                                                              "idempotency_key": "k2"]))
            ok(try await s.backend.call("profile.delete", ["profile_id": .string(bob.id)]))
            try await expectChange([], "another profile's changes")
            // A transfer reports to both.
            let carol = try await f.create("carol")
            var carolCursor = try #require(try await s.sync(carol.id).int("cursor"))
            let before = cursor
            ok(try await f.restore(carol.id, [F.subscription("t1", purchasedMs: t, expiresMs: t + 30 * Self.day)], via: s.sdk))
            try await expectChange(["entitlements", "purchases"], "transferred away")
            let carolAnswer = try await s.sync(carol.id, carolCursor)
            #expect(S.changed(carolAnswer) == ["entitlements", "purchases"])
            carolCursor = try #require(carolAnswer.int("cursor"))
            #expect(carolCursor > before)
        }
    }

    @Test func anExpiryByTimeIsReported() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let s = try await S.make(server)
            let t = s.f.startMs
            let alice = try await s.f.create("alice")
            #expect(try await s.f.report(alice.id, F.subscription("t1", purchasedMs: t, expiresMs: t + Self.day)).isSuccess)
            #expect(try await s.backend.call("entitlement.grant", [
                "profile_id": .string(alice.id), "entitlement": "extra", "expires_ms": .int(t + 3 * Self.day),
            ]).isSuccess)
            let first = try await s.sync(alice.id)
            #expect(first.object("entitlements")?.object("pro")?["is_active"] == true)
            var cursor = try #require(first.int("cursor"))
            try await s.f.advance(Self.day - 1)
            try await s.expectNothingChanged(alice.id, cursor)
            try await s.f.advance(1)
            let expired = try await s.sync(alice.id, cursor)
            #expect(S.changed(expired) == ["entitlements", "purchases"], "\(expired)")
            #expect(expired.object("entitlements")?.object("pro")?["is_active"] == false)
            #expect(expired.object("subscriptions")?.object("t1")?.string("status") == "expired")
            cursor = try #require(expired.int("cursor"))
            try await s.expectNothingChanged(alice.id, cursor)
            // A grant's end by time: entitlements only.
            try await s.f.advance(5 * Self.day)
            let lapsed = try await s.sync(alice.id, cursor)
            #expect(S.changed(lapsed) == ["entitlements"], "\(lapsed)")
            #expect(lapsed.object("entitlements")?.object("extra")?["is_active"] == false)
            let lapsedCursor: Int64 = try #require(lapsed.int("cursor"))
            try await s.expectNothingChanged(alice.id, lapsedCursor)
        }
    }

    @Test func anAliasReportsIdentityAndTheCanonicalDocument() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let s = try await S.make(server)
            let dave = try await s.f.create("dave")
            let anonymous = try #require(F.id(try await s.sdk.call("profile.create")))
            let cursor = try #require(try await s.sync(anonymous).int("cursor"))
            let identified = try await s.sdk.call("profile.identify", ["profile_id": .string(anonymous), "customer_user_id": "dave"])
            #expect(identified["merged_from"] == .array([.string(anonymous)]))
            let answer = try await s.sync(anonymous, cursor)
            #expect(S.changed(answer)?.first == "identity", "\(answer)")
            #expect(answer.object("profile")?.string("profile_id") == dave.id)
            #expect(answer.object("profile")?["aliases"] == .array([.string(anonymous)]))
            let next = try #require(answer.int("cursor"))
            #expect(next > cursor)
            // Even with the answered cursor the alias keeps telling the app to move.
            let again = try await s.sync(anonymous, next)
            #expect(S.changed(again) == ["identity"])
            #expect(again.object("profile")?.string("profile_id") == dave.id)
            // The canonical id with that cursor: nothing changed.
            try await s.expectNothingChanged(dave.id, next)
            // Without a cursor: every part, of the canonical profile.
            let first = try await s.sync(anonymous)
            #expect(S.changed(first) == S.allParts && first.object("profile")?.string("profile_id") == dave.id)
        }
    }

    @Test func badUnknownAndForeignProfilesAndCursors() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let s = try await S.make(server)
            let other = try await S.make(server, project: "other")
            let foreign = try await other.f.create("x")
            let alice = try await s.f.create("alice")
            let gone = try await s.f.create("gone")
            #expect(try await s.backend.call("profile.delete", ["profile_id": .string(gone.id)]).isSuccess)
            for client in [s.sdk, s.backend] {
                for cursor in [nil, Int64(0), Int64(1_000_000)] as [Int64?] {
                    #expect(try await s.sync(gone.id, cursor, via: client).errorCode == .notFound)
                    #expect(try await s.sync(foreign.id, cursor, via: client).errorCode == .forbidden)
                    #expect(try await s.sync("gh_nope", cursor, via: client).errorCode == .badRequest)
                }
                #expect(try await client.call("sync", ["profile_id": 42]).errorCode == .badRequest)
                #expect(try await client.call("sync", [:]).errorCode == .badRequest)
                for cursor: JSONValue in [-1, "5", 1.5, true, [1]] {
                    let answer = try await client.call("sync", ["profile_id": .string(alice.id), "cursor": cursor])
                    #expect(answer.errorCode == .badRequest, "\(cursor): \(answer)")
                }
                // Raw shapes the quick reader sees first.
                try await client.send(#"{"id":7,"op":"sync","profile_id":"\#(alice.id)","cursor":-1}"#)
                #expect(try await client.readAnswer().errorCode == .badRequest)
                try await client.send(#"{"id":8,"op":"sync","profile_id":"\#(alice.id)","cursor":01}"#)
                #expect(try await client.readAnswer().errorCode == .badJSON)
                try await client.send(#"{"id":9,"op":"sync","profile_id":"\#(gone.id)","cursor":0}"#)
                #expect(try await client.readAnswer().errorCode == .notFound)
            }
            // Before hello, and as an operator.
            let stranger = try server.connect()
            try await stranger.send(#"{"id":1,"op":"sync","profile_id":"\#(alice.id)","cursor":0}"#)
            #expect(try await stranger.readAnswer().errorCode == .unauthenticated)
            try await s.f.admin.send(#"{"id":1,"op":"sync","profile_id":"\#(alice.id)","cursor":0}"#)
            #expect(try await s.f.admin.readAnswer().errorCode == .forbidden)
        }
    }

    @Test(arguments: [false, true])
    func syncSurvivesARestart(checkpoint: Bool) async throws {
        let first = try await TestServer.start { $0.testClock = true }
        let s = try await S.make(first)
        let t = s.f.startMs
        let alice = try await s.f.create("alice")
        #expect(try await s.f.report(alice.id, F.subscription("t1", purchasedMs: t, expiresMs: t + Self.day)).isSuccess)
        #expect(try await s.backend.call("currency.transact", ["profile_id": .string(alice.id), "currency": "COINS", "amount": 5,
                                                               "idempotency_key": "k1"]).isSuccess)
        let bob = try await s.f.create("bob")
        let anonymous = try #require(F.id(try await s.sdk.call("profile.create")))
        #expect(try await s.sdk.call("profile.identify", ["profile_id": .string(anonymous), "customer_user_id": "bob"]).isSuccess)
        let aliceCursor = try #require(try await s.sync(alice.id).int("cursor"))
        let bobCursor = try #require(try await s.sync(bob.id).int("cursor"))
        if checkpoint {
            #expect(try await s.f.admin.call("server.checkpoint").isSuccess)
        }
        let second = try await first.restart { $0.testClock = true }
        do {
            let r = SyncFixture(f: try await s.f.reconnected(to: second))
            for client in [r.sdk, r.backend] {
                try await r.expectNothingChanged(alice.id, aliceCursor, via: client)
                try await r.expectNothingChanged(bob.id, bobCursor, via: client)
                let alias = try await r.sync(anonymous, bobCursor, via: client)
                #expect(S.changed(alias) == ["identity"] && alias.object("profile")?.string("profile_id") == bob.id)
            }
            // A change after the restart is reported, with a larger cursor.
            #expect(try await r.backend.call("currency.transact", ["profile_id": .string(alice.id), "currency": "COINS", "amount": 5,
                                                                   "idempotency_key": "k2"]).isSuccess)
            let answer = try await r.sync(alice.id, aliceCursor)
            #expect(S.changed(answer) == ["currencies"])
            #expect((answer.int("cursor") ?? 0) > aliceCursor)
            // And time that passed is reported too.
            try await r.f.advance(Self.day)
            let afterTransact: Int64 = try #require(answer.int("cursor"))
            let expired = try await r.sync(alice.id, afterTransact)
            #expect(S.changed(expired) == ["entitlements", "purchases"])
            await second.stop()
        } catch {
            await second.stop()
            throw error
        }
    }

    @Test func afterARestoreWithReplaceEveryOldCursorReportsEverything() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let s = try await S.make(server)
            let alice = try await s.f.create("alice")
            let bob = try await s.f.create("bob")
            #expect(try await s.backend.call("currency.transact", ["profile_id": .string(alice.id), "currency": "COINS", "amount": 5,
                                                                   "idempotency_key": "k1"]).isSuccess)
            #expect(try await s.f.admin.call("tenant.snapshot", ["project": "acme", "path": "acme.snap"]).isSuccess)
            let aliceBefore = try #require(try await s.sync(alice.id).int("cursor"))
            // Changes after the snapshot, which the restore takes back.
            #expect(try await s.backend.call("currency.transact", ["profile_id": .string(bob.id), "currency": "COINS", "amount": 5,
                                                                   "idempotency_key": "k2"]).isSuccess)
            let aliceCursor = try #require(try await s.sync(alice.id).int("cursor"))
            let bobCursor = try #require(try await s.sync(bob.id).int("cursor"))
            let highest = max(aliceCursor, bobCursor)
            let restored = try await s.f.admin.call("tenant.restore", ["project": "acme", "path": "acme.snap", "replace": true])
            #expect(restored.isSuccess, "\(restored)")
            #expect((restored.int("cursor") ?? 0) > highest, "the cursor jumped past every cursor handed out")
            let r = SyncFixture(f: try await s.f.reconnected(to: server))
            for (id, cursor) in [(alice.id, aliceBefore), (alice.id, aliceCursor), (bob.id, bobCursor)] {
                for client in [r.sdk, r.backend] {
                    let answer = try await r.sync(id, cursor, via: client)
                    #expect(S.changed(answer) == S.allParts, "\(answer)")
                    let next = try #require(answer.int("cursor"))
                    #expect(next > highest)
                    try await r.expectNothingChanged(id, next, via: client)
                }
            }
            #expect(try await r.sync(bob.id, bobCursor).object("currencies")?.int("COINS") == 0, "the snapshot's state")
        }
    }

    @Test func aRenewalOfASubscriptionLostToATransferIsReportedToTheProfileThatLostIt() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let s = try await S.make(server)
            let t = s.f.startMs
            let alice = try await s.f.create("alice")
            let carol = try await s.f.create("carol")
            let subscription = F.subscription("t1", purchasedMs: t, expiresMs: t + 30 * Self.day)
            #expect(try await s.f.report(alice.id, subscription).isSuccess)
            #expect(try await s.f.restore(carol.id, [subscription]).isSuccess)
            let first = try await s.sync(alice.id)
            let cursor = try #require(first.int("cursor"))
            #expect(first.object("entitlements")?.object("pro")?["is_active"] == false)
            #expect(try await s.f.notify(F.event("n1", "renewal", "t1", atMs: t + 1, [
                "transaction_id": "t1-2", "expires_ms": .int(t + 60 * Self.day), "price": 9.99,
            ]))["applied"] == true)
            let document = try await s.f.get(alice.id)
            try #require(document.object("entitlements") != first.object("entitlements"), "alice's document changed")
            let answer = try await s.sync(alice.id, cursor)
            #expect(S.changed(answer) == ["entitlements"], "\(answer)")
        }
    }
}
