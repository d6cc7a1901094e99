import GatehousePosix
import GatehouseTesting
import GatehouseWire
import Testing

/// The timer production relies on, on the real clock of the real binary: a subscription that
/// ends two seconds from now expires by itself, `sync` shows it, and its watcher gets the push.
@Suite struct RealClockExpiry {
    @Test func aSubscriptionEndingTwoSecondsAheadExpiresByItself() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await ServerProcess.start(dataDirectory: directory.appending("data"))
            let admin = try await server.admin()
            let created = try await admin.call("project.create", ["project": "acme"])
            let secretKey = try #require(created.object("keys")?.string("secret"))
            let publicKey = try #require(created.object("keys")?.string("public"))
            let backend = try TestClient(connectingTo: server.address, timeoutMilliseconds: 15_000)
            let nowMs = try #require(try await backend.hello(secretKey).int("time_ms"))
            #expect(try await backend.call("config.put", ["config": [
                "entitlements": [["id": "pro"]],
                "products": [["id": "pro_monthly", "type": "subscription", "entitlements": ["pro"]]],
                "stores": ["test": true],
            ]]).isSuccess)
            let profile = try #require(try await backend.call("profile.create", ["customer_user_id": "owner"])
                .object("profile")?.string("profile_id"))
            let reported = try await backend.call("purchase.report", [
                "profile_id": .string(profile), "store": "test",
                "transaction": ["transaction_id": "t1", "original_transaction_id": "t1", "product_id": "pro_monthly",
                                "purchased_ms": .int(nowMs), "expires_ms": .int(nowMs + 2_000), "price": 9.99, "currency": "USD"],
            ])
            #expect(reported.object("entitlements")?.object("pro")?["is_active"] == true)
            let cursor = try #require(reported.int("cursor"))
            let watcher = try TestClient(connectingTo: server.address, timeoutMilliseconds: 15_000)
            try await watcher.hello(publicKey)
            #expect(try await watcher.call("watch", ["profile_id": .string(profile)])["watching"] == true)

            let push = try await watcher.readAnswer()
            #expect(push.string("push") == "changed" && push.string("profile_id") == profile, "\(push)")
            #expect(push["changed"] == ["entitlements", "purchases"])
            let synced = try await backend.call("sync", ["profile_id": .string(profile), "cursor": .int(cursor)])
            #expect(synced["changed"] == ["entitlements", "purchases"])
            #expect(synced.object("subscriptions")?.object("t1")?.string("status") == "expired")
            #expect(synced.object("entitlements")?.object("pro")?["is_active"] == false)
            let stopped = await server.stop()
            #expect(stopped.status == 0)
        }
    }
}
