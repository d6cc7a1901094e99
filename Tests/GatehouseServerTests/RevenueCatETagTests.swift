import GatehouseCore
import GatehouseHTTP
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// `X-RevenueCat-ETag` (HTTP.md, "ETag"): it changes whenever the body would, time-driven
/// expiries included; a match is 304 with an empty body; an empty or absent one and a `POST`
/// never are.
@Suite struct RevenueCatETag {
    typealias R = RevenueCatFixture

    @Test func aMatchingETagIs304WithAnEmptyBodyAndTheSameETag() async throws {
        try await R.run { r throws in
            let first = try await r.subscriber("u1")
            let etag = try #require(first.etag)
            #expect(!etag.isEmpty)
            let revalidated = try await r.subscriber("u1", etag: etag)
            #expect(revalidated.status == 304)
            #expect(revalidated.response.body.isEmpty)
            #expect(revalidated.etag == etag)
            #expect(try await r.subscriber("u1").etag == etag, "nothing changed: the same ETag")
        }
    }

    @Test func aRevalidationIsAnsweredOnTheLoopWithoutRunningAnOp() async throws {
        try await R.run { r throws in
            let etag = try #require(try await r.subscriber("u1").etag)
            func inboxRuns() async throws -> Int64 {
                try #require(try await r.a.f.admin.call("server.stats").object("inbox")?.int("requests"))
            }
            let first = try await inboxRuns()
            let baseline = try await inboxRuns() - first
            for _ in 0..<5 { #expect(try await r.subscriber("u1", etag: etag).status == 304) }
            #expect(try await inboxRuns() - first == 2 * baseline, "only the stats calls themselves ran as requests")
            #expect(try await r.subscriber("u1").status == 200)
            #expect(try await inboxRuns() - first > 3 * baseline, "a full answer runs its op")
        }
    }

    @Test func anEmptyOrAbsentOrForeignETagIsAFull200() async throws {
        try await R.run { r throws in
            let etag = try #require(try await r.subscriber("u1").etag)
            #expect(try await r.subscriber("u1", etag: "").status == 200)
            #expect(try await r.subscriber("u1").status == 200)
            #expect(try await r.subscriber("u1", etag: "W/\"something\"").status == 200)
            _ = try await r.subscriber("u2")
            #expect(try await r.subscriber("u2", etag: etag).status == 200, "another id's ETag")
            #expect(try await r.subscriber("u1", key: r.secretKey, etag: etag).status == 200, "the secret key's body differs")
        }
    }

    @Test func aPurchaseChangesTheETag() async throws {
        try await R.run { r throws in
            let etag = try #require(try await r.subscriber("u1").etag)
            #expect(try await r.receipt("u1", r.signedTransaction("7000000001")).status == 200)
            let after = try await r.subscriber("u1", etag: etag)
            #expect(after.status == 200)
            #expect(after.etag != etag)
            #expect(after.subscriber?.object("entitlements")?.object("pro") != nil)
        }
    }

    @Test func anExpiryByTimeChangesTheETag() async throws {
        try await R.run { r throws in
            let expires = r.a.startMs + 30 * R.A.day
            #expect(try await r.receipt("u1", r.signedTransaction("7000000001", expiresMs: expires)).status == 200)
            let etag = try #require(try await r.subscriber("u1").etag)
            try await r.a.f.advance(29 * R.A.day)
            #expect(try await r.subscriber("u1", etag: etag).status == 304, "still active")
            try await r.a.f.advance(2 * R.A.day)
            let lapsed = try await r.subscriber("u1", etag: etag)
            #expect(lapsed.status == 200, "a 304 would keep the lapsed entitlement active on the device")
            #expect(lapsed.etag != etag)
        }
    }

    @Test func aGrantEndingByTimeChangesTheETagAtThatMoment() async throws {
        // Checked on the loop, before the expiry timer has run: the moment is in the ETag itself.
        try await R.run { r throws in
            _ = try await r.subscriber("u1")
            let end = r.a.startMs + 1000
            let granted = try await r.post("/v1/subscribers/u1/entitlements/pro/promotional", ["end_time_ms": .int(end)], key: r.secretKey)
            #expect(granted.status == 201)
            let etag = try #require(try await r.subscriber("u1").etag)
            #expect(try await r.subscriber("u1", etag: etag).status == 304)
            try await r.a.f.advance(1000)
            #expect(try await r.subscriber("u1", etag: etag).status == 200)
        }
    }

    @Test func aGrantEndingBeforeALongerSubscriptionStillChangesTheETag() async throws {
        // The grant shows as an rc_promo_ subscription of its own, whose end the SDK judges.
        try await R.run { r throws in
            #expect(try await r.receipt("u1", r.signedTransaction("7000000001")).status == 200)
            let end = r.a.startMs + 1000
            #expect(try await r.post("/v1/subscribers/u1/entitlements/pro/promotional", ["end_time_ms": .int(end)], key: r.secretKey).status == 201)
            let etag = try #require(try await r.subscriber("u1").etag)
            #expect(try await r.subscriber("u1", etag: etag).status == 304)
            try await r.a.f.advance(1000)
            #expect(try await r.subscriber("u1", etag: etag).status == 200)
        }
    }

    @Test func aConfigChangeChangesTheETag() async throws {
        try await R.run { r throws in
            let etag = try #require(try await r.subscriber("u1").etag)
            try await r.a.f.putConfig(R.A.config(gracePeriodMs: 1000))
            #expect(try await r.subscriber("u1", etag: etag).status == 200)
        }
    }

    @Test func anAttributeChangeChangesTheSecretKeysETag() async throws {
        try await R.run { r throws in
            let etag = try #require(try await r.subscriber("u1", key: r.secretKey).etag)
            _ = try await r.post("/v1/subscribers/u1/attributes", ["attributes": ["$email": ["value": "a@b.c", "updated_at_ms": 1]]])
            let after = try await r.subscriber("u1", key: r.secretKey, etag: etag)
            #expect(after.status == 200)
            #expect(after.subscriber?.object("subscriber_attributes")?.object("$email")?.string("value") == "a@b.c")
        }
    }

    @Test func anIdentifyChangesTheETagOfTheIDsItTouches() async throws {
        try await R.run { r throws in
            let install = R.installID(7)
            let etag = try #require(try await r.subscriber(install).etag)
            #expect(try await r.post("/v1/subscribers/identify", ["app_user_id": .string(install), "new_app_user_id": "u1"]).status == 201)
            #expect(try await r.subscriber(install, etag: etag).status == 200)
        }
    }

    @Test func aPostIsNever304() async throws {
        try await R.run { r throws in
            let etag = try #require(try await r.subscriber("u1").etag)
            let identify = try await r.request(
                "POST", "/v1/subscribers/identify", headers: [("X-RevenueCat-ETag", etag)], body: ["app_user_id": "u1", "new_app_user_id": "u1"]
            )
            #expect(identify.status == 200)
            #expect(identify.subscriber != nil)
        }
    }

    @Test func anETagFromBeforeARestartStillHoldsOnceTheProfileIsRead() async throws {
        // The published cursors start empty after a restart: the first revalidation takes the
        // full road (a 200 with the same ETag, as nothing changed), which learns the profile;
        // the next is a 304 on the loop again.
        let first = try await TestServer.start()
        let keys = try await first.createProject("acme")
        let auth = [("Authorization", "Bearer \(keys.publicKey)")]
        let before = try await HTTPListener.connect(first).request("GET", "/v1/subscribers/u1", headers: auth)
        let etag = try #require(before.headers["X-RevenueCat-ETag"])
        let second = try await first.restart()
        let client = try HTTPListener.connect(second)
        let cold = try await client.request("GET", "/v1/subscribers/u1", headers: auth + [("X-RevenueCat-ETag", etag)])
        #expect(cold.status == 200)
        #expect(cold.headers["X-RevenueCat-ETag"] == etag, "the same body, the same ETag")
        let warm = try await client.request("GET", "/v1/subscribers/u1", headers: auth + [("X-RevenueCat-ETag", etag)])
        #expect(warm.status == 304)
        await second.stop()
    }
}
