import GatehouseCore
import GatehouseRuntime
import GatehouseWire

/// Moving tenants: `tenant.snapshot` and `tenant.restore` (PROTOCOL.md, "Operators"). `path` is
/// a file name inside the exports directory; the runtime refuses anything else.
enum TenantOperations {
    static let all: [Operation] = [snapshot, restore]

    static let snapshot = Operation(name: "tenant.snapshot", roles: [.admin], body: .async { context throws(GatehouseError) in
        let id = try ProjectID(validating: context.fields.string("project"))
        let name = try context.fields.optionalString("path")
        let export = try await context.core.engine.exportTenant(id, named: name)
        return Reply([
            "path": .string(export.value.path),
            "cursor": .int(Int64(export.value.cursor)),
            "profiles": .int(export.value.profiles),
            "bytes": .int(export.value.bytes),
            "sha256": .string(export.value.sha256),
        ], after: export.lsn)
    })

    static let restore = Operation(name: "tenant.restore", roles: [.admin], body: .async { context throws(GatehouseError) in
        let id = try ProjectID(validating: context.fields.string("project"))
        let name = try context.fields.string("path")
        let replace = try context.fields.optionalBool("replace") ?? false
        let restored = try await context.core.engine.restoreTenant(id, named: name, replace: replace)
        var result: JSONObject = [
            "project": .string(restored.value.project.rawValue),
            "cursor": .int(Int64(restored.value.cursor)),
            "profiles": .int(restored.value.profiles),
        ]
        if let keys = restored.value.keys {
            result.append("keys", AdminOperations.keysObject(publicKey: keys.publicKey, secretKey: keys.secretKey))
        }
        return Reply(result, after: restored.lsn)
    })
}
