import GatehouseBase
import GatehouseCore
@testable import GatehouseRuntime
import GatehouseStorage
import GatehouseTesting
import Testing

/// What `/metrics` reads of the runtime: snapshots taken and how long they took, without
/// entering an actor (scraping must not queue behind a project's writes).
@Suite struct RuntimeMetrics {
    @Test func everyProjectSnapshotPublishedIsCountedAndOneSkippedIsNot() async throws {
        try await withScratchEngine { engine in
            for name in ["acme", "globex"] {
                let project = try engine.registry.createProject(id: try ProjectID(validating: name), name: nil).value.0
                _ = try await project.createProfile(customerUserID: "user-1", token: nil, by: .server)
            }
            #expect(engine.checkpointer.snapshotsTaken == 0)
            _ = try await engine.checkpointer.checkpoint()
            #expect(engine.checkpointer.snapshotsTaken == 2)
            // Unchanged projects: a second checkpoint writes the second copy each keeps…
            _ = try await engine.checkpointer.checkpoint()
            #expect(engine.checkpointer.snapshotsTaken == 4)
            // …and a third has nothing to write.
            _ = try await engine.checkpointer.checkpoint()
            #expect(engine.checkpointer.snapshotsTaken == 4)
            let durations = engine.checkpointer.snapshotDurations.snapshot()
            #expect(durations.count == 4)
            #expect(durations.bounds == DurationHistogram.storageBounds)
        }
    }

    @Test func aSnapshotAProjectAsksForIsCountedToo() async throws {
        var options = EngineOptions(wal: WALOptions(policy: .none))
        options.snapshotAfterLoggedBytes = 1
        try await withScratchEngine(options) { engine in
            let project = try engine.registry.createProject(id: try ProjectID(validating: "acme"), name: nil).value.0
            _ = try await project.createProfile(customerUserID: "user-1", token: nil, by: .server)
            #expect(await eventually { engine.checkpointer.snapshotsTaken >= 1 })
            #expect(engine.checkpointer.snapshotDurations.snapshot().count == engine.checkpointer.snapshotsTaken)
        }
    }

    /// An engine on a scratch directory, closed and removed after `body`.
    private func withScratchEngine(_ options: EngineOptions = EngineOptions(wal: WALOptions(policy: .none)),
                                   _ body: (Engine) async throws -> Void) async throws
    {
        try await withTemporaryDirectory(prefix: "gh-metrics") { directory in
            try await withTestEngine(options, in: directory.path, body)
        }
    }
}
