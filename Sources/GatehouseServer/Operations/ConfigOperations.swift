import GatehouseAppStore
import GatehouseCore
import GatehouseRuntime
import GatehouseWire

/// `config.put` and `config.get` (PROTOCOL.md, "Configuration").
enum ConfigOperations {
    static let all: [Operation] = [put, get]

    static let put = Operation(name: "config.put", roles: [.server], body: .async { context throws(GatehouseError) in
        let config = try ProjectConfig(json: context.fields.object("config").object)
        try requireReadableAPIKey(config)
        let installed = try await context.project.putConfig(config)
        return Reply(["config": installed.value.json], after: installed.lsn)
    })

    /// The sdk key ships inside every app: it sees no `webhooks` or `integrations`, whose
    /// secrets would be anyone's.
    static let get = Operation(name: "config.get", roles: [.server, .sdk], body: .async { context throws(GatehouseError) in
        let config = await context.project.config()
        let shown = context.principal.role == .server ? config.value.json : config.value.sdkJSON
        return Reply(["config": shown], after: config.lsn, config: config.value)
    })

    /// A private key given must be one libcrypto reads as Apple's: refused with the config, not
    /// found out at the first request to Apple. The domain only checks its shape (it has no
    /// crypto); a key left out to keep the stored one was read when it was stored.
    private static func requireReadableAPIKey(_ config: ProjectConfig) throws(GatehouseError) {
        guard let appStore = config.stores.appStore, let key = appStore.apiKey, let pem = key.privateKeyPEM else { return }
        do {
            _ = try AppStoreServerAPIKey(issuerID: key.issuerID, keyID: key.keyID, privateKeyPEM: pem, bundleID: appStore.bundleID)
        } catch {
            let reason = error.reason.hasPrefix("private_key: ") ? String(error.reason.dropFirst("private_key: ".count)) : error.reason
            throw .badField("stores.app_store.api.private_key", reason)
        }
    }
}
