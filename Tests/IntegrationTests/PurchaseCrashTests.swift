import Foundation
import GatehousePosix
import GatehouseTesting
import GatehouseWire
import Testing

/// The real binary, killed with SIGKILL at a seeded random moment under concurrent
/// `purchase.report` and `store.notify` load, loses no acknowledged purchase or renewal
/// (DESIGN.md, "Reliability and security"; PROTOCOL.md, "Durability of answers"). Six rounds
/// here; `GATEHOUSE_SOAK=1` runs sixty.
@Suite struct PurchaseCrashRecovery {
    static let rounds = ProcessInfo.processInfo.environment["GATEHOUSE_SOAK"] == nil ? 6 : 60
    static let reporters = 3
    static let notifiers = 2
    static let day: Int64 = 86_400_000

    static let config: JSONValue = [
        "entitlements": [["id": "pro"]],
        "products": [["id": "pro_monthly", "type": "subscription", "entitlements": ["pro"]]],
        "stores": ["test": true],
    ]

    @Test func sigkillUnderPurchaseLoadLosesNoAcknowledgedReportOrRenewal() async throws {
        try await withTemporaryDirectory { directory in
            let dataDirectory = directory.appending("data")
            var random = SplitMix(seed: 0x9A7C_4A5E_C4A5)
            var model = PurchaseModel(notifiers: Self.notifiers)
            for round in 0..<Self.rounds {
                let server = try await ServerProcess.start(dataDirectory: dataDirectory)
                if round == 0 { model = try await Self.setUp(server, model) }
                try await Self.check(server, model)
                // Kill after a random number of acknowledged writes (a random moment of the load).
                let target = model.total + Int(random.next() % 150) + 1
                let progress = PurchaseProgress(model)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<Self.reporters {
                        group.addTask {
                            await Self.report(server, writer: writer, round: round, progress: progress)
                            await progress.finished()
                        }
                    }
                    for notifier in 0..<Self.notifiers {
                        group.addTask {
                            await Self.renew(server, notifier: notifier, progress: progress)
                            await progress.finished()
                        }
                    }
                    group.addTask {
                        while await progress.shouldWait(for: target, workers: Self.reporters + Self.notifiers) { await Task.yield() }
                        _ = await server.kill9()
                    }
                    try await group.waitForAll()
                }
                model = await progress.model
            }
            let server = try await ServerProcess.start(dataDirectory: dataDirectory)
            try await Self.check(server, model)
            #expect(model.reports.count > 0 && model.renewals.reduce(0, +) > 0, "the load acknowledged something")
            #expect(await server.stop().status == 0)
        }
    }

    /// The project, its config, and one subscription per notifier to renew.
    static func setUp(_ server: ServerProcess, _ model: PurchaseModel) async throws -> PurchaseModel {
        var model = model
        let admin = try await server.admin()
        let created = try await admin.call("project.create", ["project": "shop"])
        model.secret = try #require(created.object("keys")?.string("secret"))
        let backend = try TestClient(connectingTo: server.address)
        let now = try #require(try await backend.hello(model.secret).int("time_ms"))
        #expect(try await backend.call("config.put", ["config": Self.config]).isSuccess)
        model.baseMs = now + 365 * Self.day
        for notifier in 0..<Self.notifiers {
            let profile = try await backend.call("profile.create")
            let id = try #require(profile.object("profile")?.string("profile_id"))
            let report = try await backend.call("purchase.report", [
                "profile_id": .string(id), "store": "test",
                "transaction": [
                    "transaction_id": .string("r\(notifier)"), "product_id": "pro_monthly", "purchased_ms": .int(now),
                    "expires_ms": .int(model.baseMs), "price": 9.99,
                ],
            ])
            #expect(report.isSuccess, "\(report)")
            model.renewed.append(id)
        }
        return model
    }

    /// Creates a profile and reports a new subscription on it, again and again, until the
    /// connection dies.
    static func report(_ server: ServerProcess, writer: Int, round: Int, progress: PurchaseProgress) async {
        let model = await progress.model
        guard let client = try? TestClient(connectingTo: server.address), (try? await client.hello(model.secret)) != nil else { return }
        var index = 0
        while true {
            guard let created = try? await client.call("profile.create"), created.isSuccess,
                let id = created.object("profile")?.string("profile_id")
            else { return }
            index += 1
            let original = "w\(writer)-r\(round)-\(index)"
            guard let answer = try? await client.call("purchase.report", [
                "profile_id": .string(id), "store": "test",
                "transaction": [
                    "transaction_id": .string(original), "product_id": "pro_monthly", "expires_ms": .int(model.baseMs),
                    "price": 9.99,
                ],
            ]), answer.isSuccess else { return }
            // The answer itself must already show it.
            guard answer.object("subscriptions")?.object(original) != nil else { return }
            await progress.acknowledgeReport(profile: id, original: original)
        }
    }

    /// Renews one subscription, one term further each time (notification ids `r<k>-<n>`),
    /// until the connection dies.
    static func renew(_ server: ServerProcess, notifier: Int, progress: PurchaseProgress) async {
        let model = await progress.model
        guard let client = try? TestClient(connectingTo: server.address), (try? await client.hello(model.secret)) != nil else { return }
        var next = model.renewals[notifier] + 1
        while let answer = try? await client.call("store.notify", [
            "store": "test",
            "event": [
                "notification_id": .string("r\(notifier)-\(next)"), "type": "renewal", "original_transaction_id": .string("r\(notifier)"),
                "transaction_id": .string("r\(notifier)-t\(next)"), "expires_ms": .int(model.expiresMs(renewal: next)), "price": 9.99,
            ],
        ]), answer.isSuccess {
            await progress.acknowledgeRenewal(notifier, next)
            next += 1
        }
    }

    /// Every acknowledged report is in its profile's document; every renewed subscription
    /// reaches at least its last acknowledged term (at most the one in flight beyond it).
    static func check(_ server: ServerProcess, _ model: PurchaseModel) async throws {
        let client = try TestClient(connectingTo: server.address)
        try await client.hello(model.secret)
        for (profile, original) in model.reports {
            let document = try await client.call("profile.get", ["profile_id": .string(profile)])
            let subscription = document.object("subscriptions")?.object(original)
            #expect(subscription?.string("status") == "active", "acknowledged report \(original) on \(profile) is missing: \(document)")
        }
        for (notifier, profile) in model.renewed.enumerated() {
            let document = try await client.call("profile.get", ["profile_id": .string(profile)])
            let expires = document.object("subscriptions")?.object("r\(notifier)")?.int("expires_ms") ?? 0
            let acknowledged = model.expiresMs(renewal: model.renewals[notifier])
            #expect(expires == acknowledged || expires == model.expiresMs(renewal: model.renewals[notifier] + 1),
                    "r\(notifier): acknowledged renewal \(model.renewals[notifier]) (expires \(acknowledged)), recovered \(expires)")
        }
    }
}

