import GatehouseCore
import GatehouseRuntime
import GatehouseWire

/// `config.put` and `config.get` (PROTOCOL.md, "Configuration").
enum ConfigOperations {
    static let all: [Operation] = [put, get]

    static let put = Operation(name: "config.put", roles: [.server], body: .async { context throws(GatehouseError) in
        let config = try ProjectConfig(json: context.fields.object("config").object)
        let installed = try await context.project.putConfig(config)
        return Reply(["config": installed.value.json], after: installed.lsn)
    })

    static let get = Operation(name: "config.get", roles: [.server, .sdk], body: .async { context throws(GatehouseError) in
        let config = await context.project.config()
        return Reply(["config": config.value.json], after: config.lsn, config: config.value)
    })
}
