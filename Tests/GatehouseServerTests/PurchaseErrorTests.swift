import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// Every bad purchase input gets the right error code and changes nothing (PROTOCOL.md, "Error
/// codes", "Purchases and the store"; DESIGN.md, "Reliability and security").
@Suite struct PurchaseErrors {
    typealias F = StoreFixture
    static let day = StoreFixture.day

    /// A project with one profile that owns a subscription (`t1`) and a non-consumable (`l1`).
    struct Scene {
        let f: StoreFixture
        let owner: (id: String, token: String)
    }

    static func scene(_ server: TestServer, testStore: Bool = true) async throws -> Scene {
        let f = try await F.make(server)
        let owner = try await f.create("owner")
        let s = f.startMs
        #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + Self.day)).isSuccess)
        #expect(try await f.report(owner.id, F.oneTime("l1", purchasedMs: s)).isSuccess)
        if !testStore { try await f.putConfig(F.config(testStore: false)) }
        return Scene(f: f, owner: owner)
    }

    /// Runs `body`, which sends bad requests, and checks that the feed and the owner's document
    /// are as they were.
    static func changesNothing(_ scene: Scene, _ body: () async throws -> Void) async throws {
        let document = try await scene.f.get(scene.owner.id)
        let events = try await scene.f.events()
        try await body()
        #expect(try await scene.f.get(scene.owner.id) == document, "the owner's document changed")
        #expect(try await scene.f.events() == events, "the event feed changed")
    }

