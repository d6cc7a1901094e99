import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// A project with two currencies and products that grant them, on a test-clock server (built on
/// ``StoreFixture``). Shared by the currency suites of this target.
///
/// - `pro_monthly` (subscription, `pro`): 100 COINS on `both` (purchase and renewal);
/// - `gem_monthly` (subscription): 50 COINS on `purchase`, 5 GEMS on `renewal`;
/// - `coins_1000` (consumable): 1,000 COINS on `purchase`;
/// - `lifetime` (non-consumable, `pro`): no grant.
struct CurrencyFixture {
    static let balanceMax: Int64 = 2_000_000_000
    static let day = StoreFixture.day

    let f: StoreFixture

    static let config: JSONValue = [
        "entitlements": [["id": "pro"]],
        "products": [
            ["id": "pro_monthly", "type": "subscription", "entitlements": ["pro"],
             "grants": [["currency": "COINS", "amount": 100, "on": "both"]]],
            ["id": "gem_monthly", "type": "subscription",
             "grants": [["currency": "GEMS", "amount": 5, "on": "renewal"], ["currency": "COINS", "amount": 50, "on": "purchase"]]],
            ["id": "coins_1000", "type": "consumable", "grants": [["currency": "COINS", "amount": 1000, "on": "purchase"]]],
            ["id": "lifetime", "type": "non_consumable", "entitlements": ["pro"]],
        ],
        "currencies": [["code": "COINS", "name": "Coins"], ["code": "GEMS", "name": "Gems"]],
        "login": "alias",
        "restore": "transfer",
        "stores": ["test": true],
    ]

    static func make(_ server: TestServer, project: String = "acme") async throws -> CurrencyFixture {
        let f = try await StoreFixture.make(server, project: project)
        try await f.putConfig(config)
        return CurrencyFixture(f: f)
    }

    /// The same project on a restarted server, with fresh connections.
    func reconnected(to server: TestServer) async throws -> CurrencyFixture {
        CurrencyFixture(f: try await f.reconnected(to: server))
    }

    var backend: TestClient { f.backend }
    var startMs: Int64 { f.startMs }

    /// Whose balance: a profile id (or alias), or a customer user id.
    enum Who {
        case id(String)
        case customer(String)

        var parameters: JSONObject {
            switch self {
            case .id(let id): ["profile_id": .string(id)]
            case .customer(let customerUserID): ["customer_user_id": .string(customerUserID)]
            }
        }
    }

    // MARK: Requests

    /// `currency.transact` with the parameters in the protocol's order; `reason` only when given.
    func transact(
        _ who: Who, _ amount: JSONValue, key: String, currency: String = "COINS", reason: String? = nil,
        via client: TestClient? = nil
    ) async throws -> JSONObject {
        var parameters = who.parameters
        parameters.append("currency", .string(currency))
        parameters.append("amount", amount)
        parameters.append("idempotency_key", .string(key))
        if let reason { parameters.append("reason", .string(reason)) }
        return try await (client ?? backend).call("currency.transact", parameters)
    }

