import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// Purchases, grants, ownership, seen notification ids and pending expiries survive a restart
/// (log replay or snapshot) and a tenant's snapshot and restore (PROTOCOL.md, "Operators";
/// DESIGN.md, "Durability and recovery", "Subscription life and entitlements").
@Suite struct PurchaseSurvival {
    typealias F = StoreFixture
    static let day = StoreFixture.day
    static let unclaimedToken = "5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d"

    /// What the scene made, to find it again.
    struct Scene {
        let owner: (id: String, token: String)
        let merged: (id: String, token: String)
        let deleted: String
        /// Notification ids the scene used.
        let notifications: [JSONValue]
    }

    /// Purchases of every kind: a renewed and cancelled subscription, a refunded one, a
    /// non-consumable, a timed and a lifetime grant, a subscription held unowned under a token,
    /// one merged in from an anonymous profile, one left by a deleted profile, a transfer.
    static func scene(_ f: StoreFixture) async throws -> Scene {
        let s = f.startMs
        let owner = try await f.create("owner")
        #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + 30 * Self.day)).isSuccess)
        let renewal = F.event("n1", "renewal", "t1", atMs: s + 1, ["transaction_id": "t1-2", "expires_ms": .int(s + 60 * Self.day), "price": 9.99])
        let cancel = F.event("n2", "cancel", "t1", atMs: s + 2)
        #expect(try await f.notify(renewal)["applied"] == true)
        #expect(try await f.notify(cancel)["applied"] == true)
        #expect(try await f.report(owner.id, F.subscription("t2", product: "extra_monthly", purchasedMs: s, expiresMs: s + 30 * Self.day)).isSuccess)
        let refund = F.event("n3", "refund", "t2", atMs: s + 3, ["transaction_id": "t2", "fraction": 0.25])
        #expect(try await f.notify(refund)["applied"] == true)
        #expect(try await f.report(owner.id, F.oneTime("l1", purchasedMs: s)).isSuccess)
        #expect(try await f.backend.call("entitlement.grant", ["profile_id": .string(owner.id), "entitlement": "extra", "expires_ms": .int(s + 90 * Self.day)]).isSuccess)

        let unowned = F.event("n4", "purchase", "u1", atMs: s + 4, [
            "transaction_id": "u1", "product_id": "pro_monthly", "purchased_ms": .int(s), "expires_ms": .int(s + 30 * Self.day),
            "app_account_token": .string(unclaimedToken), "price": 9.99,
        ])
        #expect(try await f.notify(unowned)["profile_id"] == .null)

        let merged = try await f.create("merged")
        let anonymous = try await f.create()
        #expect(try await f.report(anonymous.id, F.subscription("m1", purchasedMs: s, expiresMs: s + 30 * Self.day)).isSuccess)
        #expect(try await f.backend.call("entitlement.grant", ["profile_id": .string(anonymous.id), "entitlement": "pro", "expires_ms": nil]).isSuccess)
        #expect(try await f.backend.call("profile.identify", ["profile_id": .string(anonymous.id), "customer_user_id": "merged"])["merged_from"] == [.string(anonymous.id)])

        let deleted = try await f.create()
        #expect(try await f.report(deleted.id, F.subscription("d1", purchasedMs: s, expiresMs: s + 30 * Self.day)).isSuccess)
        #expect(try await f.backend.call("profile.delete", ["profile_id": .string(deleted.id)]).isSuccess)

        // A purchase that moved from one profile to another.
        let loser = try await f.create()
        #expect(try await f.report(loser.id, F.oneTime("x1", purchasedMs: s)).isSuccess)
        #expect(try await f.restore(merged.id, [F.oneTime("x1", purchasedMs: s)])["transferred_from"] == [.string(loser.id)])
        return Scene(owner: owner, merged: merged, deleted: deleted.id, notifications: [renewal, cancel, refund, unowned])
    }

    /// Everything a client can read about the scene.
    struct Observed: Equatable {
        var owner: JSONObject
        var merged: JSONObject
        var events: [JSONObject]
    }

    static func observe(_ f: StoreFixture, _ scene: Scene) async throws -> Observed {
        Observed(owner: try await f.get(scene.owner.id), merged: try await f.get(scene.merged.id), events: try await f.events())
    }

