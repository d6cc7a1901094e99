import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// Every answer waits for the durability of what it shows, errors included, and for nothing
/// else (DESIGN.md, "One actor per project": a read never shows a write that could still be
/// lost; every other read answers at once). The log's sync is held back with a
/// `FaultyFileSystem`, so a change stays in flight for as long as a test needs.
@Suite struct AnswerDurability {
    typealias C = CurrencyFixture

    /// A test-clock server on a disk whose syncs the test holds.
    static func withHeldDisk(_ body: (FaultyFileSystem, TestServer) async throws -> Void) async throws {
        let disk = FaultyFileSystem()
        try await withTestServer({
            $0.fileSystem = disk
            $0.testClock = true
        }) { server in
            // A sync held past the test would keep the log's flusher, and so the server's stop, waiting.
            defer { disk.releaseSyncs() }
            try await body(disk, server)
        }
    }

    /// ``withHeldDisk(_:)`` with the currency fixture.
    static func run(_ body: (C, FaultyFileSystem, TestServer) async throws -> Void) async throws {
        try await withHeldDisk { disk, server in try await body(try await C.make(server), disk, server) }
    }

    /// A backend connection whose reads give up after 15 s, so an answer held back by mistake
    /// fails the test instead of hanging it.
    static func backend(_ c: C, _ server: TestServer) async throws -> TestClient {
        let client = try TestClient(connectingTo: server.address, timeoutMilliseconds: 15_000)
        try await client.hello(c.f.keys.secretKey)
        return client
    }

    static func transactLine(_ profile: String, _ amount: Int64, key: String) -> String {
        #"{"id":"t-\#(key)","op":"currency.transact","profile_id":"\#(profile)","currency":"COINS","amount":\#(amount),"idempotency_key":"\#(key)"}"#
    }

    /// Polls until `condition` holds (10 s at most): for state another thread reaches.
    static func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while try await !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("never: \(what)")
                return
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    static func inboxRuns(_ admin: TestClient) async throws -> Int64 {
        try await admin.call("server.stats").object("inbox")?.int("requests") ?? -1
    }

    static func laneSteps(_ admin: TestClient) async throws -> Int64 {
        try await admin.call("server.stats").object("lanes")?.int("steps") ?? -1
    }

    /// Sends `line` on `client` once `disk` holds the log's sync, and returns when the server's
    /// lane has run it and the loop has had a turn since: its answer, if it were not held, would
    /// be on its way.
    static func sendWhileHeld(_ line: String, on client: TestClient, admin: TestClient) async throws {
        let steps = try await laneSteps(admin)
        try await client.send(line)
        try await eventually("the lane runs \(line)") { try await laneSteps(admin) > steps }
        _ = try await admin.call("ping")
        _ = try await admin.call("server.stats")
    }

    /// A credit is in flight (its sync held); a debit larger than the balance on another
    /// connection must not answer `insufficient_funds` with a balance that counts the credit
    /// before the credit is durable.
    @Test func anErrorWaitsForTheChangeItShows() async throws {
        try await Self.run { c, disk, server in
            let alice = try await c.f.create("alice").id
            try await c.expectTransact(.id(alice), 100, key: "first")
            let crediting = try await Self.backend(c, server)
            let debiting = try await Self.backend(c, server)
            disk.holdSyncs()
            try await crediting.send(Self.transactLine(alice, 50, key: "held"))
            try await Self.eventually("the credit's sync is held") { disk.syncsWaiting >= 1 }
            try await Self.sendWhileHeld(Self.transactLine(alice, -1_000, key: "too-much"), on: debiting, admin: c.f.admin)
            #expect(try await !debiting.hasUnreadInput(), "the refusal shows a balance the log has not made durable")
            #expect(try await !crediting.hasUnreadInput())
            disk.releaseSyncs()
            let refused = try await debiting.readAnswer()
            #expect(refused.errorCode == .insufficientFunds)
            #expect(refused.object("error")?.int("balance") == 150)
            #expect(try await crediting.readAnswer().int("balance") == 150)
        }
    }

