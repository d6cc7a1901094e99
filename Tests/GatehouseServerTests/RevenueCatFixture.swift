import GatehouseCore
import GatehouseHTTP
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// The RevenueCat-compatible REST as RevenueCat's SDKs and a backend use it (HTTP.md,
/// "RevenueCat-compatible REST"): an App Store project (``AppStoreFixture``: test chain, test
/// clock, the App Store and the test store enabled), its keys in the SDKs' forms, and one
/// keep-alive HTTP connection per key.
struct RevenueCatFixture {
    typealias A = AppStoreFixture

    let a: AppStoreFixture
    /// `appl_…`, as an iOS app is configured with.
    let appleKey: String
    let googleKey: String
    var secretKey: String { a.f.keys.secretKey }
    var server: TestServer { a.server }
    let client: TestHTTPClient

    static func run(
        restore: String = "transfer", gracePeriodMs: Int64 = 0, _ body: (RevenueCatFixture) async throws -> Void
    ) async throws {
        try await A.run(gracePeriodMs: gracePeriodMs, restore: restore) { a in
            let random = a.f.keys.publicKey.dropFirst("pk_acme_".count)
            let fixture = RevenueCatFixture(a: a, appleKey: "appl_acme_" + random, googleKey: "goog_acme_" + random,
                                            client: try HTTPListener.connect(a.server))
            try await body(fixture)
        }
    }

    /// A fresh install id, as the SDK mints it.
    static func installID(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return "$RCAnonymousID:" + String(repeating: "0", count: 32 - hex.count) + hex
    }

    struct Answer {
        let status: Int
        let body: JSONObject
        let response: HTTPParsedResponse

        var etag: String? { response.headers["X-RevenueCat-ETag"] }
        var subscriber: JSONObject? { body.object("subscriber") }
        /// RevenueCat's error code.
        var code: Int64? { body.int("code") }
    }

    /// `key`: nil sends none; the default is the Apple form of the public key.
    func request(
        _ method: String, _ path: String, key: String?? = .none, headers: [(String, String)] = [], body: JSONValue? = nil
    ) async throws -> Answer {
        var all = headers
        if let key = key ?? appleKey { all.append(("Authorization", "Bearer \(key)")) }
        if !all.contains(where: { $0.0 == "X-Platform" }) { all.append(("X-Platform", "iOS")) }
        let bytes = body.map { JSONWriter.serialize($0) } ?? []
        let response = try await client.request(method, path, headers: all, body: bytes)
        let parsed = response.body.isEmpty ? [:] : try HTTPListener.json(response)
        #expect(response.headers["X-RevenueCat-Request-Time"].flatMap { Int64($0) } != nil, "\(method) \(path): every answer carries it")
        return Answer(status: response.status, body: parsed, response: response)
    }

    func get(_ path: String, key: String?? = .none, etag: String? = nil) async throws -> Answer {
        try await request("GET", path, key: key, headers: etag.map { [("X-RevenueCat-ETag", $0)] } ?? [])
    }

    func post(_ path: String, _ body: JSONValue, key: String?? = .none, headers: [(String, String)] = []) async throws -> Answer {
        try await request("POST", path, key: key, headers: headers, body: body)
    }

    /// `GET /v1/subscribers/{id}`, the id written into the path as iOS does (only `/` and `%` escaped).
    func subscriber(_ id: String, key: String?? = .none, etag: String? = nil) async throws -> Answer {
        try await get("/v1/subscribers/\(Self.iosEscaped(id))", key: key, etag: etag)
    }

    /// What iOS's SDK leaves of an id in a path: `$` and `:` as they are.
    static func iosEscaped(_ id: String) -> String {
        var escaped = ""
        for character in id {
            switch character {
            case "%": escaped += "%25"
            case "/": escaped += "%2F"
            case " ": escaped += "%20"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// What Android's SDK makes of an id in a path: every reserved character escaped.
    static func androidEscaped(_ id: String) -> String {
        var escaped = ""
        for byte in id.utf8 {
            let scalar = Character(Unicode.Scalar(byte))
            if scalar.isLetter && byte < 128 || scalar.isNumber && byte < 128 || "-_.~".contains(scalar) {
                escaped.append(scalar)
            } else {
                escaped += (byte < 16 ? "%0" : "%") + String(byte, radix: 16, uppercase: true)
            }
        }
        return escaped
    }

    /// The profile the line protocol knows by `id` (a profile id or install id), as the backend reads it.
    func profile(_ id: String) async throws -> JSONObject {
        try await a.f.backend.call("profile.get", ["profile_id": .string(id)])
    }

    func profileCount() async throws -> Int64? {
        try await a.f.admin.call("project.get", ["project": "acme"]).object("project")?.int("profiles")
    }

    /// A StoreKit 2 signed transaction for this app, as the SDK posts it in `fetch_token`.
    func signedTransaction(
        _ id: String, product: String = "pro_monthly", type: String = A.subscriptionType, expiresMs: Int64? = nil,
        token: String? = nil, bundle: String = A.bundleID
    ) -> String {
        a.sign(a.transaction(id, product: product, type: type, expiresMs: expiresMs, token: token, bundle: bundle))
    }

    /// `POST /v1/receipts` of a signed transaction.
    func receipt(
        _ appUserID: String, _ token: String, restore: Bool = false, extra: JSONObject = [:], key: String?? = .none,
        platform: String = "iOS"
    ) async throws -> Answer {
        var body: JSONObject = ["app_user_id": .string(appUserID), "fetch_token": .string(token), "product_id": "pro_monthly"]
        if restore { body.append("is_restore", true) }
        body.append(contentsOf: extra)
        return try await post("/v1/receipts", .object(body), key: key, headers: [("X-Platform", platform)])
    }

    /// Every member of a subscriber object, in HTTP.md's table.
    static let subscriberKeys: Set<String> = [
        "original_app_user_id", "first_seen", "last_seen", "original_purchase_date", "original_application_version",
        "management_url", "entitlements", "subscriptions", "non_subscriptions", "other_purchases",
    ]

    /// An ISO 8601 UTC date as HTTP.md allows it: `YYYY-MM-DDTHH:MM:SSZ`, or with 3 fraction digits.
    static func isDate(_ value: JSONValue?) -> Bool {
        guard case .string(let text)? = value else { return false }
        let pattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/
        return text.wholeMatch(of: pattern) != nil
    }
}
