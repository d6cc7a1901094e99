import GatehouseBase
@testable import GatehouseCore
import Testing

// A seeded property test of the currency rules: random sequences of purchases, renewals,
// resubscribes, refunds (random fractions), reversals, revokes, transfers, merges, deletes,
// claims, redeliveries and transactions (with overdrafts, replays and conflicting keys). After
// every step the ledger's invariants hold (CurrencyFixtures.swift, `currencyProblems`),
// `currency.transact` answers as PROTOCOL.md says, and replaying every batch from the start gives
// the same state.

private typealias C = PurchaseCatalogue
private typealias V = CurrencyCatalogue

/// SplitMix64: small, fast and the same everywhere.
private struct Draws {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(n, 1))) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    mutating func pick<T>(_ items: [T]) -> T? { items.isEmpty ? nil : items[below(items.count)] }
}

@Suite("Random histories keep every balance sound")
struct CurrencyProperty {
    private struct Purchase {
        let original: String
        let oneTime: Bool
        let product: String
        var terms: [String]
        let token: AppAccountToken?
        let familyShared: Bool
    }

    private struct Run {
        var world = PurchaseWorld.withCurrencies(login: .alias)
        var draws: Draws
        var purchases: [Purchase] = []
        var notifications: [StoreNotification] = []
        /// Tokens purchases were notified under that no profile held at the time.
        var looseTokens: [AppAccountToken] = []
        var clock: Int64 = 10_000
        var counter = 0
        var problems: [String] = []
        var replayed: ProjectState
        var replayedBatches = 0
        /// Whether transactions credit up to the maximum (where claims may be cut, see
        /// `currencyProblems(exactTermSums:)`).
        let nearMax: Bool
        static let steps = 250
        var steps: Int { Self.steps }

        init(seed: UInt64, nearMax: Bool) {
            self.nearMax = nearMax
            draws = Draws(state: seed)
            replayed = world.start
        }

        mutating func fresh(_ prefix: String) -> String {
            counter += 1
            return "\(prefix)\(counter)"
        }

        mutating func tick() -> Int64 {
            clock += 1_000 + Int64(draws.below(5_000))
            return clock
        }

        var liveProfiles: [ProfileID] {
            world.state.profiles.all.map(\.id)
        }

        var anonymousProfiles: [ProfileID] {
            world.state.profiles.all.filter(\.isAnonymous).map(\.id)
        }

        var customerUserIDs: [String] { world.state.profiles.all.compactMap(\.customerUserID).sorted() }

        mutating func notify(_ notification: StoreNotification, step: String) {
            notifications.append(notification)
            do { try world.notify(notification) } catch { problems.append("\(step): \(error)") }
        }

        // MARK: Steps

        mutating func step(_ index: Int) {
            let before = world.state
            let roll = draws.below(100)
            var label = ""
            switch roll {
            case 0..<8: label = "profile"; newProfile()
            case 8..<20: label = "purchase"; newPurchase()
            case 20..<32: label = "renewal"; renew()
            case 32..<36: label = "resubscribe"; resubscribe()
            case 36..<46: label = "refund"; refund()
            case 46..<52: label = "reversal"; reverse()
            case 52..<55: label = "revoke"; revoke()
            case 55..<62: label = "transfer"; transfer()
            case 62..<67: label = "merge"; merge()
            case 67..<69: label = "delete"; delete()
            case 69..<73: label = "redeliver"; redeliver()
            default: label = "transact"; transact(before)
            }
            // The feed and term checks read every event: every 10th step, and at the end.
            let full = index % 10 == 9 || index == steps - 1
            for problem in world.currencyProblems(exactTermSums: !nearMax, historiesOnly: !full) { problems.append("step \(index) \(label): \(problem)") }
            // Replaying every batch from the start gives the same state (incrementally: the same
            // applies in the same order as a replay from scratch).
            for batch in world.batches.dropFirst(replayedBatches) { replayed.apply(batch) }
            replayedBatches = world.batches.count
            if replayed != world.state { problems.append("step \(index) \(label): the replay differs") }
        }

        mutating func newProfile() {
            let token = draws.chance(40) && !looseTokens.isEmpty ? looseTokens.removeFirst() : nil
            let customerUserID = draws.chance(40) ? fresh("user") : nil
            do { _ = try world.create(customerUserID, token: token) } catch { problems.append("create: \(error)") }
        }