    /// `currency.transact` that must succeed; answers the balance and the transaction id.
    @discardableResult
    func expectTransact(
        _ who: Who, _ amount: Int64, key: String, currency: String = "COINS", reason: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (balance: Int64, transactionID: String) {
        let answer = try await transact(who, .int(amount), key: key, currency: currency, reason: reason)
        #expect(answer.isSuccess, "\(answer)", sourceLocation: sourceLocation)
        guard answer.isSuccess, let balance = answer.int("balance"), let id = answer.string("transaction_id") else {
            throw TestClientError.failed(answer)
        }
        return (balance, id)
    }

    /// The raw `currency.history` answer.
    func historyAnswer(_ who: Who, currency: String = "COINS", limit: JSONValue? = nil, via client: TestClient? = nil)
        async throws -> JSONObject
    {
        var parameters = who.parameters
        parameters.append("currency", .string(currency))
        if let limit { parameters.append("limit", limit) }
        return try await (client ?? backend).call("currency.history", parameters)
    }

    /// A balance's history entries, newest first; throws unless the answer is a success.
    func history(_ who: Who, currency: String = "COINS", limit: Int64? = nil) async throws -> [JSONObject] {
        let answer = try await historyAnswer(who, currency: currency, limit: limit.map { .int($0) })
        guard answer.isSuccess, let entries = answer["entries"]?.arrayValue else { throw TestClientError.failed(answer) }
        return entries.compactMap(\.objectValue)
    }

    /// The profile document's balances (`currencies`).
    func balances(_ profileID: String) async throws -> JSONValue? {
        try await f.get(profileID)["currencies"]
    }

    func balance(_ profileID: String, _ currency: String = "COINS") async throws -> Int64? {
        try await f.get(profileID).object("currencies")?.int(currency)
    }

    /// The `VIRTUAL_CURRENCY_TRANSACTION` events of the feed after `cursor`, oldest first.
    func currencyEvents(after cursor: Int64 = 0) async throws -> [JSONObject] {
        try await f.events(after: cursor).filter { $0.string("type") == "VIRTUAL_CURRENCY_TRANSACTION" }
    }

    // MARK: Checks

    /// An answer without its request id, so answers to different requests compare.
    static func withoutID(_ answer: JSONObject) -> JSONObject {
        var answer = answer
        answer["id"] = nil
        return answer
    }

    /// The history's own arithmetic: each entry's balance is the one before it plus its amount,
    /// the oldest starts from 0 (for a complete history), and the newest is `balance`.
    static func expectConsistent(
        _ entries: [JSONObject], balance: Int64?, complete: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(entries.first?.int("balance") ?? 0 == balance ?? -1, "the newest entry holds the balance", sourceLocation: sourceLocation)
        for (index, entry) in entries.enumerated() {
            let before = index + 1 < entries.count ? entries[index + 1].int("balance") : (complete ? 0 : nil)
            guard let before else { continue }
            #expect(entry.int("balance") == before + (entry.int("amount") ?? 0), "entry \(index): \(entry)", sourceLocation: sourceLocation)
            #expect(entry.int("amount") != 0, "an entry moves something: \(entry)", sourceLocation: sourceLocation)
            let balance = entry.int("balance") ?? -1
            #expect((0...balanceMax).contains(balance), "balances stay within 0…max: \(entry)", sourceLocation: sourceLocation)
        }
        if complete {
            #expect(entries.reduce(0) { $0 + ($1.int("amount") ?? 0) } == balance ?? -1, "the amounts sum to the balance",
                    sourceLocation: sourceLocation)
        }
        #expect(Set(entries.compactMap { $0.string("transaction_id") }).count == entries.count, "transaction ids are unique",
                sourceLocation: sourceLocation)
    }

    /// An entry as `(amount, source, ref)`, the parts a rule decides.
    static func movement(_ entry: JSONObject) -> Movement {
        Movement(entry.int("amount") ?? 0, entry.string("source") ?? "?", entry.string("ref") ?? "?")
    }

    struct Movement: Equatable, CustomStringConvertible {
        let amount: Int64
        let source: String
        let ref: String
        init(_ amount: Int64, _ source: String, _ ref: String) {
            self.amount = amount
            self.source = source
            self.ref = ref
        }

        var description: String { "(\(amount), \(source), \(ref))" }
    }

    /// Every history entry of the profile's balance in `currency` has exactly one
    /// `VIRTUAL_CURRENCY_TRANSACTION` event with the same transaction id, amount, balance, source
    /// and ref, and no such event names a change the history lacks.
    func expectEventsMatchHistory(
        _ profileID: String, currency: String = "COINS", sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let entries = try await history(.id(profileID), currency: currency, limit: 1000)
        let events = try await currencyEvents().filter { $0.string("profile_id") == profileID && $0.string("currency") == currency }
        #expect(events.count == entries.count, "one event per change: \(events.count) events, \(entries.count) entries",
                sourceLocation: sourceLocation)
        for entry in entries {
            let matching = events.filter { $0.string("transaction_id") == entry.string("transaction_id") }
            #expect(matching.count == 1, "one event for \(entry)", sourceLocation: sourceLocation)
            guard let event = matching.first else { continue }
            #expect(event.int("amount") == entry.int("amount"), sourceLocation: sourceLocation)
            #expect(event.int("balance") == entry.int("balance"), sourceLocation: sourceLocation)
            #expect(event.string("source") == entry.string("source"), sourceLocation: sourceLocation)
            #expect(event.string("ref") == entry.string("ref"), sourceLocation: sourceLocation)
            #expect(event.int("at_ms") == entry.int("at_ms"), sourceLocation: sourceLocation)
        }
    }
}

/// Virtual currencies over real connections: backends' credits and debits, histories, events,
/// the grants of paid store terms and their claw-backs, merges, idempotency and restarts
/// (PROTOCOL.md, "Virtual currencies"; DESIGN.md, "Virtual currencies").
@Suite struct Currencies {
    typealias C = CurrencyFixture
    typealias F = StoreFixture
    typealias M = CurrencyFixture.Movement
    static let day = StoreFixture.day

    static func server() async throws -> TestServer { try await TestServer.start { $0.testClock = true } }

    // MARK: Credits, debits and the document

    @Test func creditsAndDebitsAnswerTheBalanceAndTheDocumentShowsIt() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let alice = try await c.f.create("alice")
            #expect(try await c.balances(alice.id) == ["COINS": 0, "GEMS": 0], "every currency of the config, in config order")

            let credit = try await c.transact(.id(alice.id), 250, key: "k1", reason: "welcome bonus")
            #expect(credit.isSuccess, "\(credit)")
            #expect(credit.keys == ["id", "ok", "balance", "transaction_id"])
            #expect(credit.int("balance") == 250)
            let creditID = try #require(credit.string("transaction_id"))
            #expect(creditID.hasPrefix("vct_"))

            let debit = try await c.transact(.id(alice.id), -100, key: "k2")
            #expect(debit.isSuccess, "\(debit)")
            #expect(debit.int("balance") == 150)
            let debitID = try #require(debit.string("transaction_id"))
            #expect(debitID != creditID)

            let gems = try await c.expectTransact(.id(alice.id), 7, key: "k3", currency: "GEMS")
            #expect(gems.balance == 7)
            #expect(try await c.balances(alice.id) == ["COINS": 150, "GEMS": 7])
            // The app reads balances in its document too.
            let fromApp = try await c.f.sdk.call("profile.get", ["profile_id": .string(alice.id)])
            #expect(fromApp["currencies"] == ["COINS": 150, "GEMS": 7])

            // The whole balance can be spent; a balance of 0 is shown as 0.
            let all = try await c.expectTransact(.id(alice.id), -150, key: "k4")
            #expect(all.balance == 0)
            #expect(try await c.balances(alice.id) == ["COINS": 0, "GEMS": 7])

