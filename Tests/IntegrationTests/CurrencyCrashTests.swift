import Foundation
import GatehousePosix
import GatehouseTesting
import GatehouseWire
import Testing

/// The real binary, killed with SIGKILL at a seeded random moment under concurrent
/// `currency.transact` load, loses no acknowledged credit or debit and half-applies nothing:
/// after each restart every balance is the sum of its acknowledged transactions plus exactly
/// those unanswered ones that landed, and its history adds up to it (DESIGN.md, "Reliability and
/// security", "Virtual currencies"; PROTOCOL.md, "Durability of answers"). Five rounds here;
/// `GATEHOUSE_SOAK=1` runs forty.
@Suite struct CurrencyCrashRecovery {
    static let rounds = ProcessInfo.processInfo.environment["GATEHOUSE_SOAK"] == nil ? 5 : 40
    static let clients = 4
    /// Fresh profiles each round, so no history outgrows one `currency.history` page (1,000).
    static let profilesPerRound = 3

    static let config: JSONValue = [
        "currencies": [["code": "COINS", "name": "Coins"]],
    ]

    @Test func sigkillUnderCreditAndDebitLoadLosesNoAcknowledgedTransaction() async throws {
        try await withTemporaryDirectory { directory in
            let dataDirectory = directory.appending("data")
            var random = SplitMix(seed: 0xC0_1A5E_D0C5)
            var model = CurrencyCrashModel()
            for round in 0..<Self.rounds {
                let server = try await ServerProcess.start(dataDirectory: dataDirectory)
                if round == 0 { model = try await Self.setUp(server, model) }
                model = try await Self.check(server, model)
                model = try await Self.addProfiles(server, model, round: round)
                // Kill after a random number of acknowledged transactions (a random moment of the load).
                let target = model.acks.count + Int(random.next() % 150) + 1
                let seed = random.next()
                let progress = CurrencyCrashProgress(model)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for client in 0..<Self.clients {
                        group.addTask {
                            await Self.load(server, client: client, round: round, seed: seed &+ UInt64(client), progress: progress)
                            await progress.finished()
                        }
                    }
                    group.addTask {
                        while await progress.shouldWait(for: target, workers: Self.clients) { await Task.yield() }
                        _ = await server.kill9()
                    }
                    try await group.waitForAll()
                }
                let outcome = await progress.outcome()
                #expect(outcome.unexpected.isEmpty, "round \(round): unexpected answers \(outcome.unexpected)")
                #expect(outcome.inFlight.count <= Self.clients, "at most one request in flight per client")
                model = outcome.model
                model.inFlight = outcome.inFlight
            }
            let server = try await ServerProcess.start(dataDirectory: dataDirectory)
            model = try await Self.check(server, model)
            #expect(model.acks.count > 0, "the load acknowledged something")
            #expect(model.acks.values.contains { $0.request.amount < 0 }, "some debits were acknowledged")
            #expect(await server.stop().status == 0)
        }
    }

    /// The project and its config.
    static func setUp(_ server: ServerProcess, _ model: CurrencyCrashModel) async throws -> CurrencyCrashModel {
        var model = model
        let admin = try await server.admin()
        let created = try await admin.call("project.create", ["project": "bank"])
        model.secret = try #require(created.object("keys")?.string("secret"))
        let backend = try TestClient(connectingTo: server.address)
        try await backend.hello(model.secret)
        let put = try await backend.call("config.put", ["config": Self.config])
        #expect(put.isSuccess, "\(put)")
        return model
    }

    /// This round's profiles (acknowledged, so durable, before the load starts).
    static func addProfiles(_ server: ServerProcess, _ model: CurrencyCrashModel, round: Int) async throws -> CurrencyCrashModel {
        var model = model
        let backend = try TestClient(connectingTo: server.address)
        try await backend.hello(model.secret)
        model.roundProfiles = []
        for index in 0..<Self.profilesPerRound {
            let created = try await backend.call("profile.create", ["customer_user_id": .string("r\(round)-p\(index)")])
            let id = try #require(created.object("profile")?.string("profile_id"), "\(created)")
            model.profiles.append(id)
            model.roundProfiles.append(id)
        }
        return model
    }

    /// Credits and debits this round's profiles with unique keys until the connection dies.
    /// Each request is registered as in flight before it is sent and settled by its answer.
    static func load(_ server: ServerProcess, client index: Int, round: Int, seed: UInt64, progress: CurrencyCrashProgress) async {
        let model = await progress.model
        guard let client = try? TestClient(connectingTo: server.address), (try? await client.hello(model.secret)) != nil else { return }
        var random = SplitMix(seed: seed)
        var number = 0
        while true {
            number += 1
            let profile = model.roundProfiles[Int(random.next() % UInt64(model.roundProfiles.count))]
            let credit = random.next() % 10 < 6
            let size = Int64(random.next() % (credit ? 100 : 120)) + 1
            let request = CurrencyCrashRequest(profile: profile, key: "c\(index)-r\(round)-\(number)", amount: credit ? size : -size)
            await progress.sending(request, client: index)
            guard let answer = try? await client.call("currency.transact", [
                "profile_id": .string(request.profile), "currency": "COINS", "amount": .int(request.amount),
                "idempotency_key": .string(request.key),
            ]) else { return }
            await progress.answered(answer, for: request, client: index)
        }
    }

    /// Every profile's balance is the sum of its acknowledged transactions plus the unanswered
    /// ones that landed, its history adds up and holds every acknowledged transaction once,
    /// with the answered id and balance, and replays of acknowledged keys change nothing. The
    /// requests in flight at the last kill are resolved here: each landed whole or not at all,
    /// and stays so.
    static func check(_ server: ServerProcess, _ model: CurrencyCrashModel) async throws -> CurrencyCrashModel {
        var model = model
        guard !model.secret.isEmpty else { return model }
        let client = try TestClient(connectingTo: server.address)
        try await client.hello(model.secret)
        var landedInFlight = Set<String>()
        let inFlight = Dictionary(uniqueKeysWithValues: model.inFlight.map { ($0.key, $0) })
        for profile in model.profiles {
            let document = try await client.call("profile.get", ["profile_id": .string(profile)])
            let balance = try #require(document.object("currencies")?.int("COINS"), "\(document)")
            let entries = try await history(client, profile)
            #expect(entries.count < 1000, "the whole history fits one page")

            // The history's own arithmetic.
            #expect(entries.reduce(0) { $0 + ($1.int("amount") ?? 0) } == balance, "\(profile): the history sums to the balance")
            for (position, entry) in entries.enumerated() {
                let before = position + 1 < entries.count ? entries[position + 1].int("balance") ?? -1 : 0
                #expect(entry.int("balance") == before + (entry.int("amount") ?? 0), "\(profile): entry \(entry)")
                #expect((entry.int("balance") ?? -1) >= 0, "never below 0: \(entry)")
                #expect(entry.string("source") == "transaction")
            }
            var byKey: [String: JSONObject] = [:]
            for entry in entries {
                let key = entry.string("ref") ?? "?"
                #expect(byKey[key] == nil, "\(profile): key \(key) landed twice")
                byKey[key] = entry
            }

            // Acknowledged: there, once, as answered.
            var expected: Int64 = 0
            for ack in model.acks.values where ack.request.profile == profile {
                expected += ack.request.amount
                let entry = byKey[ack.request.key]
                #expect(entry != nil, "acknowledged \(ack.request.key) (\(ack.request.amount)) on \(profile) is missing")
                #expect(entry?.int("amount") == ack.request.amount)
                #expect(entry?.string("transaction_id") == ack.transactionID)
                #expect(entry?.int("balance") == ack.balance, "the answered balance is the one recorded")
            }
            // Resolved earlier: as it was found then.
            for request in model.landed.values where request.profile == profile {
                expected += request.amount
                #expect(byKey[request.key]?.int("amount") == request.amount, "in-flight \(request.key) landed, then vanished")
            }
            for key in model.lost {
                #expect(byKey[key] == nil, "in-flight \(key) was not there, then appeared")
            }
            // In flight at the last kill: whole or not at all.
            for request in model.inFlight where request.profile == profile {
                guard let entry = byKey[request.key] else { continue }
                #expect(entry.int("amount") == request.amount, "in-flight \(request.key) landed with another amount: \(entry)")
                expected += request.amount
                landedInFlight.insert(request.key)
            }
            // Nothing else.
            for key in byKey.keys {
                let known = model.acks[key] != nil || model.landed[key] != nil || inFlight[key] != nil
                #expect(known, "\(profile): \(key) was never acknowledged nor in flight")
            }
            #expect(balance == expected, "\(profile): balance \(balance), acknowledged plus landed \(expected)")

            // A replay of the latest acknowledged key answers the first result and changes nothing.
            if let ack = model.acks.values.filter({ $0.request.profile == profile }).max(by: { $0.order < $1.order }) {
                let replay = try await client.call("currency.transact", [
                    "profile_id": .string(profile), "currency": "COINS", "amount": .int(ack.request.amount),
                    "idempotency_key": .string(ack.request.key),
                ])
                #expect(replay.isSuccess, "\(replay)")
                #expect(replay.string("transaction_id") == ack.transactionID)
                #expect(replay.int("balance") == ack.balance)
                #expect(try await history(client, profile).count == entries.count)
            }
        }
        for request in model.inFlight {
            if landedInFlight.contains(request.key) { model.landed[request.key] = request } else { model.lost.insert(request.key) }
        }
        model.inFlight = []
        return model
    }

    static func history(_ client: TestClient, _ profile: String) async throws -> [JSONObject] {
        let answer = try await client.call("currency.history", ["profile_id": .string(profile), "currency": "COINS", "limit": 1000])
        #expect(answer.isSuccess, "\(answer)")
        return (answer["entries"]?.arrayValue ?? []).compactMap(\.objectValue)
    }
}