    /// `bad_request` whose message names `field`.
    static func expectBadRequest(_ answer: JSONObject, naming field: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer.errorCode == .badRequest, "\(answer)", sourceLocation: sourceLocation)
        let message = answer.object("error")?.string("message") ?? ""
        #expect(message.contains(field), "the message names \(field): \(message)", sourceLocation: sourceLocation)
    }

    // MARK: Stores

    @Test func aStoreTheProjectHasNotEnabledIsBadRequest() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server, testStore: false)
            let f = scene.f
            let s = f.startMs
            try await Self.changesNothing(scene) {
                Self.expectBadRequest(try await f.report(scene.owner.id, F.subscription("t9", purchasedMs: s, expiresMs: s + Self.day)),
                                      naming: "store")
                Self.expectBadRequest(try await f.restore(scene.owner.id, [F.subscription("t1", purchasedMs: s, expiresMs: s + Self.day)]),
                                      naming: "store")
                Self.expectBadRequest(try await f.notify(F.event("n1", "cancel", "t1")), naming: "store")
            }
            // The notification id was not used up by the refusal.
            try await f.putConfig(F.config())
            #expect(try await f.notify(F.event("n1", "cancel", "t1"))["applied"] == true)
        }
    }

    @Test(arguments: ["play_store", "app_store", "", "TEST"])
    func anUnknownOrUnsupportedStoreIsBadRequest(_ store: String) async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let f = scene.f
            let s = f.startMs
            try await Self.changesNothing(scene) {
                let report = try await f.backend.call("purchase.report", [
                    "profile_id": .string(scene.owner.id), "store": .string(store),
                    "transaction": F.subscription("t9", purchasedMs: s, expiresMs: s + Self.day),
                ])
                Self.expectBadRequest(report, naming: "store")
                let notify = try await f.backend.call("store.notify", ["store": .string(store), "event": F.event("n1", "cancel", "t1")])
                Self.expectBadRequest(notify, naming: "store")
                let restore = try await f.backend.call("purchase.restore", [
                    "profile_id": .string(scene.owner.id), "store": .string(store), "transactions": [],
                ])
                Self.expectBadRequest(restore, naming: "store")
            }
        }
    }

    @Test func aMissingOrMistypedStoreIsBadRequest() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let f = scene.f
            let s = f.startMs
            try await Self.changesNothing(scene) {
                let transaction = F.subscription("t9", purchasedMs: s, expiresMs: s + Self.day)
                Self.expectBadRequest(try await f.backend.call("purchase.report", ["profile_id": .string(scene.owner.id), "transaction": transaction]),
                                      naming: "store")
                Self.expectBadRequest(try await f.backend.call("purchase.report", [
                    "profile_id": .string(scene.owner.id), "store": 7, "transaction": transaction,
                ]), naming: "store")
                Self.expectBadRequest(try await f.backend.call("purchase.report", ["profile_id": .string(scene.owner.id), "store": "test"]),
                                      naming: "transaction")
                Self.expectBadRequest(try await f.backend.call("purchase.report", [
                    "profile_id": .string(scene.owner.id), "store": "test", "transaction": "t9",
                ]), naming: "transaction")
                Self.expectBadRequest(try await f.backend.call("store.notify", ["store": "test"]), naming: "event")
            }
        }
    }

    // MARK: Transactions

    @Test func anUnknownProductIsBadRequest() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let f = scene.f
            let s = f.startMs
            try await Self.changesNothing(scene) {
                Self.expectBadRequest(try await f.report(scene.owner.id, F.subscription("t9", product: "nope", purchasedMs: s, expiresMs: s + Self.day)),
                                      naming: "transaction.product_id")
                Self.expectBadRequest(try await f.notify(F.event("n1", "purchase", "t9", [
                    "transaction_id": "t9", "product_id": "nope", "expires_ms": .int(s + Self.day),
                ])), naming: "product_id")
                // A restore is refused as a whole when one of its transactions is bad.
                Self.expectBadRequest(try await f.restore(scene.owner.id, [
                    F.subscription("t8", purchasedMs: s, expiresMs: s + Self.day),
                    F.subscription("t9", product: "nope", purchasedMs: s, expiresMs: s + Self.day),
                ]), naming: "product_id")
            }
            #expect(F.subscription(try await f.get(scene.owner.id), "t8") == nil)
        }
    }

    @Test func missingAndMistypedTransactionFieldsAreBadRequestNamingTheField() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let f = scene.f
            let s = f.startMs
            let good: JSONObject = [
                "transaction_id": "t9", "product_id": "pro_monthly", "purchased_ms": .int(s), "expires_ms": .int(s + Self.day),
                "price": 9.99,
            ]
            func without(_ key: String) -> JSONValue {
                var object = good
                object[key] = nil
                return .object(object)
            }
            func with(_ key: String, _ value: JSONValue) -> JSONValue {
                var object = good
                object[key] = value
                return .object(object)
            }
            let cases: [(JSONValue, String)] = [
                (without("transaction_id"), "transaction.transaction_id"),
                (without("product_id"), "transaction.product_id"),
                (without("expires_ms"), "transaction.expires_ms"),
                (with("transaction_id", 5), "transaction.transaction_id"),
                (with("transaction_id", ""), "transaction.transaction_id"),
                (with("transaction_id", .string(String(repeating: "x", count: 129))), "transaction.transaction_id"),
                (with("original_transaction_id", 5), "transaction.original_transaction_id"),
                (with("price", "9.99"), "transaction.price"),
                (with("price", -1), "transaction.price"),
                (with("expires_ms", "soon"), "transaction.expires_ms"),
                (with("expires_ms", -1), "transaction.expires_ms"),
                (with("expires_ms", 1.5), "transaction.expires_ms"),
                (with("purchased_ms", "now"), "transaction.purchased_ms"),
                (with("app_account_token", "not-a-uuid"), "transaction.app_account_token"),
                (with("app_account_token", 42), "transaction.app_account_token"),
                (with("period_type", "forever"), "transaction.period_type"),
                (with("environment", "staging"), "transaction.environment"),
                (with("currency", 3), "transaction.currency"),
            ]
            try await Self.changesNothing(scene) {
                for (transaction, field) in cases {
                    Self.expectBadRequest(try await f.report(scene.owner.id, transaction), naming: field)
                    Self.expectBadRequest(try await f.report(scene.owner.id, transaction, via: f.sdk), naming: field)
                }
            }
            #expect(try await f.report(scene.owner.id, .object(good)).isSuccess, "the good one is taken")
        }
    }

    @Test func badEventFieldsAreBadRequestNamingTheField() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let f = scene.f
            let s = f.startMs
            let cases: [(JSONValue, String)] = [
                (F.event("n1", "refund", "t1", ["transaction_id": "t1", "fraction": 0]), "event.fraction"),
                (F.event("n1", "refund", "t1", ["transaction_id": "t1", "fraction": 1.5]), "event.fraction"),
                (F.event("n1", "refund", "t1", ["transaction_id": "t1", "fraction": -0.5]), "event.fraction"),
                (F.event("n1", "refund", "t1", ["transaction_id": "t1", "fraction": "half"]), "event.fraction"),
                (F.event("n1", "refund", "t1"), "event.transaction_id"),
                (F.event("n1", "refund_reversed", "t1"), "event.transaction_id"),
                (F.event("n1", "refresh", "t1"), "event.type"),
                (F.event("n1", "RENEWAL", "t1"), "event.type"),
                (F.event("n1", "renewal", "t1", ["expires_ms": .int(s + Self.day)]), "event.transaction_id"),
                (F.event("n1", "renewal", "t1", ["transaction_id": "t1-2"]), "event.expires_ms"),
                (F.event("n1", "renewal", "t1", ["transaction_id": "t1-2", "expires_ms": .int(s + Self.day), "price": "9.99"]), "event.price"),
                (F.event("n1", "renewal", "t1", ["transaction_id": "t1-2", "expires_ms": .int(s + Self.day), "price": -9.99]), "event.price"),
                (F.event("n1", "recover", "t1", ["transaction_id": "t1-2"]), "event.expires_ms"),
                (F.event("n1", "billing_issue", "t1", ["grace_expires_ms": "later"]), "event.grace_expires_ms"),
                (F.event("n1", "product_change", "t1"), "event.new_product_id"),
                (F.event("n1", "cancel", "t1", atMs: -5), "event.event_ms"),
                (F.event("n1", "purchase", "t9", ["transaction_id": "t9", "product_id": "pro_monthly"]), "event.expires_ms"),
                (F.event("n1", "purchase", "t9", [
                    "transaction_id": "t9", "product_id": "pro_monthly", "expires_ms": .int(s + Self.day), "app_account_token": "nope",
                ]), "event.app_account_token"),
                (["type": "cancel", "original_transaction_id": "t1"], "event.notification_id"),
                (["notification_id": "n1", "original_transaction_id": "t1"], "event.type"),
                (["notification_id": "n1", "type": "cancel"], "event.original_transaction_id"),
                (["notification_id": 1, "type": "cancel", "original_transaction_id": "t1"], "event.notification_id"),
            ]
            try await Self.changesNothing(scene) {
                for (event, field) in cases {
                    Self.expectBadRequest(try await f.notify(event), naming: field)
                }
            }
            // None of them used up n1.
            #expect(try await f.notify(F.event("n1", "cancel", "t1"))["applied"] == true)
        }
    }

    @Test func aProductChangeToAProductNotInTheConfigIsBadRequest() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let f = scene.f
            try await Self.changesNothing(scene) {
                Self.expectBadRequest(try await f.notify(F.event("n1", "product_change", "t1", ["new_product_id": "nope"])),
                                      naming: "event.new_product_id")
            }
        }
    }

    @Test func aNotificationForAnUnknownPurchaseIsNotFound() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let f = scene.f
            let s = f.startMs
            let events: [JSONValue] = [
                F.event("n1", "renewal", "t9", ["transaction_id": "t9-2", "expires_ms": .int(s + Self.day)]),
                F.event("n2", "cancel", "t9"), F.event("n3", "uncancel", "t9"), F.event("n4", "billing_issue", "t9"),
                F.event("n5", "recover", "t9"), F.event("n6", "expire", "t9"),
                F.event("n7", "refund", "t9", ["transaction_id": "t9"]), F.event("n8", "refund_reversed", "t9", ["transaction_id": "t9"]),
                F.event("n9", "revoke", "t9"), F.event("n10", "product_change", "t9", ["new_product_id": "pro_yearly"]),
            ]
            try await Self.changesNothing(scene) {
                for event in events {
                    let answer = try await f.notify(event)
                    #expect(answer.errorCode == .notFound, "\(answer)")
                }
            }
            // Once the purchase is known, the same notification is applied: the refusal did not use its id up.
            #expect(try await f.notify(F.event("n0", "purchase", "t9", [
                "transaction_id": "t9", "product_id": "pro_monthly", "expires_ms": .int(s + Self.day),
            ]))["applied"] == true)
            #expect(try await f.notify(events[0])["applied"] == true)
        }
    }

    @Test(arguments: ["cancel", "uncancel", "billing_issue", "recover", "expire", "renewal", "product_change"])
    func aOneTimePurchaseRefusesSubscriptionEvents(_ type: String) async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let f = scene.f
            let s = f.startMs
            var more: JSONObject = [:]
            if type == "renewal" { more = ["transaction_id": "l1-2", "expires_ms": .int(s + Self.day)] }
            if type == "product_change" { more = ["new_product_id": "pro_yearly"] }
            try await Self.changesNothing(scene) {
                let answer = try await f.notify(F.event("n1", type, "l1", more))
                #expect(answer.errorCode == .badRequest, "\(answer)")
            }
            #expect(try await f.notify(F.event("n1", "refund", "l1", ["transaction_id": "l1"]))["applied"] == true)
        }
    }

    // MARK: Profiles and roles

    @Test func aProfileOfAnotherProjectIsForbiddenAndAnUnknownOneNotFound() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let f = scene.f
            let s = f.startMs
            let other = try await F.make(server, project: "other")
            let foreign = try await other.create()
            let gone = try await f.create()
            #expect(try await f.backend.call("profile.delete", ["profile_id": .string(gone.id)]).isSuccess)
            let foreignBefore = try await other.get(foreign.id)
            let otherEvents = try await other.events()
            let transaction = F.subscription("t9", purchasedMs: s, expiresMs: s + Self.day)

            try await Self.changesNothing(scene) {
                for (id, code) in [(foreign.id, ErrorCode.forbidden), (gone.id, .notFound)] {
                    for client in [f.backend, f.sdk] {
                        #expect(try await f.report(id, transaction, via: client).errorCode == code)
                        #expect(try await f.restore(id, [transaction], via: client).errorCode == code)
                    }
                    #expect(try await f.backend.call("entitlement.grant", [
                        "profile_id": .string(id), "entitlement": "pro", "expires_ms": nil,
                    ]).errorCode == code)
                    #expect(try await f.backend.call("entitlement.revoke", ["profile_id": .string(id), "entitlement": "pro"]).errorCode == code)
                }
                Self.expectBadRequest(try await f.report("gh_nope", transaction), naming: "profile_id")
                Self.expectBadRequest(try await f.report("", transaction), naming: "profile_id")
                Self.expectBadRequest(try await f.backend.call("purchase.report", ["profile_id": 7, "store": "test", "transaction": transaction]),
                                      naming: "profile_id")
            }
            #expect(try await other.get(foreign.id) == foreignBefore)
            #expect(try await other.events() == otherEvents)
            #expect(try await f.notify(F.event("n1", "purchase", "t9", [
                "transaction_id": "t9", "product_id": "pro_monthly", "expires_ms": .int(s + Self.day),
            ]))["profile_id"] == .null, "t9 was never taken in")
        }
    }

    @Test func theSDKKeyMayNotNotifyGrantOrRevokeAndTheAdminRunsNoPurchaseOps() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let f = scene.f
            let s = f.startMs
            let id = JSONValue.string(scene.owner.id)
            try await Self.changesNothing(scene) {
                #expect(try await f.sdk.call("store.notify", ["store": "test", "event": F.event("n1", "cancel", "t1")]).errorCode == .forbidden)
                #expect(try await f.sdk.call("entitlement.grant", ["profile_id": id, "entitlement": "pro", "expires_ms": nil]).errorCode == .forbidden)
                #expect(try await f.sdk.call("entitlement.revoke", ["profile_id": id, "entitlement": "pro"]).errorCode == .forbidden)
                #expect(try await f.sdk.call("events", ["cursor": 0]).errorCode == .forbidden)
                for op in ["purchase.report", "purchase.restore", "store.notify", "entitlement.grant", "entitlement.revoke"] {
                    let answer = try await f.admin.call(op, [
                        "profile_id": id, "store": "test", "transaction": F.subscription("t9", purchasedMs: s, expiresMs: s + Self.day),
                        "event": F.event("n1", "cancel", "t1"), "entitlement": "pro", "expires_ms": nil,
                    ])
                    #expect(answer.errorCode == .forbidden, "\(op): \(answer)")
                }
                let anonymous = try f.server.connect()
                #expect(try await anonymous.call("store.notify", ["store": "test", "event": F.event("n1", "cancel", "t1")]).errorCode == .unauthenticated)
            }
            #expect(try await f.notify(F.event("n1", "cancel", "t1"))["applied"] == true)
        }
    }

    // MARK: Grants

    @Test func badGrantsAreRefused() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let f = scene.f
            let s = f.startMs
            let id = JSONValue.string(scene.owner.id)
            try await Self.changesNothing(scene) {
                #expect(try await f.backend.call("entitlement.grant", ["profile_id": id, "entitlement": "gold", "expires_ms": nil]).errorCode == .notFound)
                #expect(try await f.backend.call("entitlement.revoke", ["profile_id": id, "entitlement": "gold"]).errorCode == .notFound)
                Self.expectBadRequest(try await f.backend.call("entitlement.grant", ["profile_id": id, "entitlement": "pro"]), naming: "expires_ms")
                Self.expectBadRequest(try await f.backend.call("entitlement.grant", ["profile_id": id, "entitlement": "pro", "expires_ms": .int(s - 1)]),
                                      naming: "expires_ms")
                Self.expectBadRequest(try await f.backend.call("entitlement.grant", ["profile_id": id, "entitlement": "pro", "expires_ms": .int(s)]),
                                      naming: "expires_ms")
                Self.expectBadRequest(try await f.backend.call("entitlement.grant", ["profile_id": id, "entitlement": "pro", "expires_ms": "never"]),
                                      naming: "expires_ms")
                Self.expectBadRequest(try await f.backend.call("entitlement.grant", ["profile_id": id, "entitlement": "pro", "expires_ms": -1]),
                                      naming: "expires_ms")
                Self.expectBadRequest(try await f.backend.call("entitlement.grant", ["profile_id": id, "expires_ms": nil]), naming: "entitlement")
                Self.expectBadRequest(try await f.backend.call("entitlement.grant", ["profile_id": id, "entitlement": 5, "expires_ms": nil]),
                                      naming: "entitlement")
                Self.expectBadRequest(try await f.backend.call("entitlement.revoke", ["profile_id": id]), naming: "entitlement")
            }
        }
    }

    // MARK: Restore

    @Test func restoreWithBadTransactionsIsBadRequest() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let scene = try await Self.scene(server)
            let f = scene.f
            let s = f.startMs
            let id = JSONValue.string(scene.owner.id)
            try await Self.changesNothing(scene) {
                for transactions: JSONValue in ["t1", 5, ["transaction_id": "t1"], ["t1"], nil] {
                    Self.expectBadRequest(try await f.backend.call("purchase.restore", [
                        "profile_id": id, "store": "test", "transactions": transactions,
                    ]), naming: "transactions")
                }
                Self.expectBadRequest(try await f.backend.call("purchase.restore", ["profile_id": id, "store": "test"]), naming: "transactions")
                var many: [JSONValue] = []
                for index in 0..<1001 { many.append(F.subscription("m\(index)", purchasedMs: s, expiresMs: s + Self.day)) }
                Self.expectBadRequest(try await f.backend.call("purchase.restore", [
                    "profile_id": id, "store": "test", "transactions": .array(many),
                ]), naming: "transactions")
            }
            // An empty restore is fine and changes nothing.
            let empty = try await f.restore(scene.owner.id, [])
            #expect(empty.isSuccess)
            #expect(empty["transferred_from"] == [])
            #expect(empty["kept_by_other"] == [])
        }
    }

    @Test func ownedByOtherChangesNothing() async throws {
        try await withTestServer({ $0.testClock = true }) { server in
            let f = try await F.make(server, restore: "keep")
            let owner = try await f.create()
            let s = f.startMs
            #expect(try await f.report(owner.id, F.subscription("t1", purchasedMs: s, expiresMs: s + Self.day)).isSuccess)
            let other = try await f.create()
            let scene = Scene(f: f, owner: owner)
            try await Self.changesNothing(scene) {
                // A report with a new term of a kept purchase is refused as a whole: the term is not taken in.
                let answer = try await f.report(other.id, F.subscription("t1-2", original: "t1", purchasedMs: s, expiresMs: s + 2 * Self.day))
                #expect(answer.errorCode == .ownedByOther, "\(answer)")
                #expect(answer.object("error")?.string("message") != nil)
            }
        }
    }
}
