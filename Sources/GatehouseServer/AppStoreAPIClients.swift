import GatehouseAppStore
import GatehouseBase
import GatehouseCore
import GatehouseOutbound
import Synchronization

/// The App Store Server API clients of the projects that hold an In-App Purchase key: one per
/// key and app, kept so that its token is signed once and reused for most of its life, and made
/// anew when the config's private key changes. Every client sends through the server's one
/// ``OutboundHTTPClient``.
final class AppStoreAPIClients: Sendable {
    /// Clients kept at most; past it the cache starts over (a client is cheap to make again).
    static let clientsMax = 1_024

    private struct Name: Hashable {
        let issuerID: String
        let keyID: String
        let bundleID: String
    }

    private let sender: RetryingSender
    private let settings: AppStoreServerAPIClient.Settings
    private let clients = Mutex<[Name: (privateKeyPEM: String, client: AppStoreServerAPIClient)]>([:])

    init(http: OutboundHTTPClient, configuration: ServerConfiguration, logger: Logger) {
        sender = RetryingSender(
            client: http, policy: configuration.appStoreAPIRetryPolicy, clock: configuration.appStoreAPIRetryClock,
            logger: logger)
        settings = AppStoreServerAPIClient.Settings(
            baseURLOverride: configuration.appStoreAPIBaseURL, requestTimeout: configuration.appStoreAPIRequestTimeout)
    }

    /// The client for `key` asking about the app `bundleID`.
    ///
    /// - Throws: When the private key cannot be read, which `config.put` refuses, so only a
    ///   config from elsewhere (an old snapshot, a restored tenant) can hold one.
    func client(for key: InAppPurchaseKey, bundleID: String) throws(AppStoreServerAPIKeyError) -> AppStoreServerAPIClient {
        guard let pem = key.privateKeyPEM else { throw AppStoreServerAPIKeyError(reason: "private_key: none stored") }
        let name = Name(issuerID: key.issuerID, keyID: key.keyID, bundleID: bundleID)
        if let kept = clients.withLock({ $0[name] }), kept.privateKeyPEM == pem { return kept.client }
        // Read outside the lock: libcrypto parses the key.
        let apiKey = try AppStoreServerAPIKey(issuerID: key.issuerID, keyID: key.keyID, privateKeyPEM: pem, bundleID: bundleID)
        let client = AppStoreServerAPIClient(key: apiKey, sender: sender, settings: settings)
        clients.withLock { clients in
            if clients.count >= Self.clientsMax { clients.removeAll() }
            clients[name] = (pem, client)
        }
        return client
    }
}
