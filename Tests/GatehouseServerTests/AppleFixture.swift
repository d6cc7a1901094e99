import GatehouseAppStore
import GatehouseOutbound
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// An ``AppStoreFixture`` whose server asks a local fake of Apple's App Store Server API
/// (``FakeAppStoreAPI``, checking tokens against the real clock, as Apple does) and whose
/// project holds the fake's In-App Purchase key. Retries are quick: three attempts, their waits
/// skipped (``VirtualRetryClock``).
struct AppleFixture {
    let a: AppStoreFixture
    let fake: FakeAppStoreAPI
    var f: StoreFixture { a.f }

    /// The fake's key as `stores.app_store.api` holds it.
    var api: JSONObject {
        ["issuer_id": .string(fake.issuerID), "key_id": .string(fake.keyID), "private_key": .string(fake.key.pem)]
    }

    static let retryPolicy = RetryPolicy(
        attemptsMax: 3, initialDelay: .milliseconds(10), delayMax: .milliseconds(10), deadline: .seconds(30))

    /// Points `configuration` at `baseURL`, with the quick retries.
    static func askApple(at baseURL: String, _ configuration: inout ServerConfiguration) {
        configuration.appStoreAPIBaseURL = baseURL
        configuration.appStoreAPIRetryPolicy = retryPolicy
        configuration.appStoreAPIRetryClock = VirtualRetryClock()
        configuration.appStoreAPIRequestTimeout = .seconds(10)
    }

    /// Runs `body` on a fresh server and fake. `withKey: false` leaves the key out of the config;
    /// `apiURL` sends the server's requests somewhere other than the fake.
    static func run(
        withKey: Bool = true, restore: String = "transfer", apiURL: String? = nil, pageSize: Int = FakeAppStoreAPI.defaultPageSize,
        _ body: (AppleFixture) async throws -> Void
    ) async throws {
        let fake = try FakeAppStoreAPI(
            bundleID: AppStoreFixture.bundleID, pageSize: pageSize, currentTimeMilliseconds: AppStoreVerifier.systemTimeMilliseconds)
        defer { fake.stop() }
        try await AppStoreFixture.run(restore: restore, configure: { askApple(at: apiURL ?? fake.baseURL, &$0) }) { a in
            let fixture = AppleFixture(a: a, fake: fake)
            if withKey { try await a.f.putConfig(AppStoreFixture.config(restore: restore, api: fixture.api)) }
            try await body(fixture)
        }
    }

    /// Serves `transactions`, signed by the fixture's chain, as the history found by each of
    /// their ids; answers them signed, in order.
    @discardableResult
    func history(_ transactions: [JSONObject]) -> [String] {
        let signed = transactions.map { a.sign($0) }
        fake.setHistory(signed, findableBy: transactions.compactMap { $0.string("transactionId") })
        return signed
    }
}
