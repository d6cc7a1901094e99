import GatehouseCore
import GatehouseRuntime
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// Time moves too (DESIGN.md, "Subscription life and entitlements"): a project's own timer
/// expires what falls due, with nobody asking. The timer sleeps on the server's clock, so the
/// test's clock, moved directly rather than through `clock.advance`, wakes the same timer that
/// production's wall clock does.
@Suite struct ExpiryTimer {
    typealias F = StoreFixture

    @Test func theTimerExpiresASubscriptionWhenTheClockReachesItsEnd() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let clock = try #require(server.server.engine.registry.clock as? ManualServerClock)
            let owner = try await f.create("owner")
            #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: f.startMs, expiresMs: f.startMs + 60_000)).isSuccess)
            let watcher = try TestClient(connectingTo: server.address, timeoutMilliseconds: 15_000)
            try await watcher.hello(f.keys.publicKey)
            #expect(try await watcher.call("watch", ["profile_id": .string(owner.id)])["watching"] == true)
            let before = try await f.backend.call("sync", ["profile_id": .string(owner.id)])
            let cursor = try #require(before.int("cursor"))

            clock.advance(byMs: 59_999)
            #expect(F.subscription(try await f.get(owner.id), "t1")?.string("status") == "active", "a millisecond before its end")
            clock.advance(byMs: 1)
            let push = try await watcher.readAnswer()
            #expect(push.string("push") == "changed" && push["changed"] == ["entitlements", "purchases"], "\(push)")
            let after = try await f.backend.call("sync", ["profile_id": .string(owner.id), "cursor": .int(cursor)])
            #expect(after["changed"] == ["entitlements", "purchases"])
            #expect(F.subscription(after, "t1")?.string("status") == "expired")
            #expect(try await f.events(after: 0).last?.string("type") == "EXPIRATION")
        }
    }

    @Test func aSleeperWakesAtItsDeadlineAndACancelledOneThrows() async throws {
        let clock = ManualServerClock(startMs: 1_000)
        try await clock.sleep(untilMs: 1_000)
        let woke = Task { try await clock.sleep(untilMs: 1_500) }
        let cancelled = Task { try await clock.sleep(untilMs: 9_000) }
        while clock.sleeperCount < 2 { await Task.yield() }
        clock.advance(byMs: 499)
        #expect(clock.sleeperCount == 2, "neither deadline is reached")
        clock.advance(byMs: 1)
        try await woke.value
        #expect(clock.sleeperCount == 1)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(clock.sleeperCount == 0)
    }
}
