import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// A project with the test store enabled on a server whose clock moves only when told to
/// (`testClock`), with a backend (secret key), an app (public key) and an operator connection.
/// Shared by the purchase suites of this target.
struct StoreFixture {
    static let day: Int64 = 86_400_000

    let server: TestServer
    let project: String
    let keys: (publicKey: String, secretKey: String)
    let backend: TestClient
    let sdk: TestClient
    let admin: TestClient
    /// The server's clock when the fixture was made (it stands still until `advance`).
    let startMs: Int64

    /// Entitlements `pro` and `extra`; subscriptions `pro_monthly`, `pro_yearly` (both `pro`) and
    /// `extra_monthly` (`extra`); the non-consumable `lifetime` (`pro`); the consumable `coins`.
    static func config(
        restore: String = "transfer", gracePeriodMs: Int64 = 0, login: String = "alias", testStore: Bool = true
    ) -> JSONValue {
        var config: JSONObject = [
            "entitlements": [["id": "pro"], ["id": "extra"]],
            "products": [
                ["id": "pro_monthly", "type": "subscription", "entitlements": ["pro"]],
                ["id": "pro_yearly", "type": "subscription", "entitlements": ["pro"]],
                ["id": "extra_monthly", "type": "subscription", "entitlements": ["extra"]],
                ["id": "lifetime", "type": "non_consumable", "entitlements": ["pro"]],
                ["id": "coins", "type": "consumable"],
            ],
            "login": .string(login),
            "restore": .string(restore),
            "grace_period_ms": .int(gracePeriodMs),
        ]
        if testStore { config.append("stores", ["test": true]) }
        return .object(config)
    }

