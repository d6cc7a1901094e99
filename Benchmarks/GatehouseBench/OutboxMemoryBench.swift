import GatehouseBase
import GatehouseCore
import GatehouseRuntime

/// `gatehouse-bench outbox [--owed N]`: what an endpoint that is down costs in memory
/// (docs/operations.md, "Sizing memory"). N `currency.transact` credits of one customer are
/// applied to a project without a webhook, then N more to one with a webhook nothing answers:
/// each of the second N is owed (its event kept in the feed, its identity and its pending
/// delivery in the outbox). The difference per write is the outbox's cost of one owed event.
/// Then one outcome settles each delivery, and the memory the settled outbox gives back is shown.
enum OutboxMemoryBench {
    static func run(owed count: Int) -> Int32 {
        let keys = KeyDigests(publicKey: SecretDigest(secret: "p"), secretKey: SecretDigest(secret: "s"))
        // swiftlint:disable:next force_try
        var state = ProjectState(id: try! ProjectID(validating: "bench"), name: "bench", createdMs: 0, keys: keys)
        var config = ProjectConfig.empty
        config.currencies = [CurrencyDefinition(code: "COINS", name: "Coins")]
        state.apply(ProjectState.ChangeBatch([.configReplaced(config)], atMs: 0))
        let nowMs: Int64 = 1_800_000_000_000
        guard let created = try? state.createProfile(customerUserID: "customer-1", token: nil, nowMs: nowMs,
                                                     random: SeededRandomSource(seed: 7))
        else { return BenchExitCode.failure }
        state.apply(created.batch)
        let profile = created.profileID
        let before = MemoryBench.residentBytes()
        guard transact(count, from: 0, profile, in: &state, nowMs: nowMs) else { return BenchExitCode.failure }
        let plain = MemoryBench.residentBytes() - before
        config.webhooks = [WebhookSettings(id: "down", url: "https://example.invalid/hook",
                                           secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")]
        state.apply(ProjectState.ChangeBatch([.configReplaced(config)], atMs: nowMs))
        let beforeOwed = MemoryBench.residentBytes()
        guard transact(count, from: count, profile, in: &state, nowMs: nowMs) else { return BenchExitCode.failure }
        let owedGrowth = MemoryBench.residentBytes() - beforeOwed
        let owed = state.outbox.owed.count
        let perPlain = plain / max(count, 1)
        let perOwed = owedGrowth / max(count, 1)
        print("outbox: \(count) currency.transact without a webhook: +\(perPlain) bytes each; "
            + "\(count) with one webhook down (\(owed) events owed): +\(perOwed) bytes each, "
            + "so an owed event costs \(perOwed - perPlain) bytes more")
        settleAll(in: &state, nowMs: nowMs + 1_000)
        return owed == count && state.outbox.owed.isEmpty ? BenchExitCode.success : BenchExitCode.failure
    }

    private static func transact(_ count: Int, from first: Int, _ profile: ProfileID, in state: inout ProjectState, nowMs: Int64)
        -> Bool
    {
        for index in first..<first + count {
            guard let decision = try? state.transact(profile: profile, currency: "COINS", amount: 1, key: "k\(index)",
                                                     reason: nil, nowMs: nowMs)
            else { return false }
            state.apply(decision.batch)
        }
        return true
    }

    /// One outcome for each owed delivery, in batches of 1,000 as the deliverer logs them.
    private static func settleAll(in state: inout ProjectState, nowMs: Int64) {
        let keys = state.outbox.owed.keys.sorted()
        var start = 0
        while start < keys.count {
            let outcomes = keys[start..<min(start + 1_000, keys.count)].map { key in
                DeliveryOutcome(target: .webhook("down"),
                                attempt: DeliveryAttempt(event: key, attempt: 1, atMs: nowMs, status: 200, latencyMs: 1, error: nil),
                                result: .delivered)
            }
            state.apply(ProjectState.ChangeBatch([.deliveriesSettled(outcomes)], atMs: nowMs))
            start += 1_000
        }
    }
}
