import Dispatch
import GatehouseBase
import GatehouseCore
import GatehousePosix
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `watch` and `unwatch` over real connections (PROTOCOL.md, "Sync and push").
@Suite struct Watches {
    @Test func aWatcherIsPushedEachChangeOnceInOrder() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
            #expect(try await backend.call("config.put", ["config": ["currencies": [["code": "COINS"]]]]).isSuccess)
            let sdk = try server.connect()
            try await sdk.hello(keys.publicKey)
            let id = try #require(try await sdk.call("profile.create").object("profile")?.string("profile_id"))
            let watcher = try server.connect()
            try await watcher.hello(keys.publicKey)
            #expect(try await watcher.call("watch", ["profile_id": .string(id)])["watching"] == true)
            var cursors: [Int64] = []
            for index in 1...3 {
                let credit = try await backend.call("currency.transact", [
                    "profile_id": .string(id), "currency": "COINS", "amount": .int(index), "idempotency_key": .string("k\(index)"),
                ])
                #expect(credit.isSuccess)
                let push = try await watcher.readAnswer()
                #expect(push["push"] == "changed")
                #expect(push.string("profile_id") == id)
                #expect(push["changed"] == ["currencies"])
                cursors.append(try #require(push.int("cursor")))
            }
            #expect(cursors == cursors.sorted() && Set(cursors).count == 3)
            #expect(try await sdk.call("profile.identify", ["profile_id": .string(id), "customer_user_id": "ann"]).isSuccess)
            #expect(try await watcher.readAnswer()["changed"] == ["identity"])
            #expect(try await backend.call("config.put", ["config": ["currencies": [["code": "COINS"], ["code": "GEMS"]]]]).isSuccess)
            #expect(try await watcher.readAnswer()["changed"] == ["offerings"])
            // The watcher's own requests and pushes share the connection, whole lines each.
            #expect(try await watcher.call("unwatch", ["profile_id": .string(id)])["watching"] == false)
            #expect(try await backend.call("currency.transact", [
                "profile_id": .string(id), "currency": "COINS", "amount": 5, "idempotency_key": "k9",
            ]).isSuccess)
            #expect(try await watcher.call("ping").isSuccess)
        }
    }

    // MARK: What a push says

    @Test func everyKindOfChangeReachesTheWatcherWithExactlyItsParts() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Scene.make(server)
            let profile = try await scene.create()
            let watcher = try await scene.watcher(.publicKey, watching: [profile.id])
            var cursor = try await scene.cursor(of: profile.id)
            let now = scene.startMs
            let day = Scene.day

            /// One change: exactly one push naming `parts`, the same answer `sync` gives from the
            /// cursor before it, and nothing else on the watcher.
            func expectPush(_ parts: [String], after what: String, sourceLocation: SourceLocation = #_sourceLocation)
                async throws
            {
                let push = try await watcher.nextPush()
                #expect(push.string("profile_id") == profile.id, "\(what)", sourceLocation: sourceLocation)
                #expect(push["changed"] == .array(parts.map { .string($0) }), "\(what): \(push)", sourceLocation: sourceLocation)
                let pushed = try #require(push.int("cursor"), sourceLocation: sourceLocation)
                #expect(pushed > cursor, "\(what): the cursor grows", sourceLocation: sourceLocation)
                let sync = try await scene.sync(profile.id, cursor: cursor)
                #expect(sync.int("cursor") == pushed, "\(what): the push's cursor is sync's", sourceLocation: sourceLocation)
                #expect(sync["changed"] == push["changed"], "\(what): the push's parts are sync's", sourceLocation: sourceLocation)
                #expect(try await watcher.drain().isEmpty, "\(what): one push", sourceLocation: sourceLocation)
                cursor = pushed
            }

            // A store purchase carrying the profile's token: a subscription, an entitlement and a grant.
            try await scene.notify(Scene.purchase("n1", "t1", purchasedMs: now, expiresMs: now + 30 * day, token: profile.token))
            try await expectPush(["entitlements", "currencies", "purchases"], after: "purchase")
            try await scene.notify(["notification_id": "n2", "type": "renewal", "original_transaction_id": "t1",
                                    "transaction_id": "t2", "expires_ms": .int(now + 60 * day), "price": 9.99])
            try await expectPush(["entitlements", "purchases"], after: "renewal")
            try await scene.notify(["notification_id": "n3", "type": "cancel", "original_transaction_id": "t1"])
            try await expectPush(["entitlements", "purchases"], after: "cancel")
            // A repeated notification id changes nothing, so pushes nothing.
            try await scene.notify(["notification_id": "n3", "type": "cancel", "original_transaction_id": "t1"], applied: false)
            #expect(try await watcher.drain().isEmpty)

            // Grants.
            try await scene.ok("entitlement.grant", ["profile_id": .string(profile.id), "entitlement": "extra", "expires_ms": nil])
            try await expectPush(["entitlements"], after: "entitlement.grant")
            try await scene.ok("entitlement.revoke", ["profile_id": .string(profile.id), "entitlement": "extra"])
            try await expectPush(["entitlements"], after: "entitlement.revoke")

            // Currencies: a credit, a debit; a refused debit and an idempotent repeat push nothing.
            try await scene.transact(profile.id, 7, key: "c1")
            try await expectPush(["currencies"], after: "credit")
            try await scene.transact(profile.id, -3, key: "d1")
            try await expectPush(["currencies"], after: "debit")
            #expect(try await scene.backend.call("currency.transact", [
                "profile_id": .string(profile.id), "currency": "COINS", "amount": -1_000_000, "idempotency_key": "d2",
            ]).errorCode == .insufficientFunds)
            try await scene.transact(profile.id, 7, key: "c1")
            #expect(try await watcher.drain().isEmpty)

            // Attributes are not sync changes.
            try await scene.ok("profile.attributes", ["profile_id": .string(profile.id), "attributes": ["$email": "a@b.c"]])
            #expect(try await watcher.drain().isEmpty)

            // Identity: the anonymous profile takes a customer user id.
            try await scene.ok("profile.identify", ["profile_id": .string(profile.id), "customer_user_id": "ann"], via: scene.sdk)
            try await expectPush(["identity"], after: "identify")

            // The config: offerings.
            try await scene.ok("config.put", ["config": Scene.config(offering: "spring")])
            try await expectPush(["offerings"], after: "config.put")

            // A one-time purchase reported by the app.
            try await scene.ok("purchase.report", [
                "profile_id": .string(profile.id), "store": "test",
                "transaction": ["transaction_id": "o1", "product_id": "lifetime", "purchased_ms": .int(now), "price": 4.99],
            ], via: scene.sdk)
            try await expectPush(["entitlements", "purchases"], after: "one-time purchase")
            // Its refund: the purchase shows refunded, and `pro` falls back to the subscription.
            try await scene.notify(["notification_id": "n4", "type": "refund", "original_transaction_id": "o1",
                                    "transaction_id": "o1"])
            try await expectPush(["entitlements", "purchases"], after: "refund")

            // Time: the subscription expires when its end passes with no renewal.
            _ = try await scene.advance(61 * day)
            try await expectPush(["entitlements", "purchases"], after: "expiry by time")
            _ = try await scene.advance(day)
            #expect(try await watcher.drain().isEmpty, "nothing more fell due")
        }
    }

    @Test func severalWatchersOfOneProfileEachGetEachPushOnce() async throws {
        try await withTestServer { server in
            let scene = try await Scene.make(server)
            let profile = try await scene.create()
            // An app and a backend may both watch.
            let watchers = [
                try await scene.watcher(.publicKey, watching: [profile.id]),
                try await scene.watcher(.secretKey, watching: [profile.id]),
                try await scene.watcher(.publicKey, watching: [profile.id]),
            ]
            for index in 1...4 { try await scene.transact(profile.id, index, key: "k\(index)") }
            var seen: [[Int64]] = []
            for watcher in watchers {
                var cursors: [Int64] = []
                for _ in 1...4 {
                    let push = try await watcher.nextPush()
                    #expect(push.string("profile_id") == profile.id)
                    #expect(push["changed"] == ["currencies"])
                    cursors.append(try #require(push.int("cursor")))
                }
                #expect(try await watcher.drain().isEmpty)
                seen.append(cursors)
            }
            #expect(seen[0] == seen[0].sorted() && Set(seen[0]).count == 4)
            #expect(seen.allSatisfy { $0 == seen[0] }, "every watcher is told the same cursors: \(seen)")
            // The operator's key may not watch.
            #expect(try await scene.admin.call("watch", ["profile_id": .string(profile.id)]).errorCode == .forbidden)
        }
    }

    @Test func pushesInterleaveWithPipelinedRequestsAsWholeLines() async throws {
        try await withTestServer { server in
            let scene = try await Scene.make(server)
            let profiles = [try await scene.create(), try await scene.create()]
            let watcher = try await scene.watcher(.publicKey, watching: profiles.map(\.id))
            var lastCursor: Int64 = 0
            for round in 0..<6 {
                // Changes in flight on the backend, written at once and not yet read...
                var writes: [UInt8] = []
                for index in 0..<10 {
                    let request: JSONObject = [
                        "id": .int(Int64(index)), "op": "currency.transact", "profile_id": .string(profiles[index % 2].id),
                        "currency": "COINS", "amount": 1, "idempotency_key": .string("r\(round)-\(index)"),
                    ]
                    writes += JSONWriter.serialize(.object(request)) + [UInt8(ascii: "\n")]
                }
                try await scene.backend.sendRaw(writes)
                // ...while the watcher sends 50 pings in one write.
                var pings: [UInt8] = []
                for index in 1...50 {
                    pings += Array(#"{"id":\#(round * 100 + index),"op":"ping"}"#.utf8) + [UInt8(ascii: "\n")]
                }
                try await watcher.client.sendRaw(pings)
                var answered: [Int64] = []
                var pushes: [JSONObject] = []
                while answered.count < 50 || pushes.count < 10 {
                    // Every line parses as one JSON object: nothing is split or glued.
                    let line = try await watcher.client.readAnswer()
                    if line["push"] != nil {
                        pushes.append(line)
                    } else {
                        #expect(line.isSuccess, "\(line)")
                        answered.append(try #require(line.int("id")))
                    }
                }
                #expect(answered == (1...50).map { Int64(round * 100 + $0) }, "answers keep request order")
                #expect(pushes.allSatisfy { $0["changed"] == ["currencies"] && $0.keys == ["push", "profile_id", "cursor", "changed"] })
                let cursors = pushes.compactMap { $0.int("cursor") }
                #expect(cursors.count == 10 && cursors == cursors.sorted() && cursors.first ?? 0 > lastCursor)
                #expect(pushes.map { $0.string("profile_id") } == (0..<10).map { Optional(profiles[$0 % 2].id) })
                lastCursor = cursors.last ?? lastCursor
                for index in 0..<10 {
                    let answer = try await scene.backend.readAnswer()
                    #expect(answer.isSuccess && answer.int("id") == Int64(index), "\(answer)")
                }
                #expect(try await watcher.drain().isEmpty)
            }
        }
    }

    // MARK: Aliases, merges, deletes

    @Test func anAliasWatchesTheCanonicalProfile() async throws {
        try await withTestServer { server in
            let scene = try await Scene.make(server)
            let anonymous = try await scene.create()
            let bob = try await scene.create("bob")
            let merged = try await scene.ok("profile.identify", ["profile_id": .string(anonymous.id), "customer_user_id": "bob"],
                                            via: scene.sdk)
            #expect(merged["merged_from"] == .array([.string(anonymous.id)]))
            let watcher = try await scene.watcher(.publicKey, watching: [anonymous.id])
            try await scene.transact(bob.id, 5, key: "k1")
            let push = try await watcher.nextPush()
            #expect(push.string("profile_id") == bob.id, "pushes name the canonical profile")
            #expect(push["changed"] == ["currencies"])
            #expect(try await watcher.drain().isEmpty)
            // Watching the canonical id too is the same watch: one push per change.
            #expect(try await watcher.call("watch", ["profile_id": .string(bob.id)])["watching"] == true)
            try await scene.transact(bob.id, 5, key: "k2")
            #expect(try await watcher.nextPush().string("profile_id") == bob.id)
            #expect(try await watcher.drain().isEmpty)
            // And unwatching through the alias ends it.
            #expect(try await watcher.call("unwatch", ["profile_id": .string(anonymous.id)])["watching"] == false)
            try await scene.transact(bob.id, 5, key: "k3")
            #expect(try await watcher.drain().isEmpty)
        }
    }

    @Test func mergingAWatchedAnonymousProfilePushesIdentityOnceAndEndsItsWatch() async throws {
        try await withTestServer { server in
            let scene = try await Scene.make(server)
            let anonymous = try await scene.create()
            let bob = try await scene.create("bob")
            try await scene.transact(anonymous.id, 40, key: "a1")
            let anonymousWatcher = try await scene.watcher(.publicKey, watching: [anonymous.id])
            let bobWatcher = try await scene.watcher(.secretKey, watching: [bob.id])
            let bobCursor = try await scene.cursor(of: bob.id)

            try await scene.ok("profile.identify", ["profile_id": .string(anonymous.id), "customer_user_id": "bob"], via: scene.sdk)
            let gone = try await anonymousWatcher.nextPush()
            #expect(gone.string("profile_id") == anonymous.id)
            #expect(gone["changed"] == ["identity"])
            #expect(try await anonymousWatcher.drain().isEmpty, "identity is pushed once")
            // The profile it merged into: its identity (the alias) and the balance it received.
            let into = try await bobWatcher.nextPush()
            #expect(into.string("profile_id") == bob.id)
            #expect(into["changed"] == ["identity", "currencies"])
            let sync = try await scene.sync(bob.id, cursor: bobCursor)
            #expect(sync["changed"] == into["changed"] && sync.int("cursor") == into.int("cursor"))
            #expect(try await bobWatcher.drain().isEmpty)

            // The merged-away profile's watch has ended: later changes (through the alias too) reach
            // only the profile's own watchers.
            try await scene.transact(bob.id, 5, key: "b1")
            try await scene.transact(anonymous.id, 5, key: "b2")
            #expect(try await anonymousWatcher.drain().isEmpty)
            #expect(try await bobWatcher.nextPush()["changed"] == ["currencies"])
            #expect(try await bobWatcher.nextPush()["changed"] == ["currencies"])
            #expect(try await bobWatcher.drain().isEmpty)
        }
    }

    @Test func deletingAWatchedProfilePushesIdentityOnceAndEndsItsWatch() async throws {
        try await withTestServer { server in
            let scene = try await Scene.make(server)
            let doomed = try await scene.create("doomed")
            let other = try await scene.create()
            let watcher = try await scene.watcher(.publicKey, watching: [doomed.id, other.id])
            try await scene.ok("profile.delete", ["profile_id": .string(doomed.id)])
            let push = try await watcher.nextPush()
            #expect(push.string("profile_id") == doomed.id)
            #expect(push["changed"] == ["identity"])
            #expect(try await watcher.drain().isEmpty)
            // A config change reaches the profiles still watched, and no longer the deleted one.
            try await scene.ok("config.put", ["config": Scene.config(offering: "later")])
            let offerings = try await watcher.nextPush()
            #expect(offerings.string("profile_id") == other.id && offerings["changed"] == ["offerings"])
            #expect(try await watcher.drain().isEmpty)
            // A customer user id that comes back is a new profile, not the old watch.
            let reborn = try await scene.create("doomed")
            try await scene.transact(reborn.id, 5, key: "r1")
            #expect(try await watcher.drain().isEmpty)
        }
    }

    // MARK: Watching and unwatching

    @Test func unwatchStopsPushes() async throws {
        try await withTestServer { server in
            let scene = try await Scene.make(server)
            let profile = try await scene.create()
            let kept = try await scene.create()
            let watcher = try await scene.watcher(.publicKey, watching: [profile.id, kept.id])
            try await scene.transact(profile.id, 1, key: "k1")
            #expect(try await watcher.nextPush().string("profile_id") == profile.id)
            #expect(try await watcher.call("unwatch", ["profile_id": .string(profile.id)])["watching"] == false)
            try await scene.transact(profile.id, 1, key: "k2")
            try await scene.ok("config.put", ["config": Scene.config(offering: "after")])
            let pushes = try await watcher.drain()
            #expect(pushes.map { $0.string("profile_id") } == [kept.id], "only the profile still watched: \(pushes)")
            // Unwatching what is not watched (any more) is not an error.
            #expect(try await watcher.call("unwatch", ["profile_id": .string(profile.id)])["watching"] == false)
            let never = try await scene.create()
            #expect(try await watcher.call("unwatch", ["profile_id": .string(never.id)])["watching"] == false)
            // A watch may start again.
            #expect(try await watcher.call("watch", ["profile_id": .string(profile.id)])["watching"] == true)
            try await scene.transact(profile.id, 1, key: "k3")
            #expect(try await watcher.nextPush()["changed"] == ["currencies"])
            #expect(try await watcher.drain().isEmpty)
        }
    }

    @Test func watchingTheSameProfileTwiceIsOneWatch() async throws {
        try await withTestServer { server in
            let scene = try await Scene.make(server)
            let profile = try await scene.create()
            let watcher = try await scene.watcher(.publicKey, watching: [profile.id, profile.id])
            #expect(try await watcher.call("watch", ["profile_id": .string(profile.id)])["watching"] == true)
            for index in 1...3 {
                try await scene.transact(profile.id, index, key: "k\(index)")
                #expect(try await watcher.nextPush()["changed"] == ["currencies"])
                #expect(try await watcher.drain().isEmpty, "one push per change")
            }
            try await scene.ok("config.put", ["config": Scene.config(offering: "twice")])
            #expect(try await watcher.nextPush()["changed"] == ["offerings"])
            #expect(try await watcher.drain().isEmpty)
            // One unwatch ends it.
            #expect(try await watcher.call("unwatch", ["profile_id": .string(profile.id)])["watching"] == false)
            try await scene.transact(profile.id, 9, key: "k9")
            #expect(try await watcher.drain().isEmpty)
        }
    }

    @Test func theHundredAndFirstProfileIsBadRequestAndChangesNothing() async throws {
        try await withTestServer { server in
            let scene = try await Scene.make(server)
            let ids = try await scene.createMany(101)
            let watcher = try await scene.watcher(.publicKey, watching: Array(ids.prefix(100)))
            let refused = try await watcher.call("watch", ["profile_id": .string(ids[100])])
            #expect(refused.errorCode == .badRequest)
            #expect(refused.object("error")?.string("message")?.contains("profile_id") == true, "\(refused)")
            // Nothing was watched: a change of the refused profile pushes nothing.
            try await scene.transact(ids[100], 1, key: "x1")
            #expect(try await watcher.drain().isEmpty)
            // Watching one held already takes no room.
            #expect(try await watcher.call("watch", ["profile_id": .string(ids[0])])["watching"] == true)
            // The limit is per connection.
            let another = try await scene.watcher(.publicKey, watching: [ids[100]])
            try await scene.transact(ids[100], 1, key: "x2")
            #expect(try await another.nextPush().string("profile_id") == ids[100])
            // The 100 still watched are all pushed a config change, once each.
            try await scene.ok("config.put", ["config": Scene.config(offering: "hundred")])
            var pushed: [String] = []
            for _ in 0..<100 { pushed.append(try #require(try await watcher.nextPush().string("profile_id"))) }
            #expect(Set(pushed) == Set(ids.prefix(100)) && pushed.count == 100)
            #expect(try await watcher.drain().isEmpty)
            // An unwatch makes room.
            #expect(try await watcher.call("unwatch", ["profile_id": .string(ids[7])])["watching"] == false)
            #expect(try await watcher.call("watch", ["profile_id": .string(ids[100])])["watching"] == true)
            #expect(try await watcher.call("watch", ["profile_id": .string(ids[7])]).errorCode == .badRequest)
        }
    }

    @Test func unknownAndForeignProfilesCannotBeWatched() async throws {
        try await withTestServer { server in
            let scene = try await Scene.make(server)
            let profile = try await scene.create()
            let other = try await Scene.make(server, project: "other")
            let stranger = try await other.create()
            let parsed = try #require(ProfileID(parsing: profile.id))
            let unknown = ProfileID(high: ~parsed.high, low: parsed.low ^ 0x5A5A, tag: parsed.tag).description
            for key in [KeyRole.publicKey, .secretKey] {
                let watcher = try await scene.watcher(key, watching: [])
                for op in ["watch", "unwatch"] {
                    #expect(try await watcher.call(op, ["profile_id": .string(unknown)]).errorCode == .notFound, "\(op)")
                    #expect(try await watcher.call(op, ["profile_id": .string(stranger.id)]).errorCode == .forbidden, "\(op)")
                    #expect(try await watcher.call(op, ["profile_id": "gh_nope"]).errorCode == .badRequest, "\(op)")
                    #expect(try await watcher.call(op, ["profile_id": 42]).errorCode == .badRequest, "\(op)")
                    #expect(try await watcher.call(op).errorCode == .badRequest, "\(op)")
                }
                // The refusals took no room and watch nothing: the stranger's changes are not pushed here.
                try await other.transact(stranger.id, 1, key: "s-\(key)")
                #expect(try await watcher.drain().isEmpty)
                #expect(try await watcher.call("watch", ["profile_id": .string(profile.id)])["watching"] == true)
            }
            // Before hello, and with the operator's key.
            let anonymous = try server.connect()
            #expect(try await anonymous.call("watch", ["profile_id": .string(profile.id)]).errorCode == .unauthenticated)
            #expect(try await scene.admin.call("watch", ["profile_id": .string(profile.id)]).errorCode == .forbidden)
            #expect(try await scene.admin.call("unwatch", ["profile_id": .string(profile.id)]).errorCode == .forbidden)
        }
    }

    // MARK: Connections that go away

    @Test func aClosedWatcherLeavesNothingBehind() async throws {
        try await withTestServer { server in
            let scene = try await Scene.make(server)
            let profile = try await scene.create()
            // One closes while idle, one with pushes on their way to it.
            let idle = try await scene.watcher(.publicKey, watching: [profile.id])
            await idle.client.close()
            let busy = try await scene.watcher(.publicKey, watching: [profile.id])
            var writes: [UInt8] = []
            for index in 0..<20 {
                let request: JSONObject = [
                    "id": .int(Int64(index)), "op": "currency.transact", "profile_id": .string(profile.id),
                    "currency": "COINS", "amount": 1, "idempotency_key": .string("p\(index)"),
                ]
                writes += JSONWriter.serialize(.object(request)) + [UInt8(ascii: "\n")]
            }
            try await scene.backend.sendRaw(writes)
            await busy.client.close()
            for index in 0..<20 {
                let answer = try await scene.backend.readAnswer()
                #expect(answer.isSuccess && answer.int("id") == Int64(index), "\(answer)")
            }
            // Later changes still work, and a new watcher is told of them.
            try await scene.transact(profile.id, 1, key: "after")
            try await scene.ok("config.put", ["config": Scene.config(offering: "after")])
            let fresh = try await scene.watcher(.publicKey, watching: [profile.id])
            try await scene.transact(profile.id, 1, key: "fresh")
            #expect(try await fresh.nextPush()["changed"] == ["currencies"])
            #expect(try await fresh.drain().isEmpty)
            let stats = try await scene.admin.call("server.stats")
            // The backend, the app, the operator and the fresh watcher (the fixture's setup connection closed too).
            #expect(stats.object("connections")?.int("open") ?? 0 <= 5, "\(stats)")
        }
    }

    @Test func aWatcherThatNeverReadsIsDroppedWhileOthersCarryOn() async throws {
        try await withTestServer({ $0.outputBytesMax = 32 * 1024 }) { server in
            let scene = try await Scene.make(server)
            let ids = try await scene.createMany(100)
            let slow = try await scene.watcher(.publicKey, watching: ids)
            let reader = try await scene.watcher(.secretKey, watching: [ids[0]])

            // Every config change pushes `offerings` to each of the 100 watched profiles.
            var changes = 0
            while server.logs.records(event: "conn.dropped_slow_reader").isEmpty, changes < 2_000 {
                var writes: [UInt8] = []
                for _ in 0..<20 {
                    let request: JSONObject = ["op": "config.put", "config": Scene.config(offering: "o\(changes)")]
                    writes += JSONWriter.serialize(.object(request)) + [UInt8(ascii: "\n")]
                    changes += 1
                }
                try await scene.backend.sendRaw(writes)
                for _ in 0..<20 { #expect(try await scene.backend.readAnswer().isSuccess) }
                // The reader keeps up: one push per change.
                for _ in 0..<20 { #expect(try await reader.nextPush()["changed"] == ["offerings"]) }
            }
            #expect(server.logs.records(event: "conn.dropped_slow_reader").count == 1, "dropped after \(changes) config changes")
            #expect(try await reader.drain().isEmpty)
            try await scene.transact(ids[0], 1, key: "after")
            #expect(try await reader.nextPush()["changed"] == ["currencies"])
            #expect(try await scene.backend.call("ping").isSuccess)
            // What reached the slow watcher before the drop (what the kernels held: megabytes) is
            // whole push lines, then the end; the last line may be cut short, without its newline
            // (the drop discards the rest of a line the kernel had taken only part of).
            let bytes = try await Self.readToEnd(slow.client.socket)
            let whole = try #require(bytes.lastIndex(of: UInt8(ascii: "\n")))
            #expect(bytes.count - whole - 1 < 200, "at most a part of one line follows the last newline")
            let lines = bytes[...whole].split(separator: UInt8(ascii: "\n"))
            #expect(lines.count < changes * 100, "the slow watcher was dropped before it was sent everything")
            let pushPrefix = Array(#"{"push":"changed","profile_id":"gh_"#.utf8)
            #expect(lines.allSatisfy { $0.starts(with: pushPrefix) && $0.last == UInt8(ascii: "}") })
            for line in [lines.first, lines.last].compactMap({ $0 }) {
                #expect(try JSONParser.parse(String(decoding: line, as: UTF8.self)).objectValue?["changed"] == ["offerings"])
            }
        }
    }

    // MARK: Bugs

    @Test
    func aWatchEndedByAMergeOrDeleteFreesItsPlace() async throws {
        try await withTestServer { server in
            let scene = try await Scene.make(server)
            let ids = try await scene.createMany(101)
            _ = try await scene.create("bob")
            let watcher = try await scene.watcher(.publicKey, watching: Array(ids.prefix(100)))
            // Two of the 100 end: one merges into bob, one is deleted; each pushes identity once.
            try await scene.ok("profile.identify", ["profile_id": .string(ids[0]), "customer_user_id": "bob"], via: scene.sdk)
            try await scene.ok("profile.delete", ["profile_id": .string(ids[1])])
            #expect(try await watcher.nextPush()["changed"] == ["identity"])
            #expect(try await watcher.nextPush()["changed"] == ["identity"])
            #expect(try await watcher.drain().isEmpty)
            // 98 are watched now: there is room for more.
            #expect(try await watcher.call("watch", ["profile_id": .string(ids[100])])["watching"] == true)
            let another = try await scene.create()
            #expect(try await watcher.call("watch", ["profile_id": .string(another.id)])["watching"] == true)
        }
    }

    /// The idle timer runs on the real monotonic clock, so this one test waits: past the idle
    /// limit, the watcher (which only waits for pushes) must still be open. Each connection sends
    /// all its requests in one write, so a busy machine cannot leave one idle halfway through its
    /// setup (as `Limits.idleConnectionIsClosed` does).
    @Test func aConnectionHoldingAWatchIsNotClosedAsIdle() async throws {
        try await withTestServer({ $0.idleTimeout = .seconds(1) }) { server in
            func lines(_ requests: [JSONObject]) -> [UInt8] {
                Array(requests.map { JSONWriter.string(.object($0)) + "\n" }.joined().utf8)
            }
            let admin = try server.connect()
            try await admin.sendRaw(lines([["op": "hello", "key": .string(TestServer.adminKey)],
                                           ["op": "project.create", "project": "acme"]]))
            _ = try await admin.readAnswer()
            let secret = try #require(try await admin.readAnswer().object("keys")?.string("secret"))
            let backend = try server.connect()
            try await backend.sendRaw(lines([["op": "hello", "key": .string(secret)],
                                             ["op": "config.put", "config": ["currencies": [["code": "COINS"]]]],
                                             ["op": "profile.create"]]))
            _ = try await backend.readAnswer()
            _ = try await backend.readAnswer()
            let id = try #require(try await backend.readAnswer().object("profile")?.string("profile_id"))
            let watcher = try server.connect()
            try await watcher.sendRaw(lines([["op": "hello", "key": .string(secret)], ["op": "watch", "profile_id": .string(id)]]))
            #expect(try await watcher.readAnswer().isSuccess)
            #expect(try await watcher.readAnswer()["watching"] == true)
            try await Task.sleep(for: .milliseconds(2500))
            let late = try server.connect()
            try await late.sendRaw(lines([["op": "hello", "key": .string(secret)],
                                          ["op": "currency.transact", "profile_id": .string(id), "currency": "COINS", "amount": 1,
                                           "idempotency_key": "late"]]))
            _ = try await late.readAnswer()
            #expect(try await late.readAnswer().isSuccess)
            let push = try await watcher.readLine()
            #expect(push != nil, "the watcher was closed as idle")
        }
    }

    @Test
    func rotatingTheKeyEndsTheWatchesMadeWithIt() async throws {
        try await withTestServer { server in
            let scene = try await Scene.make(server)
            let profile = try await scene.create()
            let watcher = try await scene.watcher(.publicKey, watching: [profile.id])
            let moved = try await scene.watcher(.publicKey, watching: [profile.id])
            let other = try await Scene.make(server, project: "other")
            try await moved.client.hello(other.keys.publicKey)
            #expect(try await scene.admin.call("project.rotate_keys", ["project": "acme", "which": "public"]).isSuccess)
            try await scene.transact(profile.id, 1, key: "after-rotation")
            #expect(try await watcher.call("ping").errorCode == .unauthenticated)
            #expect(watcher.pushes.isEmpty, "the old key's watch was pushed: \(watcher.pushes)")
            #expect(try await moved.drain().isEmpty, "a session of another project was pushed")
        }
    }
}

// MARK: - Support

extension Watches {
    enum KeyRole: CustomStringConvertible {
        case publicKey
        case secretKey

        var description: String { self == .publicKey ? "pk" : "sk" }
    }

    /// Every byte left on a blocking socket until the peer closes it, read off the concurrency pool.
    static func readToEnd(_ socket: Socket) async throws -> [UInt8] {
        try await offThePool {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = chunk.withUnsafeMutableBytes { Glibc.read(socket.descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    bytes += chunk[..<count]
                } else if count == 0 {
                    return bytes
                } else if errno != EINTR {
                    throw TestClientError.notAnObject("read failed: errno \(errno)")
                }
            }
        }
    }

    /// A project with the test store, a subscription granting coins, a non-consumable, two
    /// entitlements and a currency; a backend, an app and an operator connection.
    struct Scene {
        static let day: Int64 = 86_400_000

        let server: TestServer
        let keys: (publicKey: String, secretKey: String)
        let backend: TestClient
        let sdk: TestClient
        let admin: TestClient
        /// The server's clock when the scene was made.
        let startMs: Int64

        static func config(offering: String = "default") -> JSONValue {
            [
                "entitlements": [["id": "pro"], ["id": "extra"]],
                "products": [
                    ["id": "pro_monthly", "type": "subscription", "entitlements": ["pro"],
                     "grants": [["currency": "COINS", "amount": 100, "on": "purchase"]]],
                    ["id": "lifetime", "type": "non_consumable", "entitlements": ["pro"]],
                ],
                "currencies": [["code": "COINS", "name": "Coins"]],
                "offerings": [["id": .string(offering), "is_default": true,
                               "packages": [["id": "monthly", "type": "monthly", "product": "pro_monthly"]]]],
                "stores": ["test": true],
            ]
        }

        static func make(_ server: TestServer, project: String = "acme") async throws -> Scene {
            let keys = try await server.createProject(project)
            let backend = try server.connect()
            let hello = try await backend.hello(keys.secretKey)
            let put = try await backend.call("config.put", ["config": config()])
            guard put.isSuccess else { throw TestClientError.failed(put) }
            let sdk = try server.connect()
            try await sdk.hello(keys.publicKey)
            return Scene(server: server, keys: keys, backend: backend, sdk: sdk, admin: try await server.admin(),
                         startMs: try #require(hello.int("time_ms")))
        }

        /// A connection that said hello with `key` and watches `ids` (each answered `watching: true`).
        func watcher(_ key: KeyRole, watching ids: [String]) async throws -> Watcher {
            let watcher = Watcher(try server.connect())
            try await watcher.client.hello(key == .publicKey ? keys.publicKey : keys.secretKey)
            for id in ids {
                let answer = try await watcher.call("watch", ["profile_id": .string(id)])
                guard answer["watching"] == true else { throw TestClientError.failed(answer) }
            }
            return watcher
        }

        /// `profile.create` by the backend: the id and the token.
        func create(_ customerUserID: String? = nil) async throws -> (id: String, token: String) {
            let answer = try await ok("profile.create", customerUserID.map { ["customer_user_id": .string($0)] } ?? [:])
            guard let profile = answer.object("profile"), let id = profile.string("profile_id"),
                let token = profile.string("app_account_token")
            else { throw TestClientError.failed(answer) }
            return (id, token)
        }

        /// `count` anonymous profiles, created in one pipelined write.
        func createMany(_ count: Int) async throws -> [String] {
            var writes: [UInt8] = []
            for index in 0..<count {
                writes += Array(#"{"id":"many-\#(index)","op":"profile.create"}"#.utf8) + [UInt8(ascii: "\n")]
            }
            try await backend.sendRaw(writes)
            var ids: [String] = []
            for _ in 0..<count {
                let answer = try await backend.readAnswer()
                guard let id = answer.object("profile")?.string("profile_id") else { throw TestClientError.failed(answer) }
                ids.append(id)
            }
            return ids
        }

        /// Runs `op` and requires success.
        @discardableResult
        func ok(_ op: String, _ parameters: JSONObject = [:], via client: TestClient? = nil) async throws -> JSONObject {
            let answer = try await (client ?? backend).call(op, parameters)
            guard answer.isSuccess else { throw TestClientError.failed(answer) }
            return answer
        }

        func transact(_ id: String, _ amount: Int, key: String) async throws {
            try await ok("currency.transact", [
                "profile_id": .string(id), "currency": "COINS", "amount": .int(amount), "idempotency_key": .string(key),
            ])
        }

        func notify(_ event: JSONValue, applied: Bool = true) async throws {
            let answer = try await ok("store.notify", ["store": "test", "event": event])
            #expect(answer["applied"] == .bool(applied), "\(answer)")
        }

        func sync(_ id: String, cursor: Int64? = nil) async throws -> JSONObject {
            var parameters: JSONObject = ["profile_id": .string(id)]
            if let cursor { parameters.append("cursor", .int(cursor)) }
            return try await ok("sync", parameters)
        }

        func cursor(of id: String) async throws -> Int64 {
            try #require(try await sync(id).int("cursor"))
        }

        @discardableResult
        func advance(_ ms: Int64) async throws -> Int64 {
            try #require(try await ok("clock.advance", ["ms": .int(ms)], via: admin).int("time_ms"))
        }

        /// A test store purchase event of `pro_monthly`.
        static func purchase(_ notificationID: String, _ transactionID: String, purchasedMs: Int64, expiresMs: Int64,
                             token: String) -> JSONValue
        {
            [
                "notification_id": .string(notificationID), "type": "purchase",
                "original_transaction_id": .string(transactionID), "transaction_id": .string(transactionID),
                "product_id": "pro_monthly", "purchased_ms": .int(purchasedMs), "expires_ms": .int(expiresMs),
                "app_account_token": .string(token), "price": 9.99, "currency": "USD",
            ]
        }
    }

    /// A watching connection: its answers and its pushes apart. Pushes read while waiting for
    /// an answer are kept for ``nextPush()`` and ``drain()``.
    final class Watcher {
        let client: TestClient
        private(set) var pushes: [JSONObject] = []
        private var nextID = 0

        init(_ client: TestClient) {
            self.client = client
        }

        /// Sends `op` under a fresh string id and answers its answer.
        func call(_ op: String, _ parameters: JSONObject = [:]) async throws -> JSONObject {
            nextID += 1
            let id = "w\(nextID)"
            var request: JSONObject = ["id": .string(id), "op": .string(op)]
            request.append(contentsOf: parameters)
            try await client.send(JSONWriter.string(.object(request)))
            while true {
                let line = try await client.readAnswer()
                if line["push"] != nil {
                    pushes.append(line)
                    continue
                }
                guard line["id"] == .string(id) else { throw TestClientError.notAnObject("expected the answer to \(id): \(line)") }
                return line
            }
        }

        /// The next push, waiting for it if none is kept.
        func nextPush() async throws -> JSONObject {
            if !pushes.isEmpty { return pushes.removeFirst() }
            let line = try await client.readAnswer()
            guard line["push"] == "changed", line.keys == ["push", "profile_id", "cursor", "changed"] else {
                throw TestClientError.notAnObject("expected a push: \(line)")
            }
            return line
        }

        /// Every push that arrived before the answer to a `ping` sent now. A push goes out as soon as
        /// its change is durable, before the change's own answer, so after a change was answered
        /// its pushes are all here.
        func drain() async throws -> [JSONObject] {
            let answer = try await call("ping")
            guard answer.isSuccess else { throw TestClientError.failed(answer) }
            defer { pushes.removeAll() }
            return pushes
        }
    }
}
