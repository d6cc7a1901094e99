import GatehouseBase
import GatehouseCore
@testable import GatehouseRuntime
import GatehouseStorage
import GatehouseTesting
import Testing

/// What `/metrics` reads of the runtime: snapshots taken and how long they took, and the
/// profiles of every project, all without entering an actor (scraping must not queue behind a
/// project's writes).
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

    @Test func profileCountsFollowCreatesDeletesAndMergesWithoutAnAwait() async throws {
        try await withScratchEngine { engine in
            let registry = engine.registry
            let acme = try registry.createProject(id: try ProjectID(validating: "acme"), name: nil).value.0
            let globex = try registry.createProject(id: try ProjectID(validating: "globex"), name: nil).value.0
            #expect(registry.profileCount == 0)
            _ = try await acme.createProfile(customerUserID: "alice", token: nil, by: .server)
            let first = try await acme.createProfile(customerUserID: nil, token: nil, by: .sdk).value.view.profile.id
            let second = try await acme.createProfile(customerUserID: nil, token: nil, by: .sdk).value.view.profile.id
            _ = try await globex.createProfile(customerUserID: "bob", token: nil, by: .server)
            #expect(acme.published.profileCount == 3)
            #expect(globex.published.profileCount == 1)
            #expect(registry.profileCount == 4)

            _ = try await acme.deleteProfile(.id(first))
            #expect(acme.published.profileCount == 2)
            #expect(registry.profileCount == 3)

            // `login: alias`: the anonymous profile is merged into alice's.
            let merged = try await acme.identify(profile: .id(second), customerUserID: "alice", token: nil, by: .server).value
            try #require(merged.mergedFrom == [second])
            #expect(acme.published.profileCount == 1)
            #expect(registry.profileCount == 2)

            // A change that leaves the number alone leaves the count alone.
            _ = try await acme.updateAttributes(profile: .id(merged.view.profile.id), [])
            #expect(acme.published.profileCount == 1)

            _ = try registry.deleteProject(globex.id)
            #expect(registry.profileCount == 1)
        }
    }

    @Test func aProjectLoadedReplayedOrRestoredPublishesItsProfileCount() async throws {
        try await withTemporaryDirectory(prefix: "gh-metrics") { scratch in
            let options = EngineOptions(wal: WALOptions(policy: .none))
            let acmeID = try ProjectID(validating: "acme")
            try await withTestEngine(options, in: scratch.path) { engine in
                let acme = try engine.registry.createProject(id: acmeID, name: nil).value.0
                for user in 0..<3 { _ = try await acme.createProfile(customerUserID: "user-\(user)", token: nil, by: .server) }
                _ = try await engine.checkpointer.checkpoint()
                // After the snapshot: these two come back from the log.
                for user in 3..<5 { _ = try await acme.createProfile(customerUserID: "user-\(user)", token: nil, by: .server) }
                _ = try await engine.exportTenant(acmeID, named: "acme.snap")
            }
            try await withTestEngine(options, in: scratch.path) { engine in
                let acme = try #require(engine.registry.project(acmeID))
                #expect(acme.published.profileCount == 5)
                let cloneID = try ProjectID(validating: "clone")
                _ = try await engine.restoreTenant(cloneID, named: "acme.snap", replace: false)
                let clone = try #require(engine.registry.project(cloneID))
                #expect(clone.published.profileCount == 5)
                #expect(engine.registry.profileCount == 10)
            }
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
