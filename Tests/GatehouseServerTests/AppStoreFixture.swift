import GatehouseAppStore
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// A project with the App Store enabled (`stores.app_store`: bundle ``bundleID``, sandbox) on a
/// server whose clock moves only when told to and which trusts a freshly generated three-level
/// test chain instead of Apple's root; the fixture signs transactions, renewal info and
/// notifications with that chain the way the App Store does. Built on ``StoreFixture``.
struct AppStoreFixture {
    static let bundleID = "com.example.gatehouse"
    static let appAppleID: Int64 = 1234
    static let day = StoreFixture.day
    static let subscriptionType = "Auto-Renewable Subscription"

    let f: StoreFixture
    let chain: AppStoreTestChain
    var server: TestServer { f.server }
    var startMs: Int64 { f.startMs }

    /// Runs `body` on a fresh server trusting a new chain, with the project configured.
    static func run(
        environment: String = "sandbox", gracePeriodMs: Int64 = 0, restore: String = "transfer",
        configure: (inout ServerConfiguration) -> Void = { _ in }, _ body: (AppStoreFixture) async throws -> Void
    ) async throws {
        let chain = try AppStoreTestChain()
        try await withTestServer({
            $0.testClock = true
            $0.appStoreRootCertificates = [chain.rootDER]
            configure(&$0)
        }) { server in
            let f = try await StoreFixture.make(server)
            try await f.putConfig(config(environment: environment, gracePeriodMs: gracePeriodMs, restore: restore))
            try await body(AppStoreFixture(f: f, chain: chain))
        }
    }

    /// `pro` from the subscriptions `pro_monthly` (COINS 100 on purchase, GEMS 10 on renewal) and
    /// `pro_yearly` (COINS 1,000 on both) and the non-consumable `lifetime`; the consumable
    /// `coins_500` grants COINS 500. `appStore: false` leaves the App Store disabled; `api` is
    /// its `stores.app_store.api`, the In-App Purchase key.
    static func config(
        environment: String = "sandbox", gracePeriodMs: Int64 = 0, restore: String = "transfer",
        appStore: Bool = true, bundleID: String = bundleID, api: JSONObject? = nil
    ) -> JSONValue {
        var stores: JSONObject = ["test": true]
        if appStore {
            var settings: JSONObject = [
                "bundle_id": .string(bundleID), "environment": .string(environment), "app_apple_id": .int(appAppleID),
            ]
            if let api { settings.append("api", .object(api)) }
            stores.append("app_store", .object(settings))
        }
        return [
            "entitlements": [["id": "pro"]],
            "currencies": [["code": "COINS", "name": "Coins"], ["code": "GEMS", "name": "Gems"]],
            "products": [
                ["id": "pro_monthly", "type": "subscription", "entitlements": ["pro"], "grants": [
                    ["currency": "COINS", "amount": 100, "on": "purchase"], ["currency": "GEMS", "amount": 10, "on": "renewal"],
                ]],
                ["id": "pro_yearly", "type": "subscription", "entitlements": ["pro"], "grants": [
                    ["currency": "COINS", "amount": 1000, "on": "both"],
                ]],
                ["id": "lifetime", "type": "non_consumable", "entitlements": ["pro"]],
                ["id": "coins_500", "type": "consumable", "grants": [["currency": "COINS", "amount": 500, "on": "purchase"]]],
            ],
            "grace_period_ms": .int(gracePeriodMs),
            "restore": .string(restore),
            "stores": .object(stores),
        ]
    }

    // MARK: Payloads, as Apple writes them

    /// A transaction (`JWSTransactionDecodedPayload`): a subscription term unless `type` says
    /// otherwise. `price` in milliunits; `more` adds or replaces fields.
    func transaction(
        _ id: String, original: String? = nil, product: String = "pro_monthly", type: String = subscriptionType,
        purchasedMs: Int64? = nil, expiresMs: Int64? = nil, token: String? = nil, price: Int64 = 9_990,
        ownership: String = "PURCHASED", environment: String = "Sandbox", bundle: String = bundleID, more: JSONObject = [:]
    ) -> JSONObject {
        let purchased = purchasedMs ?? startMs
        var payload: JSONObject = [
            "transactionId": .string(id), "originalTransactionId": .string(original ?? id), "bundleId": .string(bundle),
            "productId": .string(product), "purchaseDate": .int(purchased), "originalPurchaseDate": .int(purchased),
            "quantity": 1, "type": .string(type), "inAppOwnershipType": .string(ownership), "signedDate": .int(purchased),
            "environment": .string(environment), "price": .int(price), "currency": "USD", "storefront": "USA",
            "transactionReason": .string(id == (original ?? id) ? "PURCHASE" : "RENEWAL"),
        ]
        if type == Self.subscriptionType { payload["expiresDate"] = .int(expiresMs ?? purchased + 30 * Self.day) }
        if let token { payload["appAccountToken"] = .string(token) }
        for member in more.members { payload[member.key] = member.value }
        return payload
    }