            let entries = try await c.history(.id(alice.id))
            #expect(entries.map(C.movement) == [M(-150, "transaction", "k4"), M(-100, "transaction", "k2"), M(250, "transaction", "k1")])
            #expect(entries.map { $0.string("transaction_id") } == [Optional(all.transactionID), Optional(debitID), Optional(creditID)])
            #expect(entries.map { $0.int("balance") } == [0, 150, 250])
            #expect(entries.allSatisfy { $0.int("at_ms") == c.startMs }, "stamped with the server clock")
            #expect(entries.first?.keys == ["transaction_id", "amount", "balance", "source", "ref", "at_ms"])
            C.expectConsistent(entries, balance: 0)
            let gemEntries = try await c.history(.id(alice.id), currency: "GEMS")
            #expect(gemEntries.map(C.movement) == [M(7, "transaction", "k3")])
            #expect(gemEntries.first?.string("transaction_id") == gems.transactionID)
        }
    }

    @Test func aBalanceReachesTheMaximumExactlyAndAnotherProfileIsSeparate() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let rich = try await c.f.create("rich")
            let poor = try await c.f.create("poor")
            #expect(try await c.expectTransact(.id(rich.id), C.balanceMax, key: "max").balance == C.balanceMax)
            #expect(try await c.balance(rich.id) == C.balanceMax)
            #expect(try await c.expectTransact(.id(poor.id), 3, key: "poor").balance == 3, "balances are per profile")
            #expect(try await c.expectTransact(.id(rich.id), -C.balanceMax, key: "all").balance == 0)
            #expect(try await c.balances(poor.id) == ["COINS": 3, "GEMS": 0])
            #expect(try await c.history(.id(poor.id)).count == 1)
        }
    }

    // MARK: History

    @Test func historyIsNewestFirstAndLimitKeepsTheNewest() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let bob = try await c.f.create("bob")
            var answered: [(balance: Int64, transactionID: String)] = []
            for (index, amount) in [Int64(10), 20, -5, 40, -15].enumerated() {
                answered.append(try await c.expectTransact(.id(bob.id), amount, key: "h\(index)"))
            }
            let all = try await c.history(.id(bob.id))
            #expect(all.map { $0.string("ref") } == ["h4", "h3", "h2", "h1", "h0"])
            #expect(all.map { $0.int("amount") } == [-15, 40, -5, 20, 10])
            #expect(all.map { $0.string("transaction_id") } == answered.reversed().map { Optional($0.transactionID) })
            #expect(all.map { $0.int("balance") } == answered.reversed().map { Optional($0.balance) })
            C.expectConsistent(all, balance: 50)

            let two = try await c.history(.id(bob.id), limit: 2)
            #expect(two == Array(all.prefix(2)), "limit keeps the newest")
            #expect(try await c.history(.id(bob.id), limit: 1) == Array(all.prefix(1)))
            #expect(try await c.history(.id(bob.id), limit: 1000) == all)
            // A currency never touched has an empty history.
            #expect(try await c.history(.id(bob.id), currency: "GEMS").isEmpty)
        }
    }

    @Test func historyDefaultsToTheNewestHundred() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let carl = try await c.f.create("carl")
            // Pipelined: 105 credits of 1 in one write.
            var lines = ""
            for index in 0..<105 {
                lines += JSONWriter.string(.object([
                    "id": .int(index), "op": "currency.transact", "profile_id": .string(carl.id), "currency": "COINS", "amount": 1,
                    "idempotency_key": .string("d\(index)"),
                ])) + "\n"
            }
            try await c.backend.sendRaw(Array(lines.utf8))
            for index in 0..<105 {
                let answer = try await c.backend.readAnswer()
                #expect(answer.isSuccess && answer.int("balance") == Int64(index + 1), "\(answer)")
            }
            let byDefault = try await c.history(.id(carl.id))
            #expect(byDefault.count == 100)
            #expect(byDefault.first?.string("ref") == "d104")
            #expect(byDefault.last?.string("ref") == "d5")
            C.expectConsistent(byDefault, balance: 105, complete: false)
            let all = try await c.history(.id(carl.id), limit: 1000)
            #expect(all.count == 105)
            C.expectConsistent(all, balance: 105)
        }
    }

    @Test func aBackendMayNameTheProfileByCustomerUserID() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let dana = try await c.f.create("dana")
            let credit = try await c.transact(.customer("dana"), 42, key: "cu1")
            #expect(credit.isSuccess, "\(credit)")
            #expect(credit.int("balance") == 42)
            #expect(try await c.expectTransact(.id(dana.id), -2, key: "cu2").balance == 40)
            #expect(try await c.balance(dana.id) == 40)
            let byCustomer = try await c.history(.customer("dana"))
            #expect(byCustomer == (try await c.history(.id(dana.id))))
            #expect(byCustomer.map(C.movement) == [M(-2, "transaction", "cu2"), M(42, "transaction", "cu1")])
            // Customer user ids are trimmed the same way everywhere.
            #expect(try await c.transact(.customer("  dana "), 1, key: "cu3").int("balance") == 41)
        }
    }

    // MARK: Events

    @Test func everyChangeFeedsOneVirtualCurrencyTransactionEvent() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let erin = try await c.f.create("erin")
            let feed = try await c.f.feedCursor()
            let credit = try await c.expectTransact(.id(erin.id), 30, key: "e1", reason: "refill")
            let debit = try await c.expectTransact(.id(erin.id), -12, key: "e2")
            let gems = try await c.expectTransact(.customer("erin"), 3, key: "e3", currency: "GEMS")
            let events = try await c.f.events(after: feed)
            #expect(events.map { $0.string("type") } == Array(repeating: "VIRTUAL_CURRENCY_TRANSACTION", count: 3))
            let first = try #require(events.first)
            #expect(Array(first.keys.prefix(6)) == ["id", "cursor", "type", "profile_id", "customer_user_id", "at_ms"])
            #expect(first.string("profile_id") == erin.id)
            #expect(first.string("customer_user_id") == "erin")
            #expect(first.int("at_ms") == c.startMs)
            #expect(first.string("transaction_id") == credit.transactionID)
            #expect(first.string("currency") == "COINS")
            #expect(first.int("amount") == 30)
            #expect(first.int("balance") == 30)
            #expect(first.string("source") == "transaction")
            #expect(first.string("ref") == "e1")
            #expect(first.string("reason") == "refill")
            #expect(events[1].string("transaction_id") == debit.transactionID)
            #expect(events[1].int("amount") == -12)
            #expect(events[1].int("balance") == 18)
            #expect(events[1]["reason"] == nil, "no reason given, none shown")
            #expect(events[2].string("transaction_id") == gems.transactionID)
            #expect(events[2].string("currency") == "GEMS")
            #expect(Set(events.compactMap { $0.string("id") }).count == 3)
            // The profile's cursor is the change's number.
            #expect(try await c.f.get(erin.id).int("cursor") == events[2].int("cursor"))
            try await c.expectEventsMatchHistory(erin.id)
            try await c.expectEventsMatchHistory(erin.id, currency: "GEMS")
        }
    }

    // MARK: Grants of paid store terms

    @Test func aPaidSubscriptionGrantsOnReportAndOnEachRenewalOnce() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let f = c.f
            let owner = try await f.create("owner")
            let s = c.startMs
            let report = try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + 30 * Self.day))
            #expect(report.isSuccess, "\(report)")
            #expect(report["currencies"] == ["COINS": 100, "GEMS": 0], "the report's own answer shows the grant")
            #expect(try await c.history(.id(owner.id)).map(C.movement) == [M(100, "purchase", "t1")])

            let renewal = F.event("n1", "renewal", "t1", atMs: s + 1, [
                "transaction_id": "t1-2", "expires_ms": .int(s + 60 * Self.day), "price": 9.99,
            ])
            #expect(try await f.notify(renewal)["applied"] == true)
            #expect(try await c.balance(owner.id) == 200)
            let entries = try await c.history(.id(owner.id))
            #expect(entries.map(C.movement) == [M(100, "renewal", "t1-2"), M(100, "purchase", "t1")])
            C.expectConsistent(entries, balance: 200)

            // Rule 2: redelivered, re-reported or restored, a term grants no more.
            #expect(try await f.notify(renewal)["applied"] == false)
            #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + 30 * Self.day)).isSuccess)
            #expect(try await f.restore(owner.id, [F.subscription("t1", purchasedMs: s, expiresMs: s + 30 * Self.day)]).isSuccess)
            let again = F.event("n2", "renewal", "t1", atMs: s + 2, [
                "transaction_id": "t1-2", "expires_ms": .int(s + 60 * Self.day), "price": 9.99,
            ])
            #expect(try await f.notify(again).isSuccess, "the same term under another notification id")
            #expect(try await c.history(.id(owner.id)) == entries)
            try await c.expectEventsMatchHistory(owner.id)
        }
    }

    @Test func grantsFireOnlyOnTheirTrigger() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let f = c.f
            let owner = try await f.create("gemmer")
            let s = c.startMs
            // gem_monthly: COINS on purchase only, GEMS on renewal only.
            #expect(try await f.report(owner.id, F.subscription("g1", product: "gem_monthly", purchasedMs: s, expiresMs: s + Self.day)).isSuccess)
            #expect(try await c.balances(owner.id) == ["COINS": 50, "GEMS": 0])
            #expect(try await f.notify(F.event("n1", "renewal", "g1", atMs: s + 1, [
                "transaction_id": "g1-2", "expires_ms": .int(s + 2 * Self.day), "price": 4.99,
            ]))["applied"] == true)
            #expect(try await c.balances(owner.id) == ["COINS": 50, "GEMS": 5])
            #expect(try await c.history(.id(owner.id), currency: "GEMS").map(C.movement) == [M(5, "renewal", "g1-2")])
            #expect(try await c.history(.id(owner.id)).map(C.movement) == [M(50, "purchase", "g1")])
            // A one-time purchase grants on purchase; one without grants grants nothing.
            #expect(try await f.report(owner.id, F.oneTime("c1", product: "coins_1000", purchasedMs: s)).isSuccess)
            #expect(try await f.report(owner.id, F.oneTime("l1", product: "lifetime", purchasedMs: s)).isSuccess)
            #expect(try await c.balances(owner.id) == ["COINS": 1050, "GEMS": 5])
            #expect(try await c.history(.id(owner.id)).first.map(C.movement) == M(1000, "purchase", "c1"))
            try await c.expectEventsMatchHistory(owner.id)
            try await c.expectEventsMatchHistory(owner.id, currency: "GEMS")
        }
    }

    @Test func trialsFreeTermsAndFamilySharedCopiesGrantNothing() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let f = c.f
            let s = c.startMs
            let trier = try await f.create("trier")
            let feed = try await f.feedCursor()
            // A free trial: price 0.
            #expect(try await f.report(trier.id, [
                "transaction_id": "tr1", "original_transaction_id": "tr1", "product_id": "pro_monthly", "purchased_ms": .int(s),
                "expires_ms": .int(s + 7 * Self.day), "price": 0, "currency": "USD", "period_type": "trial",
            ]).isSuccess)
            // A free renewal term (a comp) grants nothing either.
            #expect(try await f.notify(F.event("n1", "renewal", "tr1", atMs: s + 1, [
                "transaction_id": "tr1-2", "expires_ms": .int(s + 14 * Self.day), "price": 0,
            ]))["applied"] == true)
            #expect(try await c.balances(trier.id) == ["COINS": 0, "GEMS": 0])
            #expect(try await c.history(.id(trier.id)).isEmpty)
            #expect(try await c.currencyEvents(after: feed).isEmpty)
            // The first paid charge after the trial is the purchase.
            #expect(try await f.notify(F.event("n2", "renewal", "tr1", atMs: s + 2, [
                "transaction_id": "tr1-3", "expires_ms": .int(s + 44 * Self.day), "price": 9.99,
            ]))["applied"] == true)
            #expect(try await c.history(.id(trier.id)).map(C.movement) == [M(100, "purchase", "tr1-3")])

            // Family-shared copies: a subscription, its renewal, and a one-time purchase.
            let family = try await f.create("family")
            let familyFeed = try await f.feedCursor()
            var shared = try #require(F.subscription("fs1", purchasedMs: s, expiresMs: s + 30 * Self.day).objectValue)
            shared.append("family_shared", true)
            let report = try await f.report(family.id, .object(shared))
            #expect(report.isSuccess, "\(report)")
            #expect(F.subscription(report, "fs1") != nil, "the copy itself is recorded")
            #expect(try await f.notify(F.event("n3", "renewal", "fs1", atMs: s + 3, [
                "transaction_id": "fs1-2", "expires_ms": .int(s + 60 * Self.day), "price": 9.99,
            ]))["applied"] == true)
            var sharedCoins = try #require(F.oneTime("fc1", product: "coins_1000", purchasedMs: s).objectValue)
            sharedCoins.append("family_shared", true)
            #expect(try await f.report(family.id, .object(sharedCoins)).isSuccess)
            #expect(try await c.balances(family.id) == ["COINS": 0, "GEMS": 0])
            #expect(try await c.history(.id(family.id)).isEmpty)
            #expect(try await c.currencyEvents(after: familyFeed).isEmpty)
        }
    }

    // MARK: Refunds, reversals, revokes

    @Test func aPartialRefundTakesItsShareAndTheReversalGivesItBack() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let f = c.f
            let s = c.startMs
            let buyer = try await f.create("buyer")
            #expect(try await f.report(buyer.id, F.oneTime("c1", product: "coins_1000", purchasedMs: s)).isSuccess)
            #expect(try await c.balance(buyer.id) == 1000)
            #expect(try await f.notify(F.event("n1", "refund", "c1", atMs: s + 1, ["transaction_id": "c1", "fraction": 0.5]))["applied"] == true)
            #expect(try await c.balance(buyer.id) == 500)
            #expect(try await c.history(.id(buyer.id)).first.map(C.movement) == M(-500, "refund", "c1"))
            #expect(try await f.notify(F.event("n2", "refund_reversed", "c1", atMs: s + 2, ["transaction_id": "c1"]))["applied"] == true)
            #expect(try await c.balance(buyer.id) == 1000)
            let entries = try await c.history(.id(buyer.id))
            #expect(entries.map(C.movement) == [M(500, "refund_reversed", "c1"), M(-500, "refund", "c1"), M(1000, "purchase", "c1")])
            C.expectConsistent(entries, balance: 1000)

            // A subscription term refunded by a quarter: floor(100 × 0.25) = 25.
            #expect(try await f.report(buyer.id, F.subscription("t1", purchasedMs: s, expiresMs: s + 30 * Self.day)).isSuccess)
            #expect(try await f.notify(F.event("n3", "refund", "t1", atMs: s + 3, ["transaction_id": "t1", "fraction": 0.25]))["applied"] == true)
            #expect(try await c.balance(buyer.id) == 1075)
            #expect(try await c.history(.id(buyer.id), limit: 1).map(C.movement) == [M(-25, "refund", "t1")])
            // Rounded down: floor(100 × 0.333) = 33 owed; 25 taken already, 8 more.
            #expect(try await f.notify(F.event("n4", "refund", "t1", atMs: s + 4, ["transaction_id": "t1", "fraction": 0.333]))["applied"] == true)
            #expect(try await c.balance(buyer.id) == 1067)
            try await c.expectEventsMatchHistory(buyer.id)
            C.expectConsistent(try await c.history(.id(buyer.id)), balance: 1067)
        }
    }

    @Test func aRefundAfterSpendingStopsAtZeroAndTheReversalGivesBackOnlyWhatWasTaken() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let f = c.f
            let s = c.startMs
            let spender = try await f.create("spender")
            #expect(try await f.report(spender.id, F.oneTime("c1", product: "coins_1000", purchasedMs: s)).isSuccess)
            #expect(try await c.expectTransact(.id(spender.id), -800, key: "spend").balance == 200)
            #expect(try await f.notify(F.event("n1", "refund", "c1", atMs: s + 1, ["transaction_id": "c1"]))["applied"] == true)
            #expect(try await c.balance(spender.id) == 0, "balances never go below 0")
            #expect(try await c.history(.id(spender.id), limit: 1).map(C.movement) == [M(-200, "refund", "c1")])
            // Credits in between are the customer's own.
            #expect(try await c.expectTransact(.id(spender.id), 50, key: "topup").balance == 50)
            #expect(try await f.notify(F.event("n2", "refund_reversed", "c1", atMs: s + 2, ["transaction_id": "c1"]))["applied"] == true)
            #expect(try await c.balance(spender.id) == 250, "the reversal gives back the 200 taken, not the 1,000 granted")
            let entries = try await c.history(.id(spender.id))
            #expect(entries.map(C.movement) == [
                M(200, "refund_reversed", "c1"), M(50, "transaction", "topup"), M(-200, "refund", "c1"),
                M(-800, "transaction", "spend"), M(1000, "purchase", "c1"),
            ])
            C.expectConsistent(entries, balance: 250)
            try await c.expectEventsMatchHistory(spender.id)
        }
    }

    @Test func aRevokeTakesBackEveryTermOfTheSubscription() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let f = c.f
            let s = c.startMs
            let owner = try await f.create("revoked")
            #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + 30 * Self.day)).isSuccess)
            #expect(try await f.notify(F.event("n1", "renewal", "t1", atMs: s + 1, [
                "transaction_id": "t1-2", "expires_ms": .int(s + 60 * Self.day), "price": 9.99,
            ]))["applied"] == true)
            #expect(try await c.expectTransact(.id(owner.id), 7, key: "own").balance == 207)
            #expect(try await f.notify(F.event("n2", "revoke", "t1", atMs: s + 2))["applied"] == true)
            #expect(try await c.balance(owner.id) == 7, "both terms' grants are gone; the backend's credit stays")
            let entries = try await c.history(.id(owner.id))
            let revokes = entries.prefix(2).map(C.movement)
            #expect(Set(revokes.map(\.ref)) == ["t1", "t1-2"])
            #expect(revokes.allSatisfy { $0.amount == -100 && $0.source == "revoke" })
            C.expectConsistent(entries, balance: 7)
            try await c.expectEventsMatchHistory(owner.id)
        }
    }

    // MARK: Owners

    @Test func aTransferredPurchaseGrantsNoMoreAndItsRefundComesFromTheProfileTheGrantWentTo() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let f = c.f
            let s = c.startMs
            let first = try await f.create("first")
            let second = try await f.create("second")
            #expect(try await f.report(first.id, F.subscription("t1", purchasedMs: s, expiresMs: s + 30 * Self.day)).isSuccess)
            let restore = try await f.restore(second.id, [F.subscription("t1", purchasedMs: s, expiresMs: s + 30 * Self.day)])
            #expect(restore["transferred_from"] == [.string(first.id)], "\(restore)")
            #expect(try await c.balance(first.id) == 100)
            #expect(try await c.balance(second.id) == 0, "a restore never grants twice")
            #expect(try await f.notify(F.event("n1", "refund", "t1", atMs: s + 1, ["transaction_id": "t1"]))["applied"] == true)
            #expect(try await c.balance(first.id) == 0, "the claw-back comes from the profile the grant went to")
            #expect(try await c.balance(second.id) == 0)
            #expect(try await c.history(.id(first.id)).map(C.movement) == [M(-100, "refund", "t1"), M(100, "purchase", "t1")])
            // A new term grants to the owner of the day.
            #expect(try await f.notify(F.event("n2", "renewal", "t1", atMs: s + 2, [
                "transaction_id": "t1-2", "expires_ms": .int(s + 60 * Self.day), "price": 9.99,
            ]))["applied"] == true)
            #expect(try await c.history(.id(second.id)).map(C.movement) == [M(100, "renewal", "t1-2")])
            #expect(try await c.balance(first.id) == 0)
        }
    }

    static let unclaimedToken = "0b6f3c2e-8a41-4d5e-9c7b-2f1e0d3c4b5a"

    /// A consumable bought under a token no profile holds yet, refunded by half while unowned.
    static func unownedGrant(_ c: CurrencyFixture) async throws {
        let s = c.startMs
        let purchase = try await c.f.notify(F.event("n1", "purchase", "u1", atMs: s, [
            "transaction_id": "u1", "product_id": "coins_1000", "purchased_ms": .int(s),
            "app_account_token": .string(Self.unclaimedToken), "price": 4.99,
        ]))
        #expect(purchase["profile_id"] == .null, "\(purchase)")
        #expect(try await c.f.notify(F.event("n2", "refund", "u1", atMs: s + 1, ["transaction_id": "u1", "fraction": 0.5]))["applied"] == true)
        #expect(try await c.currencyEvents().isEmpty, "nobody's balance moved yet")
    }

    @Test func aGrantHeldForAnUnownedPurchaseIsCreditedToItsClaimerLessWhatRefundsOwe() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            try await Self.unownedGrant(c)
            let claimer = try await c.f.create("claimer", token: Self.unclaimedToken)
            #expect(try await c.balance(claimer.id) == 500)
            #expect(try await c.f.notify(F.event("n3", "refund_reversed", "u1", atMs: c.startMs + 2, ["transaction_id": "u1"]))["applied"] == true)
            #expect(try await c.balance(claimer.id) == 1000, "the reversal gives back what the refund owed")
            let entries = try await c.history(.id(claimer.id))
            #expect(entries.map { $0.int("amount") } == [500, 500])
            #expect(entries.map { $0.string("source") } == ["refund_reversed", "purchase"])
            C.expectConsistent(entries, balance: 1000)
            try await c.expectEventsMatchHistory(claimer.id)
        }
    }

    @Test
    func aClaimedGrantNamesItsStoreTransactionAsRef() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            try await Self.unownedGrant(c)
            let claimer = try await c.f.create("claimer", token: Self.unclaimedToken)
            #expect(try await c.f.notify(F.event("n3", "refund_reversed", "u1", atMs: c.startMs + 2, ["transaction_id": "u1"]))["applied"] == true)
            // Every other grant and claw-back names the store transaction id (see the tests above).
            #expect(try await c.history(.id(claimer.id)).map(C.movement) == [M(500, "refund_reversed", "u1"), M(500, "purchase", "u1")])
        }
    }

    // MARK: Merges

    @Test func aMergeAddsBalancesAndLaterClawBacksComeFromTheMergedProfile() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let f = c.f
            let s = c.startMs
            let known = try await f.create("frank")
            #expect(try await c.expectTransact(.id(known.id), 200, key: "frank-1").balance == 200)
            let anonymous = try await f.create()
            #expect(try await c.expectTransact(.id(anonymous.id), 300, key: "anon-1").balance == 300)
            #expect(try await c.expectTransact(.id(anonymous.id), 7, key: "anon-2", currency: "GEMS").balance == 7)
            #expect(try await f.report(anonymous.id, F.oneTime("c1", product: "coins_1000", purchasedMs: s)).isSuccess)
            #expect(try await c.balances(anonymous.id) == ["COINS": 1300, "GEMS": 7])
            let feed = try await f.feedCursor()

            let identify = try await f.sdk.call("profile.identify", ["profile_id": .string(anonymous.id), "customer_user_id": "frank"])
            #expect(identify.isSuccess, "\(identify)")
            #expect(identify["merged_from"] == [.string(anonymous.id)])
            #expect(F.id(identify) == known.id)
            #expect(identify["currencies"] == ["COINS": 1500, "GEMS": 7], "the identify answer shows the sum")
            #expect(try await c.balances(known.id) == ["COINS": 1500, "GEMS": 7])
            // The merged id is an alias: it reads the profile it merged into.
            #expect(try await c.balances(anonymous.id) == ["COINS": 1500, "GEMS": 7])
            let coins = try await c.history(.id(known.id))
            #expect(coins.map(C.movement) == [M(1300, "merge", anonymous.id), M(200, "transaction", "frank-1")])
            C.expectConsistent(coins, balance: 1500)
            #expect(try await c.history(.id(known.id), currency: "GEMS").map(C.movement) == [M(7, "merge", anonymous.id)])
            #expect(try await c.history(.id(anonymous.id)) == coins, "history through the alias")
            let events = try await c.currencyEvents(after: feed)
            #expect(events.count == 2)
            #expect(events.allSatisfy { $0.string("profile_id") == known.id && $0.string("source") == "merge" })
            #expect(events.allSatisfy { $0.string("customer_user_id") == "frank" })
            try await c.expectEventsMatchHistory(known.id)
            try await c.expectEventsMatchHistory(known.id, currency: "GEMS")

            // The grant went to the anonymous profile; its refund comes from the one it merged into.
            #expect(try await f.notify(F.event("n1", "refund", "c1", atMs: s + 1, ["transaction_id": "c1"]))["applied"] == true)
            #expect(try await c.balances(known.id) == ["COINS": 500, "GEMS": 7])
            #expect(try await c.history(.id(known.id), limit: 1).map(C.movement) == [M(-1000, "refund", "c1")])
            // Transactions through the alias land on the merged profile.
            #expect(try await c.expectTransact(.id(anonymous.id), -500, key: "via-alias").balance == 0)
            #expect(try await c.balance(known.id) == 0)
        }
    }

    @Test func aRetryThroughTheAliasAfterAMergeAnswersTheFirstResult() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let known = try await c.f.create("gina")
            let anonymous = try await c.f.create()
            let first = try await c.transact(.id(anonymous.id), 300, key: "anon-1")
            #expect(first.isSuccess)
            #expect(try await c.f.sdk.call("profile.identify", ["profile_id": .string(anonymous.id), "customer_user_id": "gina"])
                .isSuccess)
            let entries = try await c.history(.id(known.id))
            // The very same request, retried (its answer was lost, say): the first answer again.
            let retry = try await c.transact(.id(anonymous.id), 300, key: "anon-1")
            #expect(retry.isSuccess, "\(retry)")
            #expect(C.withoutID(retry) == C.withoutID(first))
            #expect(try await c.history(.id(known.id)) == entries)
        }
    }

    // MARK: Idempotency

    @Test func theSameKeyAndBodyAnswerTheFirstResultAndChangeNothing() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let hana = try await c.f.create("hana")
            let first = try await c.transact(.id(hana.id), 120, key: "once", reason: "quest reward")
            #expect(first.isSuccess, "\(first)")
            let document = try await c.f.get(hana.id)
            let entries = try await c.history(.id(hana.id))
            let events = try await c.f.events()

            for _ in 0..<3 {
                let again = try await c.transact(.id(hana.id), 120, key: "once", reason: "quest reward")
                #expect(C.withoutID(again) == C.withoutID(first))
            }
            // Named by customer user id, it is the same request.
            #expect(C.withoutID(try await c.transact(.customer("hana"), 120, key: "once", reason: "quest reward")) == C.withoutID(first))
            #expect(try await c.f.get(hana.id) == document)
            #expect(try await c.history(.id(hana.id)) == entries)
            #expect(try await c.f.events() == events)

            // After other changes, the replay still answers the first balance.
            #expect(try await c.expectTransact(.id(hana.id), -20, key: "later").balance == 100)
            let late = try await c.transact(.id(hana.id), 120, key: "once", reason: "quest reward")
            #expect(C.withoutID(late) == C.withoutID(first))
            #expect(try await c.history(.id(hana.id)).count == 2)
            #expect(try await c.balance(hana.id) == 100)

            // A debit replays the same way, even once the balance could no longer pay it.
            let debit = try await c.transact(.id(hana.id), -100, key: "spend-all")
            #expect(debit.int("balance") == 0)
            #expect(C.withoutID(try await c.transact(.id(hana.id), -100, key: "spend-all")) == C.withoutID(debit))
            #expect(try await c.history(.id(hana.id)).count == 3)
        }
    }

    @Test func concurrentRetriesOfOneKeyLandOnce() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let c = try await C.make(server)
            let ivan = try await c.f.create("ivan")
            #expect(try await c.expectTransact(.id(ivan.id), 1000, key: "seed").balance == 1000)
            for (round, amount) in [Int64(250), -300].enumerated() {
                var clients: [TestClient] = []
                for _ in 0..<8 {
                    let client = try server.connect()
                    try await client.hello(c.f.keys.secretKey)
                    clients.append(client)
                }
                let line = JSONWriter.string(.object([
                    "id": "retry", "op": "currency.transact", "profile_id": .string(ivan.id), "currency": "COINS",
                    "amount": .int(amount), "idempotency_key": .string("retry-\(round)"), "reason": "retried",
                ]))
                // All eight send before any reads, so the requests are in the server together.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for client in clients { group.addTask { try await client.send(line) } }
                    try await group.waitForAll()
                }
                let answers = try await withThrowingTaskGroup(of: JSONObject.self) { group in
                    for client in clients { group.addTask { try await client.readAnswer() } }
                    var answers: [JSONObject] = []
                    for try await answer in group { answers.append(answer) }
                    return answers
                }
                #expect(answers.count == 8)
                #expect(answers.allSatisfy { $0.isSuccess }, "\(answers)")
                #expect(Set(answers.map { JSONWriter.string(.object($0)) }).count == 1, "all answers equal: \(answers)")
                let expected: Int64 = round == 0 ? 1250 : 950
                #expect(answers.first?.int("balance") == expected)
                let entries = try await c.history(.id(ivan.id))
                #expect(entries.filter { $0.string("ref") == "retry-\(round)" }.count == 1, "exactly one history entry")
                #expect(entries.count == round + 2)
                #expect(entries.first?.string("transaction_id") == answers.first?.string("transaction_id"))
                #expect(try await c.balance(ivan.id) == expected)
                for client in clients { await client.close() }
            }
            try await c.expectEventsMatchHistory(ivan.id)
        }
    }

    // MARK: Restarts

    @Test(arguments: [false, true])
    func balancesHistoriesAndKeysSurviveARestart(checkpoint: Bool) async throws {
        let first = try await Self.server()
        let c = try await C.make(first)
        let f = c.f
        let s = c.startMs
        let owner = try await f.create("owner")
        let anonymous = try await f.create()
        let credit = try await c.transact(.id(owner.id), 500, key: "r1", reason: "start")
        #expect(credit.isSuccess)
        #expect(try await c.expectTransact(.id(owner.id), -120, key: "r2").balance == 380)
        #expect(try await c.expectTransact(.id(owner.id), 9, key: "r3", currency: "GEMS").balance == 9)
        #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + 30 * Self.day)).isSuccess)
        let renewal = F.event("n1", "renewal", "t1", atMs: s + 1, ["transaction_id": "t1-2", "expires_ms": .int(s + 60 * Self.day), "price": 9.99])
        #expect(try await f.notify(renewal)["applied"] == true)
        #expect(try await f.report(owner.id, F.oneTime("c1", product: "coins_1000", purchasedMs: s)).isSuccess)
        #expect(try await f.notify(F.event("n2", "refund", "c1", atMs: s + 2, ["transaction_id": "c1", "fraction": 0.5]))["applied"] == true)
        #expect(try await c.expectTransact(.id(anonymous.id), 33, key: "r4").balance == 33)
        #expect(try await f.backend.call("profile.identify", ["profile_id": .string(anonymous.id), "customer_user_id": "owner"]).isSuccess)
        if checkpoint {
            #expect(try await f.admin.call("server.checkpoint").isSuccess)
        }
        let document = try await f.get(owner.id)
        #expect(document["currencies"] == ["COINS": 1113, "GEMS": 9])
        let coins = try await c.history(.id(owner.id))
        let gems = try await c.history(.id(owner.id), currency: "GEMS")
        let events = try await c.currencyEvents()
        C.expectConsistent(coins, balance: 1113)

        let second = try await first.restart { $0.testClock = true }
        let d = try await c.reconnected(to: second)
        #expect(try await d.f.get(owner.id)["currencies"] == document["currencies"])
        #expect(try await d.history(.id(owner.id)) == coins)
        #expect(try await d.history(.id(owner.id), currency: "GEMS") == gems)
        #expect(try await d.history(.customer("owner")) == coins)
        #expect(try await d.currencyEvents() == events)
        // Keys are remembered: a replay answers the first result and changes nothing.
        #expect(C.withoutID(try await d.transact(.id(owner.id), 500, key: "r1", reason: "start")) == C.withoutID(credit))
        #expect(try await d.transact(.id(owner.id), 501, key: "r1", reason: "start").errorCode == .conflict)
        // Grants are remembered: a redelivered or re-sent term grants no more; the reversal
        // gives back exactly what the refund took before the restart.
        #expect(try await d.f.notify(renewal)["applied"] == false)
        #expect(try await d.f.notify(F.event("n9", "renewal", "t1", atMs: s + 3, [
            "transaction_id": "t1-2", "expires_ms": .int(s + 60 * Self.day), "price": 9.99,
        ])).isSuccess)
        #expect(try await d.history(.id(owner.id)) == coins)
        #expect(try await d.f.notify(F.event("n3", "refund_reversed", "c1", atMs: s + 4, ["transaction_id": "c1"]))["applied"] == true)
        #expect(try await d.balance(owner.id) == 1613)
        // New transactions carry on with fresh ids.
        let next = try await d.expectTransact(.id(owner.id), -13, key: "r5")
        #expect(next.balance == 1600)
        let after = try await d.history(.id(owner.id))
        #expect(!coins.contains { $0.string("transaction_id") == next.transactionID }, "a transaction id is never reused")
        C.expectConsistent(after, balance: 1600)
        try await d.expectEventsMatchHistory(owner.id)

        // And once more, with the changes made after the restart.
        let changed = try await d.f.get(owner.id)
        let third = try await second.restart { $0.testClock = true }
        let e = try await d.reconnected(to: third)
        #expect(try await e.f.get(owner.id)["currencies"] == changed["currencies"])
        #expect(try await e.history(.id(owner.id)) == after)
        #expect(C.withoutID(try await e.transact(.id(owner.id), -13, key: "r5")).int("balance") == 1600)
        #expect(try await e.history(.id(owner.id)) == after)
        await third.stop()
    }
}