/// What the purchase crash test knows was acknowledged.
struct PurchaseModel: Sendable {
    var secret = ""
    /// The first term's end of the renewed subscriptions; renewal `n` ends `n` seconds later.
    var baseMs: Int64 = 0
    /// Acknowledged reports: the profile and the subscription's original transaction id.
    var reports: [(profile: String, original: String)] = []
    /// Per notifier: the profile owning its subscription, and the last acknowledged renewal.
    var renewed: [String] = []
    var renewals: [Int]

    init(notifiers: Int) {
        renewals = [Int](repeating: 0, count: notifiers)
    }

    var total: Int { reports.count + renewals.reduce(0, +) }

    func expiresMs(renewal: Int) -> Int64 { baseMs + Int64(renewal) * 1000 }
}

actor PurchaseProgress {
    private(set) var model: PurchaseModel
    private var finishedWorkers = 0

    init(_ model: PurchaseModel) { self.model = model }

    func acknowledgeReport(profile: String, original: String) { model.reports.append((profile, original)) }
    func acknowledgeRenewal(_ notifier: Int, _ number: Int) { model.renewals[notifier] = number }
    func finished() { finishedWorkers += 1 }

    /// Whether the killer keeps waiting: the target is not reached and some worker still runs.
    func shouldWait(for target: Int, workers: Int) -> Bool {
        model.total < target && finishedWorkers < workers
    }
}
