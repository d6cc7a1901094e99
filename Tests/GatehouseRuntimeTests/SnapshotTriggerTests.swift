import GatehouseBase
import GatehouseCore
@testable import GatehouseRuntime
import GatehouseStorage
import GatehouseTesting
import Synchronization
import Testing

/// A project asks for its own snapshot once it has logged the larger of the floor and half its
/// last snapshot's body (``SnapshotTrigger``).
@Suite struct SnapshotTriggering {
    @Test func theNextSnapshotIsDueAfterTheFloorOrHalfTheLastBodyWhicheverIsMore() {
        let trigger = SnapshotTrigger(loggedBytesThreshold: 1_000)
        #expect(trigger.dueBytes(afterSnapshotBody: 0) == 1_000)
        #expect(trigger.dueBytes(afterSnapshotBody: 1_999) == 1_000)
        #expect(trigger.dueBytes(afterSnapshotBody: 10_000) == 5_000)
    }

    @Test func aProjectAsksAtTheFloorUntilItsFirstSnapshotThenAfterHalfItsBody() async throws {
        try await withEngine(floor: 1_000) { engine, requests in
            let project = try engine.registry.createProject(id: try ProjectID(validating: "acme"), name: nil).value.0
            // Before any snapshot: the floor.
            let (firstBefore, recordBytes) = try await logUntilAsked(project, requests: requests)
            #expect(firstBefore < 1_000 && firstBefore + recordBytes >= 1_000)
            // After a snapshot with a 10,000-byte body: half of it.
            await project.snapshotWritten(bodyBytes: 10_000)
            let (secondBefore, _) = try await logUntilAsked(project, requests: requests)
            #expect(secondBefore < 5_000 && secondBefore + recordBytes >= 5_000)
            // A small body leaves the floor in charge.
            await project.snapshotWritten(bodyBytes: 100)
            let (thirdBefore, _) = try await logUntilAsked(project, requests: requests)
            #expect(thirdBefore < 1_000 && thirdBefore + recordBytes >= 1_000)
        }
    }

    @Test func writingASnapshotSetsTheProjectsNextThresholdFromItsBody() async throws {
        try await withEngine(floor: 1) { engine, _ in
            let project = try engine.registry.createProject(id: try ProjectID(validating: "acme"), name: nil).value.0
            for _ in 0..<20 { _ = try await project.createProfile(customerUserID: "user-\(Self.nextUser())", token: nil, by: .server) }
            #expect(await project.snapshotDueBytes == 1)
            _ = try await engine.checkpointer.checkpoint()
            // Twenty profiles make a body of some hundreds of bytes; half of it is now the threshold.
            #expect(await project.snapshotDueBytes > 100)
        }
    }

    @Test func aRestartedProjectTakesItsThresholdFromTheSnapshotItLoaded() async throws {
        try await withTemporaryDirectory(prefix: "gh-trigger") { scratch in
            let directory = scratch.path
            let due = try await withEngine(floor: 1, in: directory) { engine, _ in
                let project = try engine.registry.createProject(id: try ProjectID(validating: "acme"), name: nil).value.0
                for _ in 0..<20 { _ = try await project.createProfile(customerUserID: "user-\(Self.nextUser())", token: nil, by: .server) }
                _ = try await engine.checkpointer.checkpoint()
                return await project.snapshotDueBytes
            }
            #expect(due > 100)
            try await withEngine(floor: 1, in: directory) { engine, _ in
                let project = try #require(engine.registry.project(try ProjectID(validating: "acme")))
                #expect(await project.snapshotDueBytes == due)
            }
        }
    }

    /// Creates profiles (records of one size) until the project asks for a snapshot; answers the
    /// bytes it had logged before the change that made it ask, and a record's size.
    private func logUntilAsked(_ project: Project, requests: RequestCount) async throws -> (before: Int, recordBytes: Int) {
        let asked = requests.value
        var before = 0
        var recordBytes = 0
        var made = 0
        while requests.value == asked {
            before = await project.loggedBytesSinceSnapshot
            made += 1
            _ = try await project.createProfile(customerUserID: "user-\(Self.nextUser())", token: nil, by: .server)
            let after = await project.loggedBytesSinceSnapshot
            if after > before { recordBytes = after - before }
            try #require(made < 10_000, "the project never asked for a snapshot")
        }
        #expect(requests.value == asked + 1)
        #expect(await project.loggedBytesSinceSnapshot == 0)
        return (before, recordBytes)
    }

    private static let users = Mutex(100_000)
    /// Fixed-width customer ids, so every profile's record has the same size.
    private static func nextUser() -> Int { users.withLock { $0 += 1; return $0 } }

    /// An engine on a scratch directory whose trigger counts requests instead of snapshotting
    /// (`checkpoint()` still snapshots).
    private func withEngine(floor: Int, _ body: (Engine, RequestCount) async throws -> Void) async throws {
        try await withTemporaryDirectory(prefix: "gh-trigger") { directory in
            try await withEngine(floor: floor, in: directory.path, body)
        }
    }

    /// ``withEngine(floor:_:)`` on `directory`, which outlives it.
    private func withEngine<T>(floor: Int, in directory: String, _ body: (Engine, RequestCount) async throws -> T)
        async throws -> T
    {
        var options = EngineOptions(wal: WALOptions(policy: .none))
        options.snapshotAfterLoggedBytes = floor
        return try await withTestEngine(options, in: directory) { engine in
            let requests = RequestCount()
            engine.registry.trigger.install { _ in requests.add() }
            return try await body(engine, requests)
        }
    }
}

/// How many snapshots the projects asked for.
private final class RequestCount: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func add() { count.withLock { $0 += 1 } }
}