        mutating func newPurchase() {
            let oneTime = draws.chance(25)
            let product = oneTime ? "coin_pack" : draws.pick(["big_monthly", "big_monthly", "mixed_monthly", "pro_monthly"])!
            let id = fresh(oneTime ? "c" : "s")
            let familyShared = draws.chance(5)
            let price: Double = draws.chance(10) ? 0 : 9.99
            let purchasedMs = tick()
            // Who it goes to: a reporter, a token's holder, or nobody (a loose token, or none).
            let route = draws.below(4)
            var token: AppAccountToken?
            if route == 1, let holder = draws.pick(liveProfiles) { token = world.token(of: holder) }
            if route == 2 {
                token = fixedToken(UInt64(10_000 + counter))
                looseTokens.append(token!)
            }
            let transaction = oneTime
                ? V.oneTime(id, token: token, price: price, familyShared: familyShared)
                : V.subscription(id, product: product, purchasedMs: purchasedMs, expiresMs: purchasedMs + 30_000, token: token,
                                 price: price, periodType: price == 0 && draws.chance(50) ? .trial : .normal,
                                 familyShared: familyShared)
            purchases.append(Purchase(original: id, oneTime: oneTime, product: product, terms: [id], token: token,
                                      familyShared: familyShared))
            if route == 0, let reporter = draws.pick(liveProfiles) {
                do { try world.report(reporter, transaction) } catch { problems.append("report: \(error)") }
            } else {
                notify(C.purchaseNotification(fresh("n"), transaction), step: "purchase")
            }
        }

        mutating func renew() {
            guard let index = draws.pick(purchases.indices.filter { !purchases[$0].oneTime }) else { return }
            let original = purchases[index].original
            let id = "\(original).\(purchases[index].terms.count + 1)"
            purchases[index].terms.append(id)
            let at = tick()
            notify(V.renewal(fresh("n"), original, id: id, purchasedMs: at, expiresMs: at + 30_000, price: draws.chance(10) ? 0 : 9.99),
                   step: "renewal")
        }

        mutating func resubscribe() {
            guard let index = draws.pick(purchases.indices.filter { !purchases[$0].oneTime }) else { return }
            let purchase = purchases[index]
            let id = "\(purchase.original).r\(purchase.terms.count + 1)"
            purchases[index].terms.append(id)
            let at = tick()
            notify(C.notification(fresh("n"), purchase.original, atMs: at - 1, .expire), step: "lapse")
            notify(C.purchaseNotification(fresh("n"), V.subscription(
                purchase.original, id: id, product: purchase.product, purchasedMs: at, expiresMs: at + 30_000, token: purchase.token,
                familyShared: purchase.familyShared)), step: "resubscribe")
        }

        mutating func refund() {
            guard let purchase = draws.pick(purchases), let term = draws.pick(purchase.terms) else { return }
            let fraction: Double = draws.pick([0.1, 0.25, 0.5, 0.77, 1, 1, Double(draws.below(1_000)) / 1_000])!
            notify(V.refund(fresh("n"), purchase.original, term: term, fraction: fraction, atMs: tick()), step: "refund")
        }

        mutating func reverse() {
            guard let purchase = draws.pick(purchases), let term = draws.pick(purchase.terms) else { return }
            notify(V.reversal(fresh("n"), purchase.original, term: term, atMs: tick()), step: "reversal")
        }

        mutating func revoke() {
            guard let purchase = draws.pick(purchases) else { return }
            notify(V.revoke(fresh("n"), purchase.original, atMs: tick()), step: "revoke")
        }

        /// A restore by another profile: the purchase moves to it (`transfer`).
        mutating func transfer() {
            guard let purchase = draws.pick(purchases), let reporter = draws.pick(liveProfiles) else { return }
            let transaction = purchase.oneTime
                ? V.oneTime(purchase.original, token: purchase.token, familyShared: purchase.familyShared)
                : V.subscription(purchase.original, product: purchase.product, token: purchase.token,
                                 familyShared: purchase.familyShared)
            do {
                if draws.chance(50) { try world.restore(reporter, [transaction]) } else { try world.report(reporter, transaction) }
            } catch { problems.append("transfer: \(error)") }
            if world.owner(purchase.original) != reporter, purchase.token.flatMap({ world.state.profiles.profile(token: $0) }) == nil {
                problems.append("transfer: \(purchase.original) stayed with \(String(describing: world.owner(purchase.original)))")
            }
        }

        /// An anonymous profile identified with another's customer user id merges into it.
        mutating func merge() {
            guard let anonymous = draws.pick(anonymousProfiles), let customerUserID = draws.pick(customerUserIDs) else { return }
            guard let target = world.state.profiles.profile(customerUserID: customerUserID)?.id else { return }
            let expected = CurrencyCatalogue.all.map {
                min(world.balance(anonymous, $0) + world.balance(target, $0), CurrencyLedger.balanceMax)
            }
            do { try world.identify(anonymous, customerUserID) } catch { problems.append("merge: \(error)") }
            let after = CurrencyCatalogue.all.map { world.balance(target, $0) }
            if after != expected { problems.append("merge: balances \(after), expected the sums \(expected)") }
        }