    /// The same for an idempotency key whose first use is in flight: `conflict` waits for it.
    @Test func aConflictWaitsForTheKeysFirstUse() async throws {
        try await Self.run { c, disk, server in
            let alice = try await c.f.create("alice").id
            let first = try await Self.backend(c, server)
            let second = try await Self.backend(c, server)
            disk.holdSyncs()
            try await first.send(Self.transactLine(alice, 5, key: "k"))
            try await Self.eventually("the first use's sync is held") { disk.syncsWaiting >= 1 }
            try await Self.sendWhileHeld(Self.transactLine(alice, 6, key: "k"), on: second, admin: c.f.admin)
            #expect(try await !second.hasUnreadInput(), "the conflict shows a key the log has not made durable")
            disk.releaseSyncs()
            #expect(try await second.readAnswer().errorCode == .conflict)
            #expect(try await first.readAnswer().int("balance") == 5)
        }
    }

    /// An op run on the connection's inbox too: `owned_by_other` (restore: keep) shows who owns a
    /// purchase, and waits until that owner's report is durable.
    @Test func anInboxErrorWaitsForTheChangeItShows() async throws {
        try await Self.withHeldDisk { disk, server in
            let f = try await StoreFixture.make(server, restore: "keep")
            let owner = try await f.create("owner").id
            let other = try await f.create("other").id
            let transaction = StoreFixture.oneTime("l1", purchasedMs: f.startMs)
            let reporting = try TestClient(connectingTo: server.address, timeoutMilliseconds: 15_000)
            try await reporting.hello(f.keys.secretKey)
            let late = try TestClient(connectingTo: server.address, timeoutMilliseconds: 15_000)
            try await late.hello(f.keys.secretKey)
            let line = { (profile: String) in
                JSONWriter.string(["op": "purchase.report", "profile_id": .string(profile), "store": "test", "transaction": transaction])
            }
            disk.holdSyncs()
            try await reporting.send(line(owner))
            try await Self.eventually("the report's sync is held") { disk.syncsWaiting >= 1 }
            let ran = try await Self.inboxRuns(f.admin)
            try await late.send(line(other))
            // The admin's own server.stats runs on its inbox too: one more than that is the report.
            try await Self.eventually("the second report ran") { try await Self.inboxRuns(f.admin) >= ran + 2 }
            _ = try await f.admin.call("ping")
            #expect(try await !late.hasUnreadInput(), "the refusal shows an owner the log has not made durable")
            disk.releaseSyncs()
            #expect(try await late.readAnswer().errorCode == .ownedByOther)
            #expect(try await reporting.readAnswer().isSuccess)
        }
    }

    /// While a change to alice is in flight, reads of bob answer at once; a read of alice waits.
    @Test func aReadWaitsOnlyForTheChangesOfWhatItShows() async throws {
        try await Self.run { c, disk, server in
            let alice = try await c.f.create("alice").id
            let bob = try await c.f.create("bob").id
            try await c.expectTransact(.id(bob), 7, key: "bob")
            let feedBefore = try await c.f.feedCursor()
            let crediting = try await Self.backend(c, server)
            let reader = try await Self.backend(c, server)
            let aliceReader = try await Self.backend(c, server)
            disk.holdSyncs()
            try await crediting.send(Self.transactLine(alice, 50, key: "held"))
            try await Self.eventually("the credit's sync is held") { disk.syncsWaiting >= 1 }

            let bobDocument = try await reader.call("profile.get", ["profile_id": .string(bob)])
            #expect(bobDocument.object("currencies")?.int("COINS") == 7, "bob's document shows nothing in flight")
            let bobHistory = try await reader.call("currency.history", ["profile_id": .string(bob), "currency": "COINS"])
            #expect(bobHistory["entries"]?.arrayValue?.count == 1)
            let bobSync = try await reader.call("sync", ["profile_id": .string(bob), "cursor": 0])
            #expect(bobSync.object("currencies")?.int("COINS") == 7)
            // A page that ends before the credit in flight answers; one that shows it would wait.
            let page = try await reader.call("events", ["cursor": .int(feedBefore - 1), "limit": 1])
            #expect(page["events"]?.arrayValue?.first?.objectValue?.int("cursor") == feedBefore, "bob's credit, which is durable")
            #expect(try await reader.call("config.get").isSuccess)

            try await Self.sendWhileHeld(#"{"id":"a","op":"profile.get","profile_id":"\#(alice)"}"#, on: aliceReader,
                                         admin: c.f.admin)
            #expect(try await !aliceReader.hasUnreadInput(), "alice's document shows the credit in flight")
            disk.releaseSyncs()
            #expect(try await aliceReader.readAnswer().object("currencies")?.int("COINS") == 50)
            #expect(try await crediting.readAnswer().int("balance") == 50)
        }
    }
}