    /// After the scene has come back: redelivered notifications are applied no more, the
    /// unowned purchase is still claimable by its token, ownership holds, and new changes work.
    static func checkCarriesOn(_ f: StoreFixture, _ scene: Scene) async throws {
        for notification in scene.notifications {
            let answer = try await f.notify(notification)
            #expect(answer.isSuccess, "\(answer)")
            #expect(answer["applied"] == false, "a notification applied before is applied once")
        }
        #expect(try await f.notify(F.event("n10", "uncancel", "t1"))["profile_id"] == .string(scene.owner.id))
        #expect(try await f.notify(F.event("n11", "cancel", "m1"))["profile_id"] == .string(scene.merged.id))
        #expect(try await f.notify(F.event("n12", "cancel", "d1"))["profile_id"] == .null)
        #expect(try await f.notify(F.event("n13", "cancel", "u1"))["profile_id"] == .null)
        let claimed = try await f.create(token: Self.unclaimedToken)
        let document = try await f.get(claimed.id)
        #expect(document.object("subscriptions")?.keys == ["u1"])
        #expect(F.entitlement(document)?["is_active"] == true)
        #expect(try await f.notify(F.event("n14", "uncancel", "u1"))["profile_id"] == .string(claimed.id))
    }

    @Test(arguments: [false, true])
    func everythingSurvivesARestart(checkpoint: Bool) async throws {
        let first = try await TestServer.start { $0.testClock = true }
        let f = try await F.make(first)
        let scene = try await Self.scene(f)
        if checkpoint {
            #expect(try await f.admin.call("server.checkpoint").isSuccess)
        }
        let before = try await Self.observe(f, scene)
        #expect(F.subscription(before.owner, "t1")?["will_renew"] == false)
        #expect(F.subscription(before.owner, "t2")?.string("status") == "refunded")
        #expect(F.subscription(before.merged, "m1") != nil)
        #expect(before.merged["purchases"]?.arrayValue?.count == 1)

        let second = try await first.restart { $0.testClock = true }
        let g = try await f.reconnected(to: second)
        #expect(g.startMs >= f.startMs, "the restarted test clock starts at the wall clock")
        let after = try await Self.observe(g, scene)
        #expect(after.owner == before.owner)
        #expect(after.merged == before.merged)
        #expect(after.events == before.events)
        #expect(try await g.backend.call("profile.get", ["profile_id": .string(scene.deleted)]).errorCode == .notFound)
        try await Self.checkCarriesOn(g, scene)

        // And once more, with what was added after the restart.
        let changed = try await Self.observe(g, scene)
        let third = try await second.restart { $0.testClock = true }
        let h = try await g.reconnected(to: third)
        #expect(try await Self.observe(h, scene) == changed)
        await third.stop()
    }

    @Test func changesAfterACheckpointComeBackFromTheLogOnTopOfTheSnapshot() async throws {
        let first = try await TestServer.start { $0.testClock = true }
        let f = try await F.make(first)
        let owner = try await f.create()
        let s = f.startMs
        #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + Self.day)).isSuccess)
        #expect(try await f.admin.call("server.checkpoint").isSuccess)
        let renewal = F.event("n1", "renewal", "t1", ["transaction_id": "t1-2", "expires_ms": .int(s + 2 * Self.day)])
        #expect(try await f.notify(renewal)["applied"] == true)
        let before = try await f.get(owner.id)
        let events = try await f.events()

        let second = try await first.restart { $0.testClock = true }
        let g = try await f.reconnected(to: second)
        #expect(try await g.get(owner.id) == before)
        #expect(try await g.events() == events)
        #expect(try await g.notify(renewal)["applied"] == false)
        await second.stop()
    }