    /// Renewal info (`JWSRenewalInfoDecodedPayload`).
    func renewalInfo(_ original: String, product: String = "pro_monthly", more: JSONObject = [:]) -> JSONObject {
        var payload: JSONObject = [
            "originalTransactionId": .string(original), "productId": .string(product), "autoRenewProductId": .string(product),
            "autoRenewStatus": 1, "environment": "Sandbox", "signedDate": .int(startMs),
        ]
        for member in more.members { payload[member.key] = member.value }
        return payload
    }

    func sign(_ payload: JSONObject) -> String { chain.sign(payload: payload) }

    /// A notification's `signedPayload`, its transaction and renewal info signed inside it.
    func notification(
        _ uuid: String, _ type: String, _ subtype: String? = nil, transaction: JSONObject? = nil,
        renewalInfo: JSONObject? = nil, signedDate: Int64? = nil, environment: String = "Sandbox", bundle: String = bundleID
    ) -> String {
        var data: JSONObject = [
            "appAppleId": .int(Self.appAppleID), "bundleId": .string(bundle), "bundleVersion": "1",
            "environment": .string(environment),
        ]
        if let transaction { data.append("signedTransactionInfo", .string(sign(transaction))) }
        if let renewalInfo { data.append("signedRenewalInfo", .string(sign(renewalInfo))) }
        var payload: JSONObject = ["notificationType": .string(type)]
        if let subtype { payload.append("subtype", .string(subtype)) }
        payload.append(contentsOf: [
            "notificationUUID": .string(uuid), "version": "2.0", "signedDate": .int(signedDate ?? startMs), "data": .object(data),
        ])
        return sign(payload)
    }

    // MARK: Requests

    func report(_ profileID: String, _ signedTransaction: String, via client: TestClient? = nil) async throws -> JSONObject {
        try await (client ?? f.backend).call("purchase.report", [
            "profile_id": .string(profileID), "store": "app_store", "signed_transaction": .string(signedTransaction),
        ])
    }

    func restore(_ profileID: String, _ signedTransactions: [String], via client: TestClient? = nil) async throws -> JSONObject {
        try await (client ?? f.backend).call("purchase.restore", [
            "profile_id": .string(profileID), "store": "app_store",
            "signed_transactions": .array(signedTransactions.map { .string($0) }),
        ])
    }

    /// `store.notify` with `signed_payload` (the bare JWS unless `value` says otherwise).
    func notify(_ signedPayload: String) async throws -> JSONObject {
        try await notify(value: .string(signedPayload))
    }

    func notify(value: JSONValue) async throws -> JSONObject {
        try await f.backend.call("store.notify", ["store": "app_store", "signed_payload": value])
    }

    /// `store.notify` that must apply; answers the owner it names.
    @discardableResult
    func notifyApplied(_ signedPayload: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String? {
        let answer = try await notify(signedPayload)
        #expect(answer.isSuccess, "\(answer)", sourceLocation: sourceLocation)
        #expect(answer["applied"] == true, "\(answer)", sourceLocation: sourceLocation)
        return answer.string("profile_id")
    }

    // MARK: Reading

    func get(_ profileID: String) async throws -> JSONObject { try await f.get(profileID) }

    func subscription(_ profileID: String, _ original: String) async throws -> JSONObject? {
        StoreFixture.subscription(try await get(profileID), original)
    }

    func entitlement(_ profileID: String) async throws -> JSONObject? {
        StoreFixture.entitlement(try await get(profileID))
    }

    func balance(_ profileID: String, _ currency: String = "COINS") async throws -> Int64? {
        try await get(profileID).object("currencies")?.int(currency)
    }

    /// The types of the purchase events (not currency movements) after `cursor`.
    func eventTypes(after cursor: Int64) async throws -> [String] {
        try await f.events(after: cursor).compactMap { $0.string("type") }.filter { $0 != "VIRTUAL_CURRENCY_TRANSACTION" }
    }
}