struct CurrencyCrashRequest: Sendable {
    let profile: String
    let key: String
    let amount: Int64
}

struct CurrencyCrashAck: Sendable {
    let request: CurrencyCrashRequest
    let transactionID: String
    let balance: Int64
    /// The order acknowledgements arrived in.
    let order: Int
}

/// What the currency crash test knows.
struct CurrencyCrashModel: Sendable {
    var secret = ""
    var profiles: [String] = []
    /// The profiles the current round's load uses.
    var roundProfiles: [String] = []
    /// Acknowledged transactions by key.
    var acks: [String: CurrencyCrashAck] = [:]
    /// Sent but unanswered when the server was killed; resolved by the next check.
    var inFlight: [CurrencyCrashRequest] = []
    /// Unanswered requests found applied, and the keys of those found not applied.
    var landed: [String: CurrencyCrashRequest] = [:]
    var lost: Set<String> = []
}

actor CurrencyCrashProgress {
    private(set) var model: CurrencyCrashModel
    private var pending: [Int: CurrencyCrashRequest] = [:]
    private var unexpected: [String] = []
    private var finishedWorkers = 0

    init(_ model: CurrencyCrashModel) { self.model = model }

    func sending(_ request: CurrencyCrashRequest, client: Int) { pending[client] = request }

    /// An answer settles its request: applied (`ok`), or refused and not applied.
    func answered(_ answer: JSONObject, for request: CurrencyCrashRequest, client: Int) {
        pending[client] = nil
        if answer.isSuccess, let id = answer.string("transaction_id"), let balance = answer.int("balance") {
            model.acks[request.key] = CurrencyCrashAck(request: request, transactionID: id, balance: balance, order: model.acks.count)
        } else if answer.object("error")?.string("code") == "insufficient_funds", request.amount < 0,
            let balance = answer.object("error")?.int("balance"), balance >= 0, balance < -request.amount
        {
            return
        } else {
            unexpected.append(JSONWriter.string(.object(answer)))
        }
    }

    func finished() { finishedWorkers += 1 }

    /// Whether the killer keeps waiting: the target is not reached and some worker still runs.
    func shouldWait(for target: Int, workers: Int) -> Bool {
        model.acks.count < target && finishedWorkers < workers
    }

    func outcome() -> (model: CurrencyCrashModel, inFlight: [CurrencyCrashRequest], unexpected: [String]) {
        (model, pending.keys.sorted().compactMap { pending[$0] }, unexpected)
    }
}