    @Test func whatFellDueWhileTheServerWasDownIsAppliedAtStartUp() async throws {
        let first = try await TestServer.start { $0.testClock = true }
        let f = try await F.make(first)
        let s = f.startMs
        let owner = try await f.create("sleeper")
        // The test clock stands still at `s`; a restarted one starts at the wall clock, which is
        // past `s + 1` by then. So these fall due exactly while the server is down.
        #expect(try await f.report(owner.id, F.subscription("soon", purchasedMs: s, expiresMs: s + 1)).isSuccess)
        #expect(try await f.report(owner.id, F.subscription("grace", product: "extra_monthly", purchasedMs: s, expiresMs: s + 1)).isSuccess)
        #expect(try await f.notify(F.event("n1", "billing_issue", "grace", ["grace_expires_ms": .int(s + 2)]))["applied"] == true)
        #expect(try await f.backend.call("entitlement.grant", ["profile_id": .string(owner.id), "entitlement": "pro", "expires_ms": .int(s + 1)]).isSuccess)
        // This one is still ahead after the restart.
        #expect(try await f.report(owner.id, F.subscription("later", purchasedMs: s, expiresMs: s + 10 * Self.day)).isSuccess)
        let document = try await f.get(owner.id)
        #expect(F.subscription(document, "soon")?.string("status") == "active")
        #expect(F.subscription(document, "grace")?.string("status") == "grace")
        let cursor = try #require(document.int("cursor"))
        let feed = try await f.feedCursor()

        let second = try await first.restart { $0.testClock = true }
        let g = try await f.reconnected(to: second)
        #expect(g.startMs > s + 2, "the restarted clock is past the deadlines")
        var d = try await g.get(owner.id)
        #expect(F.subscription(d, "soon")?.string("status") == "expired")
        #expect(F.subscription(d, "grace")?.string("status") == "expired")
        #expect(F.subscription(d, "later")?.string("status") == "active")
        #expect(F.entitlement(d, "extra")?["is_active"] == false)
        #expect((d.int("cursor") ?? 0) > cursor, "the expiries moved the profile's cursor")
        let expirations = try await g.events(after: feed)
        #expect(expirations.count == 3)
        #expect(expirations.allSatisfy { $0.string("type") == "EXPIRATION" && $0.string("profile_id") == owner.id })
        #expect(Set(expirations.compactMap { $0.string("original_transaction_id") }) == ["soon", "grace"])
        #expect(expirations.contains { $0.string("store") == "promotional" && $0.string("entitlement") == "pro" })
        // `later` still holds pro.
        #expect(F.entitlement(d)?["is_active"] == true)
        #expect(F.entitlement(d)?.string("product_id") == "pro_monthly")

        // Applied once: another restart finds nothing more due.
        let third = try await second.restart { $0.testClock = true }
        let h = try await g.reconnected(to: third)
        #expect(try await h.events(after: feed).count == 3)
        // The pending one still falls due on the clock.
        try await h.advance(10 * Self.day)
        d = try await h.get(owner.id)
        #expect(F.subscription(d, "later")?.string("status") == "expired")
        #expect(F.entitlement(d)?["is_active"] == false)
        // Ten days on, the feed keeps only the last 7 days' events: the new expiry.
        let last = try await h.events(after: feed)
        #expect(last.count == 1)
        #expect(last.last?.string("type") == "EXPIRATION" && last.last?.string("original_transaction_id") == "later")
        await third.stop()
    }

    @Test func aCheckpointedPendingExpiryIsAppliedAtStartUp() async throws {
        let first = try await TestServer.start { $0.testClock = true }
        let f = try await F.make(first)
        let s = f.startMs
        let owner = try await f.create()
        #expect(try await f.report(owner.id, F.subscription("soon", purchasedMs: s, expiresMs: s + 1)).isSuccess)
        #expect(try await f.admin.call("server.checkpoint").isSuccess)
        let feed = try await f.feedCursor()
        let second = try await first.restart { $0.testClock = true }
        let g = try await f.reconnected(to: second)
        #expect(F.subscription(try await g.get(owner.id), "soon")?.string("status") == "expired")
        #expect(try await g.events(after: feed).map { $0.string("type") } == ["EXPIRATION"])
        await second.stop()
    }

    // MARK: Tenant snapshot and restore

    @Test func aTenantRestoredOverItselfKeepsPurchasesOwnershipAndPendingExpiries() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let scene = try await Self.scene(f)
            let s = f.startMs
            let before = try await Self.observe(f, scene)
            let snapshot = try await f.admin.call("tenant.snapshot", ["project": "acme", "path": "acme.snap"])
            #expect(snapshot.isSuccess, "\(snapshot)")

            // Changes after the snapshot are undone by the restore.
            #expect(try await f.notify(F.event("n20", "uncancel", "t1"))["applied"] == true)
            #expect(try await f.report(scene.owner.id, F.subscription("late", purchasedMs: s, expiresMs: s + Self.day)).isSuccess)
            let restored = try await f.admin.call("tenant.restore", ["project": "acme", "path": "acme.snap", "replace": true])
            #expect(restored.isSuccess, "\(restored)")

            let g = try await f.reconnected(to: server)
            let after = try await Self.observe(g, scene)
            #expect(F.holdings(after.owner) == F.holdings(before.owner))
            #expect(F.holdings(after.merged) == F.holdings(before.merged))
            #expect(after.owner["profile"] == before.owner["profile"])
            #expect((after.owner.int("cursor") ?? 0) > (before.owner.int("cursor") ?? 0), "a cursor never goes back")
            #expect(after.events == before.events)
            #expect(F.subscription(after.owner, "late") == nil)
            try await Self.checkCarriesOn(g, scene)
            // n20 came after the snapshot: the restored tenant has not seen it.
            #expect(try await g.notify(F.event("n20", "uncancel", "t1"))["applied"] == true)

