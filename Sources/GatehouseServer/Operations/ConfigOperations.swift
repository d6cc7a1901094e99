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
        try requireReachableTargets(config, allowingPrivate: context.core.configuration.outboundAllowPrivate)
        let installed = try await context.project.putConfig(config)
        return Reply(["config": installed.value.json], after: installed.lsn)
    })

    /// The sdk key ships inside every app: it sees no `webhooks` or `integrations`, and no
    /// Stripe secret, which would be anyone's.
    static let get = Operation(name: "config.get", roles: [.server, .sdk], body: .async { context throws(GatehouseError) in
        let config = await context.project.config()
        let shown = context.principal.role == .server ? config.value.json : config.value.sdkJSON
        return Reply(["config": shown], after: config.lsn, config: config.value)
    })

    /// Webhooks and pushes go over `https`; `http` only to loopback, and only on a server started
    /// with `--outbound-allow-private` (DESIGN.md, "Outbound delivery": safety). Where the name
    /// of an `https` host leads is checked on every connection, not here.
    private static func requireReachableTargets(_ config: ProjectConfig, allowingPrivate: Bool) throws(GatehouseError) {
        var targets = config.webhooks.enumerated().map { ("webhooks[\($0.offset)].url", $0.element.url) }
        if let url = config.integrations.oneSignal?.url { targets.append(("integrations.onesignal.url", url)) }
        for (field, url) in targets where url.lowercased().hasPrefix("http://") {
            guard allowingPrivate else {
                throw .badField(field, "must be https:// (http:// is for loopback on a server started with --outbound-allow-private)")
            }
            guard isLoopbackHTTP(url) else { throw .badField(field, "may be http:// only to loopback (127.0.0.1, [::1], localhost)") }
        }
    }

    private static func isLoopbackHTTP(_ url: String) -> Bool {
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.hasPrefix("[") ? String(authority.prefix { $0 != "]" }) + "]" : String(authority.prefix { $0 != ":" })
        return host == "localhost" || host == "[::1]" || host.hasPrefix("127.")
    }

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
