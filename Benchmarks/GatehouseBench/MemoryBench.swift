import Foundation
import GatehouseBase
import GatehouseCore
import GatehouseRuntime

/// `gatehouse-bench memory [--profiles N]`: resident memory and time for N identified profiles
/// in one project's state, and the size and time of its snapshot body (issue: a million
/// profiles per project in well under a GiB).
enum MemoryBench {
    static func run(profiles count: Int) -> Int32 {
        let random = SeededRandomSource(seed: 42)
        let keys = KeyDigests(publicKey: SecretDigest(secret: "p"), secretKey: SecretDigest(secret: "s"))
        // swiftlint:disable:next force_try
        var state = ProjectState(id: try! ProjectID(validating: "bench"), name: "bench", createdMs: 0, keys: keys)
        let before = residentBytes()
        let started = ContinuousClock.now
        for index in 0..<count {
            guard let decision = try? state.createProfile(customerUserID: "user-\(index)", token: nil,
                                                          nowMs: 1_800_000_000_000, random: random)
            else { return 1 }
            state.apply(decision.batch)
        }
        let created = ContinuousClock.now - started
        let after = residentBytes()
        let encodeStarted = ContinuousClock.now
        let body = ProjectSnapshotBody.encode(state)
        let encoded = ContinuousClock.now - encodeStarted
        let decodeStarted = ContinuousClock.now
        let decodedCount = (try? ProjectSnapshotBody.decode(body))?.profiles.count ?? -1
        let decoded = ContinuousClock.now - decodeStarted
        let growth = after - before
        print("memory: \(count) identified profiles: resident +\(mib(growth)) MiB (\(growth / max(count, 1)) bytes a profile); "
            + "created in \(created.wholeMilliseconds) ms; snapshot body \(mib(body.count)) MiB, "
            + "encoded in \(encoded.wholeMilliseconds) ms, decoded in \(decoded.wholeMilliseconds) ms")
        return state.profiles.count == count && decodedCount == count ? 0 : 1
    }

    private static func mib(_ bytes: Int) -> String {
        String(format: "%.1f", Double(bytes) / 1_048_576)
    }

    /// Resident set size, from /proc/self/statm (its second field, in pages).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