    static func make(
        _ server: TestServer, project: String = "acme", restore: String = "transfer", gracePeriodMs: Int64 = 0,
        login: String = "alias", testStore: Bool = true
    ) async throws -> StoreFixture {
        let keys = try await server.createProject(project)
        let backend = try server.connect()
        let hello = try await backend.hello(keys.secretKey)
        let put = try await backend.call("config.put", [
            "config": config(restore: restore, gracePeriodMs: gracePeriodMs, login: login, testStore: testStore),
        ])
        #expect(put.isSuccess, "\(put)")
        let sdk = try server.connect()
        try await sdk.hello(keys.publicKey)
        return StoreFixture(server: server, project: project, keys: keys, backend: backend, sdk: sdk,
                            admin: try await server.admin(), startMs: try #require(hello.int("time_ms")))
    }

    /// The same project on `server` (after a restart), with fresh connections.
    func reconnected(to server: TestServer, project: String? = nil, keys: (publicKey: String, secretKey: String)? = nil)
        async throws -> StoreFixture
    {
        let keys = keys ?? self.keys
        let backend = try server.connect()
        let hello = try await backend.hello(keys.secretKey)
        let sdk = try server.connect()
        try await sdk.hello(keys.publicKey)
        return StoreFixture(server: server, project: project ?? self.project, keys: keys, backend: backend, sdk: sdk,
                            admin: try await server.admin(), startMs: try #require(hello.int("time_ms")))
    }

    // MARK: Requests

    /// `profile.create` by the backend; answers the id and the token.
    func create(_ customerUserID: String? = nil, token: String? = nil) async throws -> (id: String, token: String) {
        var parameters: JSONObject = [:]
        if let customerUserID { parameters.append("customer_user_id", .string(customerUserID)) }
        if let token { parameters.append("app_account_token", .string(token)) }
        let answer = try await backend.call("profile.create", parameters)
        guard answer.isSuccess, let profile = answer.object("profile"), let id = profile.string("profile_id"),
            let token = profile.string("app_account_token")
        else { throw TestClientError.failed(answer) }
        return (id, token)
    }

    func report(_ profileID: String, _ transaction: JSONValue, via client: TestClient? = nil) async throws -> JSONObject {
        try await (client ?? backend).call("purchase.report", [
            "profile_id": .string(profileID), "store": "test", "transaction": transaction,
        ])
    }

    func restore(_ profileID: String, _ transactions: [JSONValue], via client: TestClient? = nil) async throws -> JSONObject {
        try await (client ?? backend).call("purchase.restore", [
            "profile_id": .string(profileID), "store": "test", "transactions": .array(transactions),
        ])
    }

    func notify(_ event: JSONValue) async throws -> JSONObject {
        try await backend.call("store.notify", ["store": "test", "event": event])
    }

    /// The profile document as the backend reads it (without the request's `id`, so two
    /// readings compare).
    func get(_ profileID: String) async throws -> JSONObject {
        var answer = try await backend.call("profile.get", ["profile_id": .string(profileID)])
        guard answer.isSuccess else { throw TestClientError.failed(answer) }
        answer["id"] = nil
        return answer
    }

    /// The whole event feed after `cursor`, oldest first.
    func events(after cursor: Int64 = 0) async throws -> [JSONObject] {
        var result: [JSONObject] = []
        var cursor = cursor
        while true {
            let page = try await backend.call("events", ["cursor": .int(cursor), "limit": 1000])
            guard page.isSuccess, let events = page["events"]?.arrayValue else { throw TestClientError.failed(page) }
            if events.isEmpty { return result }
            result.append(contentsOf: events.compactMap(\.objectValue))
            cursor = try #require(page.int("cursor"))
        }
    }

    /// The newest cursor of the feed (0 when it is empty).
    func feedCursor() async throws -> Int64 {
        try await events().last?.int("cursor") ?? 0
    }

    /// Moves the server's clock; answers the new time.
    @discardableResult
    func advance(_ ms: Int64) async throws -> Int64 {
        let answer = try await admin.call("clock.advance", ["ms": .int(ms)])
        guard answer.isSuccess, let now = answer.int("time_ms") else { throw TestClientError.failed(answer) }
        return now
    }

    func putConfig(_ config: JSONValue) async throws {
        let answer = try await backend.call("config.put", ["config": config])
        guard answer.isSuccess else { throw TestClientError.failed(answer) }
    }

    // MARK: Building store data

    /// A test subscription transaction.
    static func subscription(
        _ id: String, original: String? = nil, product: String = "pro_monthly", purchasedMs: Int64, expiresMs: Int64,
        token: String? = nil, price: Double = 9.99
    ) -> JSONValue {
        var object: JSONObject = [
            "transaction_id": .string(id), "original_transaction_id": .string(original ?? id), "product_id": .string(product),
            "purchased_ms": .int(purchasedMs), "expires_ms": .int(expiresMs),
        ]
        if let token { object.append("app_account_token", .string(token)) }
        object.append("price", .double(price))
        object.append("currency", "USD")
        return .object(object)
    }

    /// A test one-time transaction (`lifetime` is a non-consumable).
    static func oneTime(_ id: String, product: String = "lifetime", purchasedMs: Int64, token: String? = nil) -> JSONValue {
        var object: JSONObject = ["transaction_id": .string(id), "product_id": .string(product), "purchased_ms": .int(purchasedMs)]
        if let token { object.append("app_account_token", .string(token)) }
        object.append("price", 4.99)
        return .object(object)
    }

    /// A test store event: `type` and the `original_transaction_id`, with more fields.
    static func event(_ notificationID: String, _ type: String, _ original: String, atMs: Int64? = nil,
                      _ more: JSONObject = [:]) -> JSONValue
    {
        var object: JSONObject = [
            "notification_id": .string(notificationID), "type": .string(type), "original_transaction_id": .string(original),
        ]
        if let atMs { object.append("event_ms", .int(atMs)) }
        object.append(contentsOf: more)
        return .object(object)
    }

    // MARK: Reading documents

    static func id(_ answer: JSONObject) -> String? { answer.object("profile")?.string("profile_id") }

    static func subscription(_ document: JSONObject, _ original: String) -> JSONObject? {
        document.object("subscriptions")?.object(original)
    }

    static func entitlement(_ document: JSONObject, _ id: String = "pro") -> JSONObject? {
        document.object("entitlements")?.object(id)
    }

    /// The parts of a document that purchases and time change (not `profile`, not `cursor`).
    static func holdings(_ document: JSONObject) -> [JSONValue?] {
        [document["entitlements"], document["subscriptions"], document["purchases"]]
    }
}

/// Purchases, the test store, time and grants over real connections (PROTOCOL.md, "Purchases
/// and the store"; DESIGN.md, "Who owns a purchase", "Subscription life and entitlements").
@Suite struct Purchases {
    typealias F = StoreFixture
    static let day = StoreFixture.day

    // MARK: Reports and the document

    @Test func reportOfASubscriptionAnswersTheDocumentAndFeedsInitialPurchase() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let alice = try await f.create("alice")
            let now = f.startMs
            let expires = now + 30 * Self.day
            let feedBefore = try await f.feedCursor()
            let answer = try await f.report(alice.id, [
                "transaction_id": "t1", "original_transaction_id": "t1", "product_id": "pro_monthly",
                "purchased_ms": .int(now), "expires_ms": .int(expires), "price": 9.99, "currency": "USD",
                "period_type": "trial", "environment": "production",
            ], via: f.sdk)
            #expect(answer.isSuccess, "\(answer)")
            #expect(answer.keys == ["id", "ok", "profile", "entitlements", "subscriptions", "purchases", "currencies", "cursor"])
            #expect(F.id(answer) == alice.id)
            #expect(answer["entitlements"] == ["pro": [
                "is_active": true, "product_id": "pro_monthly", "store": "test", "expires_ms": .int(expires),
                "grace_expires_ms": nil, "will_renew": true, "period_type": "trial", "billing_issue": false,
            ]])
            #expect(answer["subscriptions"] == ["t1": [
                "product_id": "pro_monthly", "store": "test", "status": "active", "expires_ms": .int(expires),
                "will_renew": true, "period_type": "trial", "environment": "production",
            ]])
            #expect(answer["purchases"] == [])
            #expect(answer["currencies"] == .object(JSONObject()))

            let events = try await f.events(after: feedBefore)
            #expect(events.count == 1)
            let event = try #require(events.first)
            #expect(Array(event.keys.prefix(6)) == ["id", "cursor", "type", "profile_id", "customer_user_id", "at_ms"])
            #expect(event.string("type") == "INITIAL_PURCHASE")
            #expect(event.string("profile_id") == alice.id)
            #expect(event.string("customer_user_id") == "alice")
            #expect(event.int("at_ms") == now)
            #expect(event.int("cursor") == answer.int("cursor"), "the profile's cursor is the change's number")
            #expect(event.string("original_transaction_id") == "t1")
            #expect(event.string("product_id") == "pro_monthly")
            #expect(event.int("expires_ms") == expires)
            // The same report again changes nothing and feeds nothing.
            let again = try await f.report(alice.id, F.subscription("t1", purchasedMs: now, expiresMs: expires))
            #expect(again.isSuccess)
            #expect(again.int("cursor") == answer.int("cursor"))
            #expect(try await f.events(after: feedBefore).count == 1)
            // A report of a new term of it is a renewal.
            let renewed = try await f.report(alice.id, F.subscription("t1-2", original: "t1", purchasedMs: expires, expiresMs: expires + Self.day))
            #expect(F.subscription(renewed, "t1")?.int("expires_ms") == expires + Self.day)
            #expect(try await f.events(after: feedBefore).map { $0.string("type") } == ["INITIAL_PURCHASE", "RENEWAL"])
        }
    }

    @Test func reportOfANonConsumableAnswersThePurchaseAndFeedsNonRenewingPurchase() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let bob = try await f.create()
            let now = f.startMs
            let answer = try await f.report(bob.id, F.oneTime("l1", purchasedMs: now - 5), via: f.sdk)
            #expect(answer.isSuccess, "\(answer)")
            #expect(answer["purchases"] == [[
                "transaction_id": "l1", "product_id": "lifetime", "store": "test", "purchased_ms": .int(now - 5), "refunded": false,
            ]])
            #expect(answer["subscriptions"] == .object(JSONObject()))
            #expect(answer["entitlements"] == ["pro": [
                "is_active": true, "product_id": "lifetime", "store": "test", "expires_ms": nil, "grace_expires_ms": nil,
                "will_renew": false, "period_type": "normal", "billing_issue": false,
            ]])
            // A consumable is listed but grants no entitlement.
            let coins = try await f.report(bob.id, F.oneTime("c1", product: "coins", purchasedMs: now))
            #expect(coins["purchases"]?.arrayValue?.count == 2)
            #expect(coins["entitlements"]?.objectValue?.keys == ["pro"])

            let events = try await f.events()
            let purchases = events.filter { $0.string("type") == "NON_RENEWING_PURCHASE" }
            #expect(purchases.count == 2)
            #expect(purchases.allSatisfy { $0.string("profile_id") == bob.id && $0["customer_user_id"] == .null })
            #expect(purchases.first?.string("transaction_id") == "l1")
            #expect(Set(events.compactMap { $0.string("id") }).count == events.count, "event ids are unique")
            #expect(try await f.events() == events, "event ids are stable")
        }
    }

    @Test func aSubscriptionAndAOneTimePurchaseSitSideBySide() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let carol = try await f.create()
            let now = f.startMs
            _ = try await f.report(carol.id, F.subscription("s1", product: "extra_monthly", purchasedMs: now, expiresMs: now + Self.day))
            _ = try await f.report(carol.id, F.subscription("s0", purchasedMs: now, expiresMs: now + Self.day))
            let answer = try await f.report(carol.id, F.oneTime("l1", purchasedMs: now))
            #expect(answer.object("entitlements")?.keys == ["extra", "pro"])
            #expect(answer.object("subscriptions")?.keys == ["s0", "s1"])
            // Two live sources of pro: the non-consumable lasts for life.
            #expect(F.entitlement(answer)?.string("product_id") == "lifetime")
            #expect(F.entitlement(answer, "extra")?.string("product_id") == "extra_monthly")
        }
    }

    // MARK: Ownership

    @Test func aTransactionCarryingAnotherProfilesTokenGoesToThatProfile() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let owner = try await f.create()
            let reporter = try await f.create()
            let now = f.startMs
            let answer = try await f.report(reporter.id, F.subscription("t1", purchasedMs: now, expiresMs: now + Self.day,
                                                                        token: owner.token.uppercased()))
            #expect(answer.isSuccess, "\(answer)")
            #expect(F.id(answer) == reporter.id)
            #expect(answer["subscriptions"] == .object(JSONObject()), "the reporter does not get it")
            #expect(F.subscription(try await f.get(owner.id), "t1")?.string("status") == "active")
            #expect(F.entitlement(try await f.get(owner.id))?["is_active"] == true)
            let event = try #require(try await f.events().first { $0.string("type") == "INITIAL_PURCHASE" })
            #expect(event.string("profile_id") == owner.id)
            // A notification answers the owner.
            let renewal = try await f.notify(F.event("n1", "renewal", "t1", [
                "transaction_id": "t1-2", "expires_ms": .int(now + 2 * Self.day), "price": 9.99,
            ]))
            #expect(renewal["applied"] == true)
            #expect(renewal.string("profile_id") == owner.id)
        }
    }

    @Test func anUnownedPurchaseAttachesToTheProfileThatTakesItsToken() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let now = f.startMs
            let token = "3f2e1d0c-9b8a-4776-8554-433221100fed"
            let purchase = try await f.notify(F.event("n1", "purchase", "t1", [
                "transaction_id": "t1", "product_id": "pro_monthly", "purchased_ms": .int(now),
                "expires_ms": .int(now + Self.day), "app_account_token": .string(token), "price": 9.99,
            ]))
            #expect(purchase.isSuccess, "\(purchase)")
            #expect(purchase["applied"] == true)
            #expect(purchase["profile_id"] == .null, "held unowned")
            let unowned = try #require(try await f.events().first { $0.string("type") == "INITIAL_PURCHASE" })
            #expect(unowned["profile_id"] == .null)
            // A later renewal of the unowned purchase still has no owner.
            let renewal = try await f.notify(F.event("n2", "renewal", "t1", [
                "transaction_id": "t1-2", "expires_ms": .int(now + 2 * Self.day), "price": 9.99,
            ]))
            #expect(renewal["applied"] == true)
            #expect(renewal["profile_id"] == .null)

            let created = try await f.sdk.call("profile.create", ["app_account_token": .string(token)])
            #expect(created.isSuccess, "\(created)")
            let id = try #require(F.id(created))
            #expect(F.subscription(created, "t1")?.int("expires_ms") == now + 2 * Self.day, "the creating answer shows it")
            #expect(F.entitlement(created)?["is_active"] == true)
            #expect(F.subscription(try await f.get(id), "t1") != nil)
            // From now on notifications name the owner.
            let cancel = try await f.notify(F.event("n3", "cancel", "t1"))
            #expect(cancel.string("profile_id") == id)
        }
    }

    @Test func anUnownedPurchaseAttachesWhenAnExistingProfileTakesItsToken() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let now = f.startMs
            let token = "00000000-1111-4222-8333-444444444444"
            #expect(try await f.notify(F.event("n1", "purchase", "l1", [
                "transaction_id": "l1", "product_id": "lifetime", "app_account_token": .string(token),
            ]))["profile_id"] == .null)
            let anonymous = try await f.create()
            let answer = try await f.sdk.call("profile.identify", [
                "profile_id": .string(anonymous.id), "customer_user_id": "dora", "app_account_token": .string(token),
            ])
            #expect(answer.isSuccess, "\(answer)")
            #expect(answer["purchases"]?.arrayValue?.first?.objectValue?.string("transaction_id") == "l1")
            #expect(answer["purchases"]?.arrayValue?.first?.objectValue?.int("purchased_ms") == now, "purchased_ms defaults to the server clock")
        }
    }

    @Test func restoreClaimsAnUnownedPurchase() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let now = f.startMs
            // No token at all: only a restore can claim it.
            #expect(try await f.notify(F.event("n1", "purchase", "t1", [
                "transaction_id": "t1", "product_id": "pro_monthly", "purchased_ms": .int(now), "expires_ms": .int(now + Self.day),
            ]))["profile_id"] == .null)
            let erin = try await f.create()
            let feedBefore = try await f.feedCursor()
            let answer = try await f.restore(erin.id, [F.subscription("t1", purchasedMs: now, expiresMs: now + Self.day)], via: f.sdk)
            #expect(answer.isSuccess, "\(answer)")
            #expect(F.subscription(answer, "t1")?.string("status") == "active")
            #expect(answer["transferred_from"] == [])
            #expect(answer["kept_by_other"] == [])
            #expect(Array(answer.keys.suffix(2)) == ["transferred_from", "kept_by_other"])
            #expect(try await f.events(after: feedBefore).allSatisfy { $0.string("type") != "TRANSFER" })
            #expect(try await f.notify(F.event("n2", "cancel", "t1"))["profile_id"] == .string(erin.id))
        }
    }

    @Test func aStoreNotificationNeverMovesAnOwnedPurchase() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let owner = try await f.create()
            let other = try await f.create()
            let s = f.startMs
            // A purchase notification carrying a profile's token is owned at once.
            let first = try await f.notify(F.event("n1", "purchase", "t1", [
                "transaction_id": "t1", "product_id": "pro_monthly", "expires_ms": .int(s + Self.day),
                "app_account_token": .string(owner.token),
            ]))
            #expect(first.string("profile_id") == owner.id)
            let bought = try #require(try await f.events().last)
            #expect(bought.string("type") == "INITIAL_PURCHASE")
            #expect(bought.string("profile_id") == owner.id)
            // A later purchase notification of it with another profile's token does not move it.
            let second = try await f.notify(F.event("n2", "purchase", "t1", [
                "transaction_id": "t1-b", "product_id": "pro_monthly", "expires_ms": .int(s + 2 * Self.day),
                "app_account_token": .string(other.token),
            ]))
            #expect(second["applied"] == true)
            #expect(second.string("profile_id") == owner.id)
            #expect(F.subscription(try await f.get(owner.id), "t1")?.int("expires_ms") == s + 2 * Self.day)
            #expect(try await f.get(other.id)["subscriptions"] == .object(JSONObject()))
            #expect(try await f.events().allSatisfy { $0.string("type") != "TRANSFER" })
        }
    }

    @Test func aTransactionCarryingAMergedAliasTokenGoesToTheProfileItMergedInto() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server, login: "alias")
            let customer = try await f.create("erin")
            let anonymous = try await f.create()
            #expect(try await f.backend.call("profile.identify", [
                "profile_id": .string(anonymous.id), "customer_user_id": "erin",
            ])["merged_from"] == [.string(anonymous.id)])
            let s = f.startMs
            let answer = try await f.notify(F.event("n1", "purchase", "l1", [
                "transaction_id": "l1", "product_id": "lifetime", "app_account_token": .string(anonymous.token),
            ]))
            #expect(answer.string("profile_id") == customer.id)
            let reporter = try await f.create()
            #expect(try await f.report(reporter.id, F.subscription("t1", purchasedMs: s, expiresMs: s + Self.day,
                                                                   token: anonymous.token)).isSuccess)
            let document = try await f.get(customer.id)
            #expect(document["purchases"]?.arrayValue?.count == 1)
            #expect(F.subscription(document, "t1") != nil)
        }
    }

    @Test func aRestoreCarryingOneNewPurchaseTwiceLeavesItWithItsTokensHolder() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server, restore: "transfer")
            let holder = try await f.create()
            let reporter = try await f.create()
            let s = f.startMs
            let term1 = F.subscription("t1", purchasedMs: s, expiresMs: s + Self.day, token: holder.token)
            let term2 = F.subscription("t1-2", original: "t1", purchasedMs: s + Self.day, expiresMs: s + 2 * Self.day, token: holder.token)
            let answer = try await f.restore(reporter.id, [term1, term2, term1, F.oneTime("l1", purchasedMs: s, token: holder.token),
                                                           F.oneTime("l1", purchasedMs: s, token: holder.token)])
            #expect(answer.isSuccess, "\(answer)")
            #expect(answer["transferred_from"] == [], "a purchase new to the server is first owned by its token's holder")
            #expect(answer["subscriptions"] == .object(JSONObject()))
            #expect(answer["purchases"] == [])
            let document = try await f.get(holder.id)
            #expect(F.subscription(document, "t1")?.int("expires_ms") == s + 2 * Self.day)
            #expect(document["purchases"]?.arrayValue?.count == 1)
            #expect(try await f.events().allSatisfy { $0.string("type") != "TRANSFER" })
        }
    }

    @Test func aProfileThatLostAPurchaseStillListsTheEntitlementAsInactive() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server, restore: "transfer")
            let first = try await f.create()
            let second = try await f.create()
            let s = f.startMs
            let transaction = F.subscription("t1", purchasedMs: s, expiresMs: s + Self.day)
            #expect(F.entitlement(try await f.report(first.id, transaction))?["is_active"] == true)
            #expect(try await f.restore(second.id, [transaction])["transferred_from"] == [.string(first.id)])
            let document = try await f.get(first.id)
            #expect(document["subscriptions"] == .object(JSONObject()))
            #expect(document.object("entitlements")?.keys == ["pro"], "\(document)")
            #expect(F.entitlement(document)?["is_active"] == false)
        }
    }

    // MARK: The restore setting

    @Test func restoreUnderTransferMovesThePurchaseWithOneTransferEvent() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server, restore: "transfer")
            let first = try await f.create("first")
            let second = try await f.create("second")
            let now = f.startMs
            let transaction = F.subscription("t1", purchasedMs: now, expiresMs: now + Self.day)
            #expect(try await f.report(first.id, transaction).isSuccess)
            let feedBefore = try await f.feedCursor()
            let firstCursor = try #require(try await f.get(first.id).int("cursor"))

            let answer = try await f.restore(second.id, [transaction, F.oneTime("none-known", purchasedMs: now)])
            #expect(answer.isSuccess, "\(answer)")
            #expect(F.subscription(answer, "t1")?.string("status") == "active")
            #expect(answer["transferred_from"] == [.string(first.id)])
            #expect(answer["kept_by_other"] == [])
            let firstDocument = try await f.get(first.id)
            #expect(firstDocument["subscriptions"] == .object(JSONObject()), "the first profile loses it")
            #expect(F.entitlement(firstDocument)?["is_active"] != true)
            #expect((firstDocument.int("cursor") ?? 0) > firstCursor, "losing a purchase is a change")

            let events = try await f.events(after: feedBefore)
            let transfers = events.filter { $0.string("type") == "TRANSFER" }
            #expect(transfers.count == 1)
            let transfer = try #require(transfers.first)
            #expect(transfer["transferred_from"] == [.string(first.id)])
            #expect(transfer["transferred_to"] == [.string(second.id)])
            #expect(transfer.string("profile_id") == second.id)
            #expect(events.filter { $0.string("type") == "INITIAL_PURCHASE" }.isEmpty, "a moved purchase is not bought again")

            // A report moves it back just the same.
            let back = try await f.report(first.id, transaction)
            #expect(F.subscription(back, "t1") != nil)
            #expect(try await f.get(second.id)["subscriptions"] == .object(JSONObject()))
            #expect(try await f.notify(F.event("n1", "cancel", "t1"))["profile_id"] == .string(first.id))
        }
    }

    @Test func restoreUnderTransferIfNoActiveKeepsItWhileTheOwnerIsActive() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server, restore: "transfer_if_no_active")
            let first = try await f.create()
            let second = try await f.create()
            let now = f.startMs
            let transaction = F.subscription("t1", purchasedMs: now, expiresMs: now + 1000)
            #expect(try await f.report(first.id, transaction).isSuccess)
            let firstBefore = try await f.get(first.id)
            let feedBefore = try await f.feedCursor()

            let restored = try await f.restore(second.id, [transaction])
            #expect(restored.isSuccess, "\(restored)")
            #expect(restored["kept_by_other"] == ["t1"])
            #expect(restored["transferred_from"] == [])
            #expect(restored["subscriptions"] == .object(JSONObject()))
            let reported = try await f.report(second.id, transaction)
            #expect(reported.errorCode == .ownedByOther, "\(reported)")
            #expect(try await f.get(first.id) == firstBefore)
            #expect(try await f.events(after: feedBefore).isEmpty)

            // Once the owner's subscription has expired it moves.
            try await f.advance(1000)
            let expiry = try await f.events(after: feedBefore)
            #expect(expiry.map { $0.string("type") } == ["EXPIRATION"])
            let moved = try await f.restore(second.id, [transaction])
            #expect(moved["transferred_from"] == [.string(first.id)])
            #expect(moved["kept_by_other"] == [])
            #expect(F.subscription(moved, "t1")?.string("status") == "expired")
            #expect(try await f.get(first.id)["subscriptions"] == .object(JSONObject()))
        }
    }

    @Test func transferIfNoActiveLooksAtEverySubscriptionButNotAtOneTimePurchases() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server, restore: "transfer_if_no_active")
            let first = try await f.create()
            let second = try await f.create()
            let now = f.startMs
            // The owner has a lifetime purchase only: one-time purchases never block.
            #expect(try await f.report(first.id, F.oneTime("l1", purchasedMs: now)).isSuccess)
            let moved = try await f.restore(second.id, [F.oneTime("l1", purchasedMs: now)])
            #expect(moved["transferred_from"] == [.string(first.id)])
            // An active subscription of another product blocks the one-time purchase going back.
            #expect(try await f.report(second.id, F.subscription("x1", product: "extra_monthly", purchasedMs: now,
                                                                 expiresMs: now + Self.day)).isSuccess)
            let kept = try await f.restore(first.id, [F.oneTime("l1", purchasedMs: now)])
            #expect(kept["kept_by_other"] == ["l1"])
            #expect(try await f.report(first.id, F.oneTime("l1", purchasedMs: now)).errorCode == .ownedByOther)
        }
    }

    @Test func restoreUnderKeepChangesNothing() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server, restore: "keep")
            let first = try await f.create()
            let second = try await f.create()
            let now = f.startMs
            let transaction = F.subscription("t1", purchasedMs: now, expiresMs: now + Self.day)
            #expect(try await f.report(first.id, transaction).isSuccess)
            // Even an expired owner keeps it under `keep`.
            try await f.advance(Self.day)
            let firstBefore = try await f.get(first.id)
            let secondBefore = try await f.get(second.id)
            let eventsBefore = try await f.events()

            let reported = try await f.report(second.id, transaction, via: f.sdk)
            #expect(reported.errorCode == .ownedByOther, "\(reported)")
            let restored = try await f.restore(second.id, [transaction])
            #expect(restored["kept_by_other"] == ["t1"])
            #expect(restored["transferred_from"] == [])
            #expect(restored["subscriptions"] == .object(JSONObject()))
            #expect(try await f.get(first.id) == firstBefore)
            #expect(try await f.get(second.id) == secondBefore)
            #expect(try await f.events() == eventsBefore)
        }
    }

    // MARK: Store notifications

    @Test func everyNotificationTypeMovesTheSubscriptionAndFeedsItsEvent() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let owner = try await f.create("owner")
            let s = f.startMs
            #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + 30 * Self.day)).isSuccess)
            var cursor = try await f.feedCursor()
            var documentCursor = try #require(try await f.get(owner.id).int("cursor"))
            var step = 0

            /// Sends one event, dated one millisecond after the last, and answers the owner's
            /// document; checks the one event it feeds.
            func send(_ type: String, _ more: JSONObject = [:], feeds expected: String) async throws -> JSONObject {
                step += 1
                let answer = try await f.notify(F.event("n\(step)", type, "t1", atMs: s + Int64(step), more))
                #expect(answer.isSuccess, "\(type): \(answer)")
                #expect(answer["applied"] == true)
                #expect(answer.string("profile_id") == owner.id)
                let events = try await f.events(after: cursor)
                #expect(events.map { $0.string("type") } == [expected], "\(type)")
                let event = try #require(events.first)
                #expect(event.string("profile_id") == owner.id)
                #expect(event.string("customer_user_id") == "owner")
                #expect(event.string("original_transaction_id") == "t1")
                cursor = try #require(event.int("cursor"))
                let document = try await f.get(owner.id)
                let next = try #require(document.int("cursor"))
                #expect(next > documentCursor, "\(type) moves the profile's cursor")
                documentCursor = next
                return document
            }

            var d = try await send("renewal", ["transaction_id": "t1-2", "expires_ms": .int(s + 60 * Self.day), "price": 9.99],
                                   feeds: "RENEWAL")
            #expect(F.subscription(d, "t1")?.int("expires_ms") == s + 60 * Self.day)
            #expect(F.entitlement(d)?.int("expires_ms") == s + 60 * Self.day)

            d = try await send("cancel", feeds: "CANCELLATION")
            #expect(F.subscription(d, "t1")?["will_renew"] == false)
            #expect(F.subscription(d, "t1")?.string("status") == "active")
            #expect(F.entitlement(d)?["will_renew"] == false)
            #expect(F.entitlement(d)?["is_active"] == true)

            d = try await send("uncancel", feeds: "UNCANCELLATION")
            #expect(F.subscription(d, "t1")?["will_renew"] == true)
            #expect(F.entitlement(d)?["will_renew"] == true)

            let grace = s + 65 * Self.day
            d = try await send("billing_issue", ["grace_expires_ms": .int(grace)], feeds: "BILLING_ISSUE")
            #expect(F.subscription(d, "t1")?.string("status") == "grace")
            #expect(F.entitlement(d)?["is_active"] == true)
            #expect(F.entitlement(d)?["billing_issue"] == true)
            #expect(F.entitlement(d)?.int("grace_expires_ms") == grace)

            d = try await send("recover", feeds: "RENEWAL")
            #expect(F.subscription(d, "t1")?.string("status") == "active")
            #expect(F.subscription(d, "t1")?.int("expires_ms") == s + 60 * Self.day, "no new term")
            #expect(F.entitlement(d)?["billing_issue"] == false)
            #expect(F.entitlement(d)?["grace_expires_ms"] == .null)

            d = try await send("billing_issue", feeds: "BILLING_ISSUE")
            #expect(F.subscription(d, "t1")?.string("status") == "billing_retry", "no grace named and grace_period_ms 0")
            #expect(F.entitlement(d)?["is_active"] == false)
            #expect(F.entitlement(d)?["billing_issue"] == true)
            #expect(F.entitlement(d)?["grace_expires_ms"] == .null)

            d = try await send("recover", ["transaction_id": "t1-3", "expires_ms": .int(s + 90 * Self.day), "price": 9.99],
                               feeds: "RENEWAL")
            #expect(F.subscription(d, "t1")?.string("status") == "active")
            #expect(F.subscription(d, "t1")?.int("expires_ms") == s + 90 * Self.day)
            #expect(F.entitlement(d)?["is_active"] == true)
            #expect(F.entitlement(d)?["billing_issue"] == false)

            d = try await send("product_change", ["new_product_id": "pro_yearly"], feeds: "PRODUCT_CHANGE")
            #expect(F.subscription(d, "t1")?.string("product_id") == "pro_yearly")
            #expect(F.entitlement(d)?.string("product_id") == "pro_yearly")

            d = try await send("refund", ["transaction_id": "t1-3", "fraction": 0.5], feeds: "REFUND")
            #expect(F.subscription(d, "t1")?.string("status") == "refunded")
            #expect(F.entitlement(d)?["is_active"] == false)

            d = try await send("refund_reversed", ["transaction_id": "t1-3"], feeds: "REFUND_REVERSED")
            #expect(F.subscription(d, "t1")?.string("status") == "active")
            #expect(F.entitlement(d)?["is_active"] == true)

            d = try await send("expire", feeds: "EXPIRATION")
            #expect(F.subscription(d, "t1")?.string("status") == "expired")
            #expect(F.entitlement(d)?["is_active"] == false)
            #expect(F.entitlement(d)?.string("product_id") == "pro_yearly", "a lapsed entitlement stays listed")

            // A resubscribe: a store purchase of a known subscription with a new term.
            d = try await send("renewal", ["transaction_id": "t1-4", "expires_ms": .int(s + 120 * Self.day)], feeds: "RENEWAL")
            #expect(F.subscription(d, "t1")?.string("status") == "active")

            d = try await send("revoke", feeds: "EXPIRATION")
            #expect(F.subscription(d, "t1")?.string("status") == "revoked")
            #expect(F.entitlement(d)?["is_active"] == false)
            #expect(try await f.events().last?.string("reason") == "revoked")
            let all = try await f.events()
            #expect(Set(all.compactMap { $0.string("id") }).count == all.count)
        }
    }

    @Test func aRefundOfAnOlderTermDoesNotEndTheCurrentOne() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let owner = try await f.create()
            let s = f.startMs
            #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + Self.day)).isSuccess)
            #expect(try await f.notify(F.event("n1", "renewal", "t1", atMs: s + 1, [
                "transaction_id": "t1-2", "expires_ms": .int(s + 2 * Self.day), "price": 9.99,
            ]))["applied"] == true)
            let feed = try await f.feedCursor()
            #expect(try await f.notify(F.event("n2", "refund", "t1", atMs: s + 2, ["transaction_id": "t1"]))["applied"] == true)
            let d = try await f.get(owner.id)
            #expect(F.subscription(d, "t1")?.string("status") == "active")
            #expect(F.entitlement(d)?["is_active"] == true)
            #expect(try await f.events(after: feed).map { $0.string("type") } == ["REFUND"])
        }
    }

    @Test func billingIssueWithoutAGraceDateUsesTheConfiguredGracePeriod() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server, gracePeriodMs: 3 * Self.day)
            let owner = try await f.create()
            let s = f.startMs
            let expires = s + Self.day
            #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: expires)).isSuccess)
            #expect(try await f.notify(F.event("n1", "billing_issue", "t1", atMs: s + 1))["applied"] == true)
            var d = try await f.get(owner.id)
            #expect(F.subscription(d, "t1")?.string("status") == "grace")
            #expect(F.entitlement(d)?.int("grace_expires_ms") == expires + 3 * Self.day)
            #expect(F.entitlement(d)?["is_active"] == true)
            #expect(F.entitlement(d)?["billing_issue"] == true)

            // Past the term's end, still entitled in grace; at the grace's end, expired.
            try await f.advance(2 * Self.day)
            d = try await f.get(owner.id)
            #expect(F.subscription(d, "t1")?.string("status") == "grace")
            #expect(F.entitlement(d)?["is_active"] == true)
            let feed = try await f.feedCursor()
            try await f.advance(2 * Self.day)
            d = try await f.get(owner.id)
            #expect(F.subscription(d, "t1")?.string("status") == "expired")
            #expect(F.entitlement(d)?["is_active"] == false)
            let expiry = try await f.events(after: feed)
            #expect(expiry.map { $0.string("type") } == ["EXPIRATION"])
            #expect(expiry.first?.string("profile_id") == owner.id)
        }
    }

    @Test func oneTimePurchasesTakeRefundReversalAndRevoke() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let owner = try await f.create()
            let s = f.startMs
            #expect(try await f.report(owner.id, F.oneTime("l1", purchasedMs: s)).isSuccess)
            var feed = try await f.feedCursor()

            // A one-time purchase's notifications name its transaction id as the original.
            let refund = try await f.notify(F.event("n1", "refund", "l1", atMs: s + 1, ["transaction_id": "l1"]))
            #expect(refund["applied"] == true)
            #expect(refund.string("profile_id") == owner.id)
            var d = try await f.get(owner.id)
            #expect(d["purchases"]?.arrayValue?.first?.objectValue?["refunded"] == true)
            #expect(F.entitlement(d)?["is_active"] == false)
            var events = try await f.events(after: feed)
            #expect(events.map { $0.string("type") } == ["REFUND"])
            #expect(events.first?.string("transaction_id") == "l1")
            feed = try #require(events.last?.int("cursor"))

            #expect(try await f.notify(F.event("n2", "refund_reversed", "l1", atMs: s + 2, ["transaction_id": "l1"]))["applied"] == true)
            d = try await f.get(owner.id)
            #expect(d["purchases"]?.arrayValue?.first?.objectValue?["refunded"] == false)
            #expect(F.entitlement(d)?["is_active"] == true)
            events = try await f.events(after: feed)
            #expect(events.map { $0.string("type") } == ["REFUND_REVERSED"])
            feed = try #require(events.last?.int("cursor"))

            #expect(try await f.notify(F.event("n3", "revoke", "l1", atMs: s + 3))["applied"] == true)
            d = try await f.get(owner.id)
            #expect(F.entitlement(d)?["is_active"] == false)
            events = try await f.events(after: feed)
            #expect(events.map { $0.string("type") } == ["EXPIRATION"])
            #expect(events.first?.string("reason") == "revoked")
        }
    }

    @Test func aRepeatedNotificationIDIsAppliedOnce() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let owner = try await f.create()
            let s = f.startMs
            #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + Self.day)).isSuccess)
            let renewal = F.event("n1", "renewal", "t1", ["transaction_id": "t1-2", "expires_ms": .int(s + 2 * Self.day), "price": 9.99])
            #expect(try await f.notify(renewal)["applied"] == true)
            let document = try await f.get(owner.id)
            let events = try await f.events()

            let again = try await f.notify(renewal)
            #expect(again.isSuccess)
            #expect(again["applied"] == false)
            #expect(again.string("profile_id") == owner.id)
            #expect(again.keys == ["id", "ok", "applied", "profile_id"])
            // The same id with another body is still the same notification.
            let other = try await f.notify(F.event("n1", "cancel", "t1"))
            #expect(other["applied"] == false)
            #expect(try await f.get(owner.id) == document)
            #expect(try await f.events() == events)
        }
    }

    @Test func aLateNotificationNeverRollsBackANewerState() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let owner = try await f.create()
            let s = f.startMs
            #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + Self.day)).isSuccess)
            #expect(try await f.notify(F.event("n1", "cancel", "t1", atMs: s + 100))["applied"] == true)
            #expect(try await f.notify(F.event("n2", "renewal", "t1", atMs: s + 200, [
                "transaction_id": "t1-3", "purchased_ms": .int(s + 200), "expires_ms": .int(s + 3 * Self.day), "price": 9.99,
            ]))["applied"] == true)
            #expect(try await f.notify(F.event("n2b", "product_change", "t1", atMs: s + 300, ["new_product_id": "pro_yearly"]))["applied"] == true)
            let document = try await f.get(owner.id)
            let feed = try await f.feedCursor()

            // Older than what the server holds: each is taken (a new id) but changes nothing.
            let late: [JSONValue] = [
                F.event("n3", "uncancel", "t1", atMs: s + 50),
                F.event("n4", "expire", "t1", atMs: s + 150),
                F.event("n5", "billing_issue", "t1", atMs: s + 150),
                F.event("n6", "product_change", "t1", atMs: s + 250, ["new_product_id": "pro_monthly"]),
            ]
            for event in late {
                let answer = try await f.notify(event)
                #expect(answer.isSuccess, "\(answer)")
                #expect(answer["applied"] == true)
            }
            var d = try await f.get(owner.id)
            #expect(F.holdings(d) == F.holdings(document))
            #expect(F.subscription(d, "t1")?["will_renew"] == false)
            #expect(F.subscription(d, "t1")?.string("status") == "active")
            #expect(F.subscription(d, "t1")?.string("product_id") == "pro_yearly")
            #expect(try await f.events(after: feed).isEmpty, "a stale notification feeds nothing")

            // A late term older than the current one only completes the history.
            #expect(try await f.notify(F.event("n7", "renewal", "t1", atMs: s + 120, [
                "transaction_id": "t1-2", "purchased_ms": .int(s + 120), "expires_ms": .int(s + 2 * Self.day), "price": 9.99,
            ]))["applied"] == true)
            d = try await f.get(owner.id)
            #expect(F.subscription(d, "t1")?.int("expires_ms") == s + 3 * Self.day)
            #expect(F.entitlement(d)?.int("expires_ms") == s + 3 * Self.day)
        }
    }

    // MARK: Time

    @Test func theClockPassingTheExpiryExpiresTheSubscription() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let owner = try await f.create()
            let s = f.startMs
            let before = try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + 10_000))
            let cursor = try #require(before.int("cursor"))
            let feed = try await f.feedCursor()

            try await f.advance(9_999)
            var d = try await f.get(owner.id)
            #expect(F.subscription(d, "t1")?.string("status") == "active")
            #expect(d.int("cursor") == cursor, "nothing is due yet")
            #expect(try await f.events(after: feed).isEmpty)

            #expect(try await f.advance(1) == s + 10_000)
            d = try await f.get(owner.id)
            #expect(F.subscription(d, "t1")?.string("status") == "expired")
            #expect(F.entitlement(d)?["is_active"] == false)
            #expect((d.int("cursor") ?? 0) > cursor, "an expiry by time moves the profile's cursor")
            let events = try await f.events(after: feed)
            #expect(events.map { $0.string("type") } == ["EXPIRATION"])
            #expect(events.first?.string("profile_id") == owner.id)
            #expect(events.first?.string("original_transaction_id") == "t1")
            #expect(events.first?.int("at_ms") == s + 10_000)
            #expect(events.first?.int("cursor") == d.int("cursor"))

            // Once only.
            try await f.advance(Self.day)
            #expect(try await f.events(after: feed).count == 1)
        }
    }

    @Test func aRenewalBeforeTheExpiryKeepsTheSubscriptionAlive() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let owner = try await f.create()
            let s = f.startMs
            #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + 1000)).isSuccess)
            #expect(try await f.notify(F.event("n1", "renewal", "t1", ["transaction_id": "t1-2", "expires_ms": .int(s + 3000)]))["applied"] == true)
            let feed = try await f.feedCursor()
            try await f.advance(2000)
            #expect(F.subscription(try await f.get(owner.id), "t1")?.string("status") == "active")
            #expect(try await f.events(after: feed).isEmpty)
            try await f.advance(1000)
            #expect(F.subscription(try await f.get(owner.id), "t1")?.string("status") == "expired")
            #expect(try await f.events(after: feed).map { $0.string("type") } == ["EXPIRATION"])
        }
    }

    @Test func aStoreGraceEndsOnTheClock() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let owner = try await f.create()
            let s = f.startMs
            #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + 1000)).isSuccess)
            #expect(try await f.notify(F.event("n1", "billing_issue", "t1", ["grace_expires_ms": .int(s + 5000)]))["applied"] == true)
            let feed = try await f.feedCursor()
            try await f.advance(4999)
            var d = try await f.get(owner.id)
            #expect(F.subscription(d, "t1")?.string("status") == "grace")
            #expect(F.entitlement(d)?["is_active"] == true)
            #expect(try await f.events(after: feed).isEmpty)
            try await f.advance(1)
            d = try await f.get(owner.id)
            #expect(F.subscription(d, "t1")?.string("status") == "expired")
            #expect(F.entitlement(d)?["is_active"] == false)
            #expect(try await f.events(after: feed).map { $0.string("type") } == ["EXPIRATION"])
        }
    }

    @Test func aBillingRetryEndsOnTheClockAtTheTermsEnd() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let owner = try await f.create()
            let s = f.startMs
            #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + 1000)).isSuccess)
            #expect(try await f.notify(F.event("n1", "billing_issue", "t1"))["applied"] == true)
            let feed = try await f.feedCursor()
            try await f.advance(1000)
            #expect(F.subscription(try await f.get(owner.id), "t1")?.string("status") == "expired")
            #expect(try await f.events(after: feed).map { $0.string("type") } == ["EXPIRATION"])
        }
    }

    @Test func aTimedGrantEndsOnTheClock() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let owner = try await f.create()
            let s = f.startMs
            let granted = try await f.backend.call("entitlement.grant", [
                "profile_id": .string(owner.id), "entitlement": "extra", "expires_ms": .int(s + 1000),
            ])
            #expect(F.entitlement(granted, "extra")?["is_active"] == true)
            let cursor = try #require(granted.int("cursor"))
            let feed = try await f.feedCursor()
            try await f.advance(1000)
            let d = try await f.get(owner.id)
            #expect(F.entitlement(d, "extra")?["is_active"] == false)
            #expect(F.entitlement(d, "extra")?.int("expires_ms") == s + 1000)
            #expect((d.int("cursor") ?? 0) > cursor)
            let events = try await f.events(after: feed)
            #expect(events.map { $0.string("type") } == ["EXPIRATION"])
            #expect(events.first?.string("profile_id") == owner.id)
            #expect(events.first?.string("entitlement") == "extra")
        }
    }

    // MARK: Grants

    @Test func grantsForLifeAndForATimeAndTheirRevoke() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let owner = try await f.create("granted")
            let s = f.startMs
            let feed = try await f.feedCursor()
            let lifetime = try await f.backend.call("entitlement.grant", [
                "profile_id": .string(owner.id), "entitlement": "pro", "expires_ms": nil,
            ])
            #expect(lifetime.isSuccess, "\(lifetime)")
            #expect(lifetime.keys == ["id", "ok", "profile", "entitlements", "subscriptions", "purchases", "currencies", "cursor"])
            #expect(lifetime["entitlements"] == ["pro": [
                "is_active": true, "product_id": nil, "store": "promotional", "expires_ms": nil, "grace_expires_ms": nil,
                "will_renew": false, "period_type": "normal", "billing_issue": false,
            ]])
            let timed = try await f.backend.call("entitlement.grant", [
                "profile_id": .string(owner.id), "entitlement": "extra", "expires_ms": .int(s + Self.day),
            ])
            #expect(F.entitlement(timed, "extra")?.int("expires_ms") == s + Self.day)
            #expect(F.entitlement(timed, "extra")?["is_active"] == true)
            #expect(timed.object("entitlements")?.keys == ["extra", "pro"])

            var events = try await f.events(after: feed)
            #expect(events.map { $0.string("type") } == ["PROMOTIONAL_GRANT", "PROMOTIONAL_GRANT"])
            #expect(events.map { $0.string("entitlement") } == ["pro", "extra"])
            #expect(events.allSatisfy { $0.string("profile_id") == owner.id && $0.string("customer_user_id") == "granted" })
            #expect(events.last?.int("expires_ms") == s + Self.day)

            let revoked = try await f.backend.call("entitlement.revoke", ["profile_id": .string(owner.id), "entitlement": "pro"])
            #expect(revoked.isSuccess, "\(revoked)")
            #expect(F.entitlement(revoked)?["is_active"] == false, "a revoked grant keeps the entitlement listed")
            #expect(F.entitlement(revoked, "extra")?["is_active"] == true)
            events = try await f.events(after: feed)
            #expect(events.last?.string("type") == "PROMOTIONAL_REVOKE")
            #expect(events.last?.string("entitlement") == "pro")
            // Nothing left to revoke: nothing changes.
            let count = events.count
            #expect(try await f.backend.call("entitlement.revoke", ["profile_id": .string(owner.id), "entitlement": "pro"]).isSuccess)
            #expect(try await f.events(after: feed).count == count)
            // A new grant replaces the revoked one.
            let regranted = try await f.backend.call("entitlement.grant", [
                "profile_id": .string(owner.id), "entitlement": "pro", "expires_ms": .int(s + 2 * Self.day),
            ])
            #expect(F.entitlement(regranted)?["is_active"] == true)
        }
    }

    @Test func revokeLeavesStorePurchasesAlone() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let owner = try await f.create()
            let s = f.startMs
            #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + Self.day)).isSuccess)
            let revoked = try await f.backend.call("entitlement.revoke", ["profile_id": .string(owner.id), "entitlement": "pro"])
            #expect(revoked.isSuccess)
            #expect(F.entitlement(revoked)?["is_active"] == true)
            #expect(F.entitlement(revoked)?.string("store") == "test")
        }
    }

    @Test func aGrantBesideASubscriptionShowsTheLongerLastingSource() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let owner = try await f.create()
            let s = f.startMs
            #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + 30 * Self.day)).isSuccess)

            var d = try await f.backend.call("entitlement.grant", [
                "profile_id": .string(owner.id), "entitlement": "pro", "expires_ms": .int(s + 10 * Self.day),
            ])
            #expect(F.entitlement(d)?.string("store") == "test", "the subscription lasts longer")
            #expect(F.entitlement(d)?.int("expires_ms") == s + 30 * Self.day)

            d = try await f.backend.call("entitlement.grant", [
                "profile_id": .string(owner.id), "entitlement": "pro", "expires_ms": .int(s + 60 * Self.day),
            ])
            #expect(F.entitlement(d)?.string("store") == "promotional", "the grant lasts longer")
            #expect(F.entitlement(d)?.int("expires_ms") == s + 60 * Self.day)
            #expect(F.entitlement(d)?["product_id"] == .null)

            d = try await f.backend.call("entitlement.grant", ["profile_id": .string(owner.id), "entitlement": "pro", "expires_ms": nil])
            #expect(F.entitlement(d)?.string("store") == "promotional")
            #expect(F.entitlement(d)?["expires_ms"] == .null)

            // Revoked, the grant gives way to the subscription again.
            d = try await f.backend.call("entitlement.revoke", ["profile_id": .string(owner.id), "entitlement": "pro"])
            #expect(F.entitlement(d)?.string("store") == "test")
            #expect(F.entitlement(d)?["is_active"] == true)
        }
    }

    // MARK: Merge and delete

    @Test func aMergeCarriesTheAnonymousProfilesPurchasesToTheCustomer() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server, login: "alias")
            let s = f.startMs
            let customer = try await f.create("dave")
            #expect(try await f.report(customer.id, F.oneTime("l0", purchasedMs: s)).isSuccess)
            let anonymous = try await f.sdk.call("profile.create")
            let anonymousID = try #require(F.id(anonymous))
            #expect(try await f.report(anonymousID, F.subscription("t1", purchasedMs: s, expiresMs: s + Self.day), via: f.sdk).isSuccess)
            _ = try await f.backend.call("entitlement.grant", ["profile_id": .string(anonymousID), "entitlement": "extra", "expires_ms": nil])

            let merged = try await f.sdk.call("profile.identify", ["profile_id": .string(anonymousID), "customer_user_id": "dave"])
            #expect(merged.isSuccess, "\(merged)")
            #expect(merged["merged_from"] == [.string(anonymousID)])
            #expect(F.id(merged) == customer.id)
            #expect(F.subscription(merged, "t1")?.string("status") == "active")
            #expect(merged["purchases"]?.arrayValue?.count == 1)
            #expect(F.entitlement(merged, "extra")?["is_active"] == true)
            let d = try await f.get(customer.id)
            #expect(F.subscription(d, "t1") != nil)
            // The old id resolves to the customer, whose purchases they now are.
            #expect(F.id(try await f.get(anonymousID)) == customer.id)
            #expect(try await f.notify(F.event("n1", "cancel", "t1"))["profile_id"] == .string(customer.id))
            let cancellation = try await f.events().last
            #expect(cancellation?.string("profile_id") == customer.id)
            #expect(cancellation?.string("customer_user_id") == "dave")
            // Ops on the old id act on the customer's profile.
            let granted = try await f.backend.call("entitlement.grant", [
                "profile_id": .string(anonymousID), "entitlement": "pro", "expires_ms": .int(s + 2 * Self.day),
            ])
            #expect(F.id(granted) == customer.id)
        }
    }

    @Test func aMergedGrantAndSubscriptionExpireOnTheCustomersProfile() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server, login: "alias")
            let s = f.startMs
            let customer = try await f.create("fay")
            let anonymous = try await f.create()
            #expect(try await f.report(anonymous.id, F.subscription("t1", purchasedMs: s, expiresMs: s + 1000)).isSuccess)
            #expect(try await f.backend.call("entitlement.grant", [
                "profile_id": .string(anonymous.id), "entitlement": "extra", "expires_ms": .int(s + 2000),
            ]).isSuccess)
            #expect(try await f.backend.call("profile.identify", [
                "profile_id": .string(anonymous.id), "customer_user_id": "fay",
            ])["merged_from"] == [.string(anonymous.id)])
            let feed = try await f.feedCursor()
            try await f.advance(2000)
            let events = try await f.events(after: feed)
            #expect(events.map { $0.string("type") } == ["EXPIRATION", "EXPIRATION"])
            #expect(events.allSatisfy { $0.string("profile_id") == customer.id && $0.string("customer_user_id") == "fay" })
            let d = try await f.get(customer.id)
            #expect(F.entitlement(d)?["is_active"] == false)
            #expect(F.entitlement(d, "extra")?["is_active"] == false)
        }
    }

    @Test func deletingAProfileLeavesItsPurchasesUnowned() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let s = f.startMs
            let doomed = try await f.create("doomed")
            #expect(try await f.report(doomed.id, F.subscription("t1", purchasedMs: s, expiresMs: s + Self.day)).isSuccess)
            #expect(try await f.report(doomed.id, F.subscription("t2", purchasedMs: s, expiresMs: s + Self.day, token: doomed.token)).isSuccess)
            #expect(try await f.backend.call("profile.delete", ["profile_id": .string(doomed.id)]).isSuccess)
            let feed = try await f.feedCursor()

            let renewal = try await f.notify(F.event("n1", "renewal", "t1", ["transaction_id": "t1-2", "expires_ms": .int(s + 2 * Self.day)]))
            #expect(renewal.isSuccess, "\(renewal)")
            #expect(renewal["applied"] == true)
            #expect(renewal["profile_id"] == .null)
            let events = try await f.events(after: feed)
            #expect(events.map { $0.string("type") } == ["RENEWAL"])
            #expect(events.first?["profile_id"] == .null)

            // The one that carried the deleted profile's token waits under it; a restore claims the other.
            let heir = try await f.create(token: doomed.token)
            let heirDocument = try await f.get(heir.id)
            #expect(heirDocument.object("subscriptions")?.keys == ["t2"])
            let restored = try await f.restore(heir.id, [F.subscription("t1", purchasedMs: s, expiresMs: s + Self.day)])
            #expect(restored.object("subscriptions")?.keys == ["t1", "t2"])
            #expect(F.subscription(restored, "t1")?.int("expires_ms") == s + 2 * Self.day)
            #expect(restored["transferred_from"] == [])
        }
    }

    @Test func aDeletedProfilesPendingExpiriesAreHarmless() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server)
            let s = f.startMs
            let doomed = try await f.create()
            #expect(try await f.report(doomed.id, F.subscription("t1", purchasedMs: s, expiresMs: s + 1000)).isSuccess)
            #expect(try await f.backend.call("entitlement.grant", [
                "profile_id": .string(doomed.id), "entitlement": "extra", "expires_ms": .int(s + 1000),
            ]).isSuccess)
            #expect(try await f.backend.call("profile.delete", ["profile_id": .string(doomed.id)]).isSuccess)
            let feed = try await f.feedCursor()
            try await f.advance(1000)
            // The unowned subscription expires with no owner; the grant went with the profile.
            let events = try await f.events(after: feed)
            #expect(events.map { $0.string("type") } == ["EXPIRATION"])
            #expect(events.first?["profile_id"] == .null)
            #expect(events.first?.string("original_transaction_id") == "t1")
            try await f.advance(Self.day)
            #expect(try await f.events(after: feed).count == 1)
            #expect(try await f.create().id.hasPrefix("gh_"), "the project still serves")
        }
    }
}
