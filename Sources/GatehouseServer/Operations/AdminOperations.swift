import GatehouseCore
import GatehousePosix
import GatehouseRuntime
import GatehouseWire

/// The operator's project ops (PROTOCOL.md, "Operators"), run with the admin key.
enum AdminOperations {
    static let all: [Operation] = [create, list, get, delete, rotateKeys] + ServerOperations.all + TenantOperations.all

    static let create = Operation(name: "project.create", roles: [.admin], body: .async { context throws(GatehouseError) in
        let id = try ProjectID(validating: context.fields.string("project"))
        let name = try context.fields.optionalString("name")
        let created = try context.core.registry.createProject(id: id, name: name)
        let (project, keys) = created.value
        return Reply([
            "project": await project.summary().value.json,
            "keys": keysObject(publicKey: keys.publicKey, secretKey: keys.secretKey),
        ], after: created.lsn)
    })

    static let list = Operation(name: "project.list", roles: [.admin], body: .async { context throws(GatehouseError) in
        var projects: [JSONValue] = []
        var newest: UInt64 = 0
        for project in context.core.registry.allProjects() {
            let summary = await project.summary()
            projects.append(summary.value.json)
            newest = max(newest, summary.lsn)
        }
        return Reply(["projects": .array(projects)], after: newest)
    })

    static let get = Operation(name: "project.get", roles: [.admin], body: .async { context throws(GatehouseError) in
        let summary = await (try existingProject(context)).summary()
        return Reply(["project": summary.value.json], after: summary.lsn)
    })

    static let delete = Operation(name: "project.delete", roles: [.admin], body: .async { context throws(GatehouseError) in
        let id = try ProjectID(validating: context.fields.string("project"))
        let lsn = try context.core.registry.deleteProject(id)
        return Reply(["deleted": true], after: lsn)
    })

    static let rotateKeys = Operation(name: "project.rotate_keys", roles: [.admin], body: .async { context throws(GatehouseError) in
        let id = try ProjectID(validating: context.fields.string("project"))
        let kind = try context.fields.enumeration("which", KeyKind.self)
        let key = try await context.core.registry.rotateKey(of: id, kind: kind)
        let keys = kind == .public ? keysObject(publicKey: key.value) : keysObject(secretKey: key.value)
        return Reply(["keys": keys], after: key.lsn)
    })

    /// A `keys` object: the public key with its platform forms (`apple`, `google`), and the secret.
    static func keysObject(publicKey: String? = nil, secretKey: String? = nil) -> JSONValue {
        var keys: JSONObject = [:]
        if let publicKey {
            keys.append("public", .string(publicKey))
            for form in KeyFormat.PlatformForm.allCases {
                keys.append(form.name, .string(KeyFormat.spell(publicKey, as: form)))
            }
        }
        if let secretKey { keys.append("secret", .string(secretKey)) }
        return .object(keys)
    }

    static func existingProject(_ context: OperationContext) throws(GatehouseError) -> Project {
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
