import GatehouseCore
import GatehouseRuntime
import GatehouseWire
import GatehousePosix

/// The operator's ops (PROTOCOL.md, "Operators"), run with the admin key.
enum AdminOperations {
    static let all: [Operation] = [create, list, get, delete, rotateKeys, stats, advanceClock]

    static let create = Operation(name: "project.create", roles: [.admin], body: .async { context throws(GatehouseError) in
        let id = try ProjectID(validating: context.fields.string("project"))
        let name = try context.fields.optionalString("name")
        let (project, keys) = try context.core.registry.createProject(id: id, name: name)
        return [
            "project": await project.summary().json,
            "keys": ["public": .string(keys.publicKey), "secret": .string(keys.secretKey)],
        ]
    })

    static let list = Operation(name: "project.list", roles: [.admin], body: .async { context throws(GatehouseError) in
        var projects: [JSONValue] = []
        for project in context.core.registry.allProjects() {
            projects.append(await project.summary().json)
        }
        return ["projects": .array(projects)]
    })

    static let get = Operation(name: "project.get", roles: [.admin], body: .async { context throws(GatehouseError) in
        let project = try existingProject(context)
        return ["project": await project.summary().json]
    })

    static let delete = Operation(name: "project.delete", roles: [.admin], body: .async { context throws(GatehouseError) in
        let id = try ProjectID(validating: context.fields.string("project"))
        try context.core.registry.deleteProject(id)
        return ["deleted": true]
    })

    static let rotateKeys = Operation(name: "project.rotate_keys", roles: [.admin], body: .async { context throws(GatehouseError) in
        let id = try ProjectID(validating: context.fields.string("project"))
        let kind = try context.fields.enumeration("which", KeyKind.self)
        let key = try await context.core.registry.rotateKey(of: id, kind: kind)
        return ["keys": [kind.rawValue: .string(key)]]
    })

    static let stats = Operation(name: "server.stats", roles: [.admin], body: .inline { context throws(GatehouseError) in
        let core = context.core
        let stats = core.stats
        let uptimeNanoseconds = EventLoop.monotonicNanoseconds() - stats.startedNanoseconds
        return [
            "version": .string(GatehouseVersion.current),
            "uptime_ms": .int(Int64(uptimeNanoseconds / 1_000_000)),
            "time_ms": .int(core.clock.nowMs()),
            "connections": [
                "open": .int(stats.openConnections),
                "accepted": .int(stats.acceptedConnections),
                "rejected": .int(stats.rejectedConnections),
                "max": .int(core.configuration.connectionsMax),
            ],
            "projects": .int(core.registry.projectCount),
            "requests": .int(stats.requests),
            "ops_per_second": .int(stats.requestsPerSecond),
            "fsync": .string(core.configuration.fsync.rawValue),
            // Until the write-ahead log lands, state lives in memory only: nothing is written.
            "storage": "memory",
            "wal_bytes": 0,
            "last_snapshot_ms": nil,
            "read_only": false,
            "test_clock": .bool(core.manualClock != nil),
        ]
    })

    /// Moves a `--test-clock` server's clock forward; without that flag it is `forbidden`.
    static let advanceClock = Operation(name: "clock.advance", roles: [.admin], body: .inline { context throws(GatehouseError) in
        guard let clock = context.core.manualClock else {
            throw GatehouseError(.forbidden, "clock.advance needs a server started with --test-clock")
        }
        let milliseconds = try context.fields.int("ms", in: 0...(100 * 365 * 86_400_000))
        return ["time_ms": .int(clock.advance(byMs: milliseconds))]
    })

    private static func existingProject(_ context: OperationContext) throws(GatehouseError) -> Project {
        let id = try ProjectID(validating: context.fields.string("project"))
        guard let project = context.core.registry.project(id) else { throw .notFound("project \(id)") }
        return project
    }
}

extension ProjectSummary {
    /// The `project` object of the admin ops.
    var json: JSONValue {
        [
            "id": .string(id.rawValue),
            "name": .string(name),
            "created_ms": .int(createdMs),
            "profiles": .int(profiles),
            "cursor": .int(Int64(cursor)),
        ]
    }
}
