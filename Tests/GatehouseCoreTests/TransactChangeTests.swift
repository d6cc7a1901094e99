import GatehouseBase
@testable import GatehouseCore
import Testing

// A new key's `currency.transact` is logged and applied from its fields
// (`ProjectState.TransactChange`), while replay applies the general batch it stands for, read
// back from the log. Both must leave exactly the same state and report the same effects.

private typealias V = CurrencyCatalogue

/// One `currency.transact` with a new key, after some history.
struct TransactCase: Sendable, CustomTestStringConvertible {
    let name: String
    let amount: Int64
    let key: String
    let reason: String?
    /// Whether the request names the profile by an alias (an anonymous profile merged into it).
    let byAlias: Bool

    var testDescription: String { name }

    static let all: [TransactCase] = [
        TransactCase(name: "a credit", amount: 25, key: "k-new", reason: nil, byAlias: false),
        TransactCase(name: "a debit with a reason", amount: -40, key: "k-debit", reason: "refund of an order", byAlias: false),
        TransactCase(name: "a long key (a heap string)", amount: 1, key: String(repeating: "key-", count: 32), reason: nil,
                     byAlias: false),
        TransactCase(name: "non-ASCII key and reason", amount: 7, key: "ключ-🔑", reason: "größer", byAlias: false),
        TransactCase(name: "through an alias", amount: 3, key: "k-alias", reason: "via alias", byAlias: true),
        // Details longer than the staged writer's buffer.
        TransactCase(name: "the longest key and reason", amount: 2, key: String(repeating: "ķ", count: 128),
                     reason: String(repeating: "ü", count: ProjectState.transactionReasonCharactersMax), byAlias: false),
    ]

    /// A world with a profile that has a balance, an older key and, merged into it, an anonymous
    /// profile; answers the world, the profile and the id this case names it by.
    func world() throws -> (PurchaseWorld, owner: ProfileID, named: ProfileID) {
        var world = PurchaseWorld.withCurrencies(login: .alias)
        let owner = try world.create("alice")
        let anonymous = try world.create()
        try world.transact(owner, 100, key: "k-old", reason: "welcome")
        try world.identify(anonymous, "alice")
        world.nowMs += 1_000
        return (world, owner, byAlias ? anonymous : owner)
    }
}

@Suite struct TransactChangeApply {
    @Test(arguments: TransactCase.all)
    func applyingTheFieldsLeavesWhatTheBatchLeaves(_ transact: TransactCase) throws {
        let (world, owner, named) = try transact.world()
        let decision = try world.state.transact(profile: named, currency: V.coins, amount: transact.amount, key: transact.key,
                                                reason: transact.reason, nowMs: world.nowMs)
        let change = try #require(decision.change)
        #expect(change.profile == owner)
        #expect(decision.batch == change.batch)

        var fast = world.state
        var general = world.state
        let fastEffects = fast.apply(change)
        let generalEffects = general.apply(change.batch)
        #expect(fastEffects == generalEffects)
        #expect(fastEffects.changedProfiles == [owner])
        #expect(fast == general)
        #expect(fast.events.events(after: 0, limit: 1_000) == general.events.events(after: 0, limit: 1_000))
        #expect(fast.currencies.idempotency == general.currencies.idempotency)
        #expect(fast.currencies.idempotencyRecord(forKey: transact.key)?.transactionID == decision.transactionID)
        #expect(fast.currencies.history(of: owner, V.coins, limit: 1).first?.transactionID == decision.transactionID)
        let event = try #require(fast.events.events(after: 0, limit: 1_000).last)
        #expect(event.detail("transaction_id") == .string(decision.transactionID))
        #expect(event.detail("ref") == .string(transact.key))
        #expect(event.detail("reason") == transact.reason.map { .string($0) })
        #expect(event.detail("balance") == .int(decision.balance))
    }

    @Test func theChangeIsTheBatchARuleDecides() throws {
        let (world, owner, _) = try TransactCase.all[1].world()
        let decision = try world.state.transact(profile: owner, currency: V.coins, amount: -40, key: "k-debit",
                                                reason: "refund of an order", nowMs: world.nowMs)
        let movement = CurrencyMovement(currency: V.coins, amount: -40, source: .transaction, ref: "k-debit",
                                        reason: "refund of an order")
        let record = IdempotencyRecord(profile: owner, currency: V.coins, amount: -40, reason: "refund of an order",
                                       transactionID: "vct_\(world.state.sequence + 1)_0", balance: 60, atMs: world.nowMs)
        #expect(decision.batch == ProjectState.ChangeBatch([.balanceChanged(owner, movement), .idempotencyRecorded("k-debit", record)],
                                                           atMs: world.nowMs))
        #expect(decision.transactionID == record.transactionID && decision.balance == 60 && !decision.replayed)
    }

    @Test func aReplayHasNoChangeAndAnEmptyBatch() throws {
        let (world, owner, _) = try TransactCase.all[0].world()
        let replay = try world.state.transact(profile: owner, currency: V.coins, amount: 100, key: "k-old", reason: "welcome",
                                              nowMs: world.nowMs)
        #expect(replay.replayed && replay.change == nil && replay.batch.changes.isEmpty)
    }
}

@Suite struct ResolveProfileID {
    @Test func answersTheIdResolveProfileAnswers() throws {
        let (world, owner, anonymous) = try TransactCase.all[4].world()
        #expect(try world.state.resolveProfileID(owner) == owner)
        #expect(try world.state.resolveProfileID(anonymous) == owner)
        #expect(try world.state.resolveProfileID(anonymous) == world.state.resolveProfile(anonymous).id)
    }

    @Test func refusesAsResolveProfileRefuses() throws {
        let (world, _, _) = try TransactCase.all[0].world()
        let unknown = ProfileID(high: 1, low: 2, tag: world.state.profileTag)
        let foreign = ProfileID(high: 1, low: 2, tag: world.state.profileTag ^ 1)
        for id in [unknown, foreign] {
            let expected = #expect(throws: GatehouseError.self) { try world.state.resolveProfile(id) }
            let error = #expect(throws: GatehouseError.self) { try world.state.resolveProfileID(id) }
            #expect(error != nil && error == expected)
        }
    }
}