        mutating func delete() {
            guard let profile = draws.pick(liveProfiles) else { return }
            do { try world.delete(profile) } catch { problems.append("delete: \(error)") }
            if world.state.currencies.histories[profile] != nil { problems.append("delete: \(profile) kept its balances") }
        }

        mutating func redeliver() {
            guard let notification = draws.pick(notifications) else { return }
            let again = draws.chance(50) ? notification
                : StoreNotification(store: notification.store, notificationID: fresh("n"),
                                    originalTransactionID: notification.originalTransactionID, atMs: notification.atMs,
                                    event: notification.event)
            let before = world.state.currencies
            // A redelivered purchase or renewal grants nothing: only refund-type events may move a balance.
            do { try world.notify(again) } catch { problems.append("redeliver: \(error)") }
            switch again.event {
            case .purchase, .change(.renewal), .change(.recover):
                if world.state.currencies.histories != before.histories { problems.append("redelivery of \(again) moved a balance") }
            default: break
            }
        }

        mutating func transact(_ before: ProjectState) {
            guard let profile = draws.pick(liveProfiles), let currency = draws.pick(CurrencyCatalogue.all) else { return }
            let room = CurrencyLedger.balanceMax - world.balance(profile, currency)
            let amount: Int64 = switch draws.below(10) {
            // Fills to just under the maximum (or past it: `bad_request`), so grants meet it.
            case 0...1 where nearMax: max(1, room - Int64(draws.below(1_500)) + Int64(draws.below(20) == 0 ? 10 : 0))
            case 1...4: Int64(1 + draws.below(1_000))
            default: -Int64(1 + draws.below(1_500))
            }
            let key = "k\(draws.below(40))"
            let reason: String? = draws.chance(30) ? "r\(draws.below(2))" : nil
            let balance = world.balance(profile, currency)
            let earlier = world.state.currencies.idempotency[key]
            do {
                let decision = try world.transact(profile, currency, amount, key: key, reason: reason)
                if let earlier {
                    if earlier != IdempotencyRecord(profile: profile, currency: currency, amount: amount, reason: reason,
                                                    transactionID: earlier.transactionID, balance: earlier.balance, atMs: earlier.atMs)
                    {
                        problems.append("transact: \(key) answered for another body")
                    }
                    if !decision.replayed || !decision.batch.changes.isEmpty || decision.transactionID != earlier.transactionID
                        || decision.balance != earlier.balance || world.state != before
                    {
                        problems.append("transact: \(key) did not replay")
                    }
                } else {
                    if decision.balance != balance + amount || world.balance(profile, currency) != balance + amount {
                        problems.append("transact: \(balance) + \(amount) gave \(decision.balance)")
                    }
                    if world.history(profile, currency).last?.transactionID != decision.transactionID {
                        problems.append("transact: the answer's id is not the history's")
                    }
                }
            } catch {
                if world.state != before { problems.append("transact: \(error.code) changed the state") }
                switch error.code {
                case .conflict where earlier != nil: break
                case .insufficientFunds where earlier == nil && balance + amount < 0:
                    if error.details != [.balance(balance)] { problems.append("transact: details \(error.details), balance \(balance)") }
                case .badRequest where earlier == nil && balance + amount > CurrencyLedger.balanceMax: break
                default: problems.append("transact: \(error) (balance \(balance), amount \(amount), key known \(earlier != nil))")
                }
            }
        }
    }

    @Test(arguments: [1, 2, 3, 5, 8, 13, 21, 34] as [UInt64])
    func randomHistoriesKeepTheLedgerSound(_ seed: UInt64) {
        Self.run(seed: seed, nearMax: false)
    }

    /// The same with credits that fill balances to the maximum, so grants, claims, merges and
    /// reversals meet it.
    @Test(arguments: [4, 6, 7, 9, 10, 11] as [UInt64])
    func randomHistoriesAtTheMaximumKeepTheLedgerSound(_ seed: UInt64) {
        Self.run(seed: seed, nearMax: true)
    }

    private static func run(seed: UInt64, nearMax: Bool) {
        var run = Run(seed: seed, nearMax: nearMax)
        for _ in 0..<4 { run.newProfile() }
        for index in 0..<Run.steps {
            run.step(index)
            if !run.problems.isEmpty { break }
        }
        #expect(run.problems == [], "seed \(seed)")
        // The run did reach the rules it is about.
        let sources = Set(run.world.currencyEvents.compactMap { event -> String? in
            if case .string(let source)? = event.detail("source") { return source }
            return nil
        })
        #expect(sources.isSuperset(of: ["purchase", "renewal", "refund", "transaction"]), "seed \(seed): \(sources)")
        let atMax = run.world.currencyEvents.contains { $0.detail("balance") == .int(CurrencyLedger.balanceMax) }
        #expect(!nearMax || atMax, "seed \(seed) never reached the maximum")
        #expect(run.replayed == run.world.replayed)
    }
}
