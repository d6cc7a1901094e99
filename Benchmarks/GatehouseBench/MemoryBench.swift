import Foundation
import GatehouseBase
import GatehouseCore
import GatehouseRuntime

/// `gatehouse-bench memory [--profiles N]`: resident memory and time for N identified profiles,
/// each owning a subscription, in one project's state, and the size and time of its snapshot
/// body (DESIGN.md: a million profiles with a subscription each in under a GiB); with
/// `--notifications`, also the store notifications a project remembers (30 days of them).
enum MemoryBench {
    static func run(profiles count: Int, notifications notificationCount: Int = 0, merges mergeCount: Int = 0, grants grantCount: Int = 0)
        -> Int32
    {
        let random = SeededRandomSource(seed: 42)
        let keys = KeyDigests(publicKey: SecretDigest(secret: "p"), secretKey: SecretDigest(secret: "s"))
        // swiftlint:disable:next force_try
        var state = ProjectState(id: try! ProjectID(validating: "bench"), name: "bench", createdMs: 0, keys: keys)
        var config = ProjectConfig.empty
        config.entitlements = [EntitlementDefinition(id: "pro")]
        config.products = [ProductDefinition(id: "pro_monthly", type: .subscription, entitlements: ["pro"])]
        config.stores.test = true
        state.apply(ProjectState.ChangeBatch([.configReplaced(config)], atMs: 0))
        let nowMs: Int64 = 1_800_000_000_000
        let before = residentBytes()
        let started = ContinuousClock.now
        for index in 0..<count {
            guard let decision = try? state.createProfile(customerUserID: "user-\(index)", token: nil,
                                                          nowMs: nowMs, random: random)
            else { return 1 }
            state.apply(decision.batch)
            let transaction = StoreTransaction(
                store: "test", kind: .subscription, transactionID: "1000\(index)", originalTransactionID: "1000\(index)",
                productID: "pro_monthly", purchasedMs: nowMs, expiresMs: nowMs + 30 * 86_400_000, token: nil, price: 9.99,
                currency: "USD", periodType: .normal, environment: .production)
            guard let purchase = try? state.reportPurchase(profile: decision.profileID, transaction: transaction, nowMs: nowMs)
            else { return 1 }
            state.apply(purchase.batch)
        }
        let created = ContinuousClock.now - started
        let after = residentBytes()
        let notificationsStarted = ContinuousClock.now
        rememberNotifications(notificationCount, in: &state, endingAtMs: nowMs)
        let notificationsRemembered = ContinuousClock.now - notificationsStarted
        let afterNotifications = residentBytes()
        let mergesStarted = ContinuousClock.now
        guard mergeAnonymousProfiles(mergeCount, into: count, in: &state, nowMs: nowMs, random: random) else { return 1 }
        let merged = ContinuousClock.now - mergesStarted
        let afterMerges = residentBytes()
        let grantsStarted = ContinuousClock.now
        guard grantEntitlement(toFirst: min(grantCount, count), in: &state, nowMs: nowMs) else { return 1 }
        let granted = ContinuousClock.now - grantsStarted
        let afterGrants = residentBytes()
        let encodeStarted = ContinuousClock.now
        let body = ProjectSnapshotBody.encode(state)
        let encoded = ContinuousClock.now - encodeStarted
        let decodeStarted = ContinuousClock.now
        let decodedCount = (try? ProjectSnapshotBody.decode(body))?.profiles.count ?? -1
        let decoded = ContinuousClock.now - decodeStarted
        let growth = after - before
        guard let afterCapture = writesAfterCapture(of: &state, { state, turn in renew([count / 2, count / 3][turn], in: &state, nowMs: nowMs) })
        else { return 1 }
        print("memory: \(count) identified profiles with a subscription each: resident +\(mebibytes(growth)) MiB (\(growth / max(count, 1)) bytes a profile); "
            + "created in \(created.wholeMilliseconds) ms; snapshot body \(mebibytes(body.count)) MiB, "
            + "encoded in \(encoded.wholeMilliseconds) ms, decoded in \(decoded.wholeMilliseconds) ms; "
            + "after a snapshot's capture, the first renewal took \(afterCapture.first.wholeMicroseconds) µs, the next \(afterCapture.next.wholeMicroseconds) µs")
        if notificationCount > 0 {
            guard let times = writesAfterCapture(of: &state, { state, turn in
                state.apply(ProjectState.ChangeBatch([.notificationSeen(store: "apple", id: "after-capture-\(turn)")], atMs: nowMs + 2000))
                return true
            }) else { return 1 }
            printExtra("\(notificationCount) store notifications remembered", count: notificationCount, each: "notification",
                       growth: afterNotifications - after, took: notificationsRemembered, after: times, write: "notification")
        }
        if mergeCount > 0 {
            guard let times = writesAfterCapture(of: &state, { state, turn in
                merge(into: "user-\([count / 2, count / 3][turn])", in: &state, nowMs: nowMs + 3000, random: random)
            }) else { return 1 }
            printExtra("\(mergeCount) anonymous profiles merged into identified ones", count: mergeCount, each: "merged profile",
                       growth: afterMerges - afterNotifications, took: merged, after: times, write: "merge")
        }
        if grantCount > 0 {
            guard let times = writesAfterCapture(of: &state, { state, turn in grant(to: "user-\(count - 1 - turn)", in: &state, nowMs: nowMs + 4000) })
            else { return 1 }
            let grants = min(grantCount, count)
            printExtra("\(grants) profiles given a promotional grant", count: grants, each: "grant",
                       growth: afterGrants - afterMerges, took: granted, after: times, write: "grant")
        }
        let remembered = state.purchases.seenNotifications.count == notificationCount + (notificationCount > 0 ? 2 : 0)
        return state.profiles.count == count && decodedCount == count && state.purchases.subscriptions.count == count && remembered ? 0 : 1
    }

