import GatehouseBase
import GatehouseCore
import GatehousePosix
import GatehouseRuntime
import GatehouseStorage
import GatehouseWire

/// The operator's server-wide ops: stats, checkpoints, the test clock.
enum ServerOperations {
    static let all: [Operation] = [stats, checkpoint, advanceClock]

    static let stats = Operation(name: "server.stats", roles: [.admin], body: .async { context throws(GatehouseError) in
        let core = context.core
        let stats = core.stats
        let wal = core.engine.log.stats
        let uptimeNanoseconds = EventLoop.monotonicNanoseconds() - stats.startedNanoseconds
        return Reply([
            "version": .string(GatehouseVersion.current),
            "uptime_ms": .int(Int64(uptimeNanoseconds / 1_000_000)),
            "time_ms": .int(core.clock.nowMs()),
            "connections": [
                "open": .int(stats.openConnections),
                "accepted": .int(stats.acceptedConnections),
                "rejected": .int(stats.rejectedConnections),
                "max": .int(core.configuration.connectionsMax),
                "buffered_bytes": .int(core.bufferedBytesNow),
            ],
            "projects": .int(core.registry.projectCount),
            "requests": .int(stats.requests),
            "ops_per_second": .int(stats.requestsPerSecond),
            "lanes": ["rounds": .int(stats.laneRounds), "steps": .int(stats.laneSteps)],
            "inbox": ["requests": .int(stats.inboxRuns)],
            "fsync": .string(core.configuration.fsync.rawValue),
            "storage": "wal",
            "wal_bytes": .int(Int64(wal.bytesOnDisk)),
            "wal": [
                "segments": .int(wal.segments),
                "last_lsn": .int(Int64(core.engine.log.lastLSN)),
                "durable_lsn": .int(Int64(core.engine.log.durableLSN)),
                "frames": .int(Int64(wal.framesWritten)),
                "syncs": .int(Int64(wal.syncs)),
                "last_sync_us": .int(wal.lastSyncDuration.wholeMicroseconds),
                "max_sync_us": .int(wal.maxSyncDuration.wholeMicroseconds),
            ],
            "last_snapshot_ms": .optional(await core.engine.checkpointer.lastSnapshotMs) { .int($0) },
            "read_only": .bool(core.engine.log.isReadOnly),
            "test_clock": .bool(core.manualClock != nil),
        ])
    })

    /// Snapshots every tenant now and truncates the log.
    static let checkpoint = Operation(name: "server.checkpoint", roles: [.admin], body: .async { context throws(GatehouseError) in
        do {
            let cursors = try await context.core.engine.checkpointer.checkpoint()
            var object = JSONObject()
            for (project, cursor) in cursors { object.append(project.rawValue, .int(Int64(cursor))) }
            return Reply(["cursor": .object(object)])
        } catch {
            throw GatehouseError(.internal, "checkpoint failed: \(error)")
        }
    })

    /// Moves a `--test-clock` server's clock forward; without that flag it is `forbidden`.
    static let advanceClock = Operation(name: "clock.advance", roles: [.admin], body: .async { context throws(GatehouseError) in
        guard let clock = context.core.manualClock else {
            throw GatehouseError(.forbidden, "clock.advance needs a server started with --test-clock")
        }
        let milliseconds = try context.fields.int("ms", in: 0...(100 * 365 * 86_400_000))
        let now = clock.advance(byMs: milliseconds)
        // What the move ended (expiries, grace, grants) is applied before the answer.
        var lsn: LSN = 0
        for project in context.core.registry.allProjects() {
            lsn = max(lsn, await project.runExpiries())
        }
        return Reply(["time_ms": .int(now)], after: lsn)
    })
}