            // Pending expiries came along: the clock ends them.
            let feed = try await g.feedCursor()
            try await g.advance(100 * Self.day)
            let d = try await g.get(scene.owner.id)
            #expect(F.subscription(d, "t1")?.string("status") == "expired")
            #expect(F.entitlement(d, "extra")?["is_active"] == false, "the timed grant ended too")
            #expect(F.entitlement(d)?["is_active"] == true, "the non-consumable stays")
            let expirations = try await g.events(after: feed)
            #expect(expirations.allSatisfy { $0.string("type") == "EXPIRATION" })
            #expect(Set(expirations.compactMap { $0.string("original_transaction_id") }).isSuperset(of: ["t1", "m1", "d1", "u1"]))
            #expect(expirations.contains { $0.string("store") == "promotional" && $0.string("entitlement") == "extra" })
        }
    }

    @Test func aClonedTenantKeepsPurchasesOwnershipAndPendingExpiries() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let scene = try await Self.scene(f)
            let before = try await Self.observe(f, scene)
            #expect(try await f.admin.call("tenant.snapshot", ["project": "acme", "path": "acme.snap"]).isSuccess)
            let clone = try await f.admin.call("tenant.restore", ["project": "acme-copy", "path": "acme.snap"])
            #expect(clone.isSuccess, "\(clone)")
            let keys = try #require(clone.object("keys"))
            let c = try await f.reconnected(
                to: server, project: "acme-copy",
                keys: (try #require(keys.string("public")), try #require(keys.string("secret"))))

            let copied = try await Self.observe(c, scene)
            #expect(copied == before, "the clone reads the same")
            try await Self.checkCarriesOn(c, scene)
            // The original is untouched by what happened in the clone.
            #expect(try await Self.observe(f, scene) == before)
            #expect(try await f.notify(scene.notifications[0])["applied"] == false)
            let owned = try await f.notify(F.event("n13", "cancel", "u1"))
            #expect(owned["profile_id"] == .null, "the original's unowned purchase is still unowned")

            let feed = try await c.feedCursor()
            try await c.advance(100 * Self.day)
            let d = try await c.get(scene.owner.id)
            #expect(F.subscription(d, "t1")?.string("status") == "expired")
            #expect(try await c.events(after: feed).contains { $0.string("original_transaction_id") == "t1" && $0.string("type") == "EXPIRATION" })
            // The original expired as well, on its own.
            #expect(F.subscription(try await f.get(scene.owner.id), "t1")?.string("status") == "expired")
        }
    }

    @Test func snapshotAndRestoreAnswerTheProfilesTheyCarry() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            _ = try await Self.scene(f)
            let profiles = try #require(try await f.admin.call("project.get", ["project": "acme"]).object("project")?.int("profiles"))
            #expect(profiles > 0)
            let snapshot = try await f.admin.call("tenant.snapshot", ["project": "acme", "path": "acme.snap"])
            #expect(snapshot.int("profiles") == profiles, "\(snapshot)")
            let clone = try await f.admin.call("tenant.restore", ["project": "acme-copy", "path": "acme.snap"])
            #expect(clone.int("profiles") == profiles, "\(clone)")
            let replaced = try await f.admin.call("tenant.restore", ["project": "acme", "path": "acme.snap", "replace": true])
            #expect(replaced.int("profiles") == profiles, "\(replaced)")
        }
    }

    @Test func aRestoredTenantAppliesWhatFellDueSinceItsSnapshot() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let s = f.startMs
            let owner = try await f.create()
            #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + Self.day)).isSuccess)
            #expect(try await f.admin.call("tenant.snapshot", ["project": "acme", "path": "acme.snap"]).isSuccess)
            // The clock passes the expiry before the restore: the clone's copy is due at once.
            try await f.advance(2 * Self.day)
            let clone = try await f.admin.call("tenant.restore", ["project": "later", "path": "acme.snap"])
            let keys = try #require(clone.object("keys"))
            let c = try await f.reconnected(
                to: server, project: "later", keys: (try #require(keys.string("public")), try #require(keys.string("secret"))))
            #expect(F.subscription(try await c.get(owner.id), "t1")?.string("status") == "expired")
            #expect(try await c.events().filter { $0.string("type") == "EXPIRATION" }.count == 1)
        }
    }
}
