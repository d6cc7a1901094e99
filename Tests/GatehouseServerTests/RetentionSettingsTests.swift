import GatehouseCore
@testable import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// `gatehouse serve --history-per-currency`, `--idempotency-hours` and `--feed-max-events` bound
/// what a project keeps of what grows with its write rate (DESIGN.md, "Virtual currencies").
@Suite struct RetentionSettings {
    static func configuration(_ arguments: [String]) throws -> ServerConfiguration {
        try ServeCommand.makeConfiguration(try ServeCommand.parser.parse(arguments), environment: [:])
    }

    @Test func theFlagsSetTheLimitsAndTheDefaultsAreTheProtocols() throws {
        let defaults = try Self.configuration([])
        #expect(defaults.retention == Retention.standard)
        let set = try Self.configuration(["--history-per-currency=10", "--idempotency-hours", "48", "--feed-max-events=5000"])
        #expect(set.retention.historyEntriesPerCurrency == 10)
        #expect(set.retention.idempotencyMs == 48 * 3_600_000)
        #expect(set.retention.feedEventsMax == 5_000)
        #expect(set.retention.feedAgeMs == Retention.standard.feedAgeMs)
    }

    @Test(arguments: [
        "--history-per-currency=0", "--history-per-currency=-1", "--history-per-currency=many", "--idempotency-hours=0",
        "--idempotency-hours=8761", "--idempotency-hours=1.5", "--feed-max-events=0", "--feed-max-events=1000000001",
    ])
    func valuesOutOfRangeAreUsageErrors(_ argument: String) {
        #expect(throws: UsageError.self) { try Self.configuration([argument]) }
    }

    /// Over the wire and across a restart (the log replayed under the same limits): a profile's
    /// history shows its newest entries, its balance every credit's.
    @Test func aServerKeepsTheNewestHistoryEntriesAcrossARestart() async throws {
        let first = try await TestServer.start {
            $0.testClock = true
            $0.retention.historyEntriesPerCurrency = 3
        }
        let fixture = try await CurrencyFixture.make(first)
        let alice = try await fixture.f.create("alice").id
        for n in 1...7 { try await fixture.expectTransact(.id(alice), Int64(n), key: "k\(n)") }
        let history = try await fixture.history(.id(alice))
        #expect(history.compactMap { $0.int("amount") } == [7, 6, 5])
        #expect(history.first?.int("balance") == 28)
        CurrencyFixture.expectConsistent(history, balance: 28, complete: false)

        let second = try await first.restart {
            $0.testClock = true
            $0.retention.historyEntriesPerCurrency = 3
        }
        let again = try await fixture.reconnected(to: second)
        #expect(try await again.history(.id(alice)).compactMap { $0.int("amount") } == [7, 6, 5])
        #expect(try await again.balance(alice) == 28)
        await second.stop()
    }

    /// A key is new again once its window is over, on a server that keeps keys one hour.
    @Test func anIdempotencyKeyIsNewAgainAfterItsWindow() async throws {
        try await withTestServer({
            $0.testClock = true
            $0.retention.idempotencyMs = 3_600_000
        }) { server in
            let fixture = try await CurrencyFixture.make(server)
            let alice = try await fixture.f.create("alice").id
            let first = try await fixture.expectTransact(.id(alice), 5, key: "k")
            _ = try await fixture.f.advance(3_600_000)
            #expect(try await fixture.expectTransact(.id(alice), 5, key: "k") == first, "within the hour: the first answer")
            _ = try await fixture.f.advance(1)
            let again = try await fixture.expectTransact(.id(alice), 5, key: "k")
            #expect(again.transactionID != first.transactionID && again.balance == 10)
        }
    }
}