    /// What the project's next writes cost while a snapshot holds a copy of the state (the
    /// actor pays for whatever the copy makes it duplicate): `write` twice (its turn, 0 then 1),
    /// each timed, the copy kept alive meanwhile; `nil` when a write fails.
    private static func writesAfterCapture(of state: inout ProjectState, _ write: (inout ProjectState, Int) -> Bool)
        -> (first: Duration, next: Duration)?
    {
        let captured = state
        defer { withExtendedLifetime(captured) {} }
        var times: [Duration] = []
        for turn in 0..<2 {
            let started = ContinuousClock.now
            guard write(&state, turn) else { return nil }
            times.append(ContinuousClock.now - started)
        }
        return (times[0], times[1])
    }

    /// A renewal of the subscription of profile `user-<index>`.
    private static func renew(_ index: Int, in state: inout ProjectState, nowMs: Int64) -> Bool {
        guard let profile = state.profiles.profile(customerUserID: "user-\(index)")?.id else { return false }
        let renewal = StoreTransaction(
            store: "test", kind: .subscription, transactionID: "2000\(index)", originalTransactionID: "1000\(index)",
            productID: "pro_monthly", purchasedMs: nowMs + 1000, expiresMs: nowMs + 60 * 86_400_000, token: nil, price: 9.99,
            currency: "USD", periodType: .normal, environment: .production)
        guard let decision = try? state.reportPurchase(profile: profile, transaction: renewal, nowMs: nowMs + 1000) else { return false }
        state.apply(decision.batch)
        return true
    }

    /// The line for what `--notifications`, `--merges` or `--grants` added: its memory, the time
    /// to add it, and the first two writes of its kind after a snapshot's capture.
    private static func printExtra(_ what: String, count: Int, each: String, growth: Int, took: Duration,
                                   after times: (first: Duration, next: Duration), write: String) {
        print("memory: \(what): resident +\(mebibytes(growth)) MiB (\(growth / count) bytes a \(each)), in \(took.wholeMilliseconds) ms; "
            + "after a snapshot's capture, the first \(write) took \(times.first.wholeMicroseconds) µs, the next \(times.next.wholeMicroseconds) µs")
    }

    /// `count` store notifications seen over the 29 days before `endMs`, as a project remembers
    /// them (each id a UUID, as Apple's are).
    private static func rememberNotifications(_ count: Int, in state: inout ProjectState, endingAtMs endMs: Int64) {
        let spanMs: Int64 = 29 * 86_400_000
        for index in 0..<count {
            let atMs = endMs - spanMs + spanMs * Int64(index) / Int64(max(count, 1))
            state.apply(ProjectState.ChangeBatch([.notificationSeen(store: "apple", id: notificationID(index))], atMs: atMs))
        }
    }

    private static func notificationID(_ index: Int) -> String {
        let hex = String(UInt64(index) &* 0x9E37_79B9_7F4A_7C15, radix: 16)
        let padded = String(repeating: "0", count: 16 - hex.count) + hex
        return "5d0b8f1e-\(padded.prefix(4))-4\(padded.dropFirst(4).prefix(3))-9\(padded.dropFirst(7).prefix(3))-00\(padded.dropFirst(10))\(index % 10)"
    }

    /// `count` anonymous profiles, each merged into an identified one in turn (as a sign-in on a
    /// second device does under `login: alias`): what the directory keeps for merged-away ids
    /// and tokens.
    private static func mergeAnonymousProfiles(_ count: Int, into profiles: Int, in state: inout ProjectState, nowMs: Int64,
                                               random: some RandomSource) -> Bool {
        for index in 0..<count {
            guard merge(into: "user-\(index % profiles)", in: &state, nowMs: nowMs, random: random) else { return false }
        }
        return true
    }

    private static func merge(into customerUserID: String, in state: inout ProjectState, nowMs: Int64, random: some RandomSource) -> Bool {
        guard let anonymous = try? state.createProfile(customerUserID: nil, token: nil, nowMs: nowMs, random: random),
            let target = state.profiles.profile(customerUserID: customerUserID)?.id
        else { return false }
        state.apply(anonymous.batch)
        state.apply(ProjectState.ChangeBatch([.profileMerged(from: anonymous.profileID, into: target)], atMs: nowMs))
        return state.profiles.canonicalID(anonymous.profileID) == target
    }

    /// A promotional grant of `extra` for a month to each of the first `count` profiles.
    private static func grantEntitlement(toFirst count: Int, in state: inout ProjectState, nowMs: Int64) -> Bool {
        for index in 0..<count {
            guard grant(to: "user-\(index)", in: &state, nowMs: nowMs) else { return false }
        }
        return true
    }

    private static func grant(to customerUserID: String, in state: inout ProjectState, nowMs: Int64) -> Bool {
        guard let profile = state.profiles.profile(customerUserID: customerUserID)?.id else { return false }
        let grant = PromotionalGrant(entitlementID: "extra", grantedMs: nowMs, expiresMs: nowMs + 30 * 86_400_000)
        state.apply(ProjectState.ChangeBatch([.grantStored(profile, grant)], atMs: nowMs))
        return state.purchases.grant(of: profile, entitlement: "extra") == grant
    }

    /// Resident set size, from /proc/self/statm (its second field, in pages).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
