import GatehouseAppStore
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// The App Store's signed transactions over real connections: `purchase.report` with
/// `signed_transaction`, `purchase.restore` with `signed_transactions`, ownership by
/// `appAccountToken`, paid terms and offers, and how `store.notify` takes Apple's body
/// (PROTOCOL.md, "Purchases and the store"; DESIGN.md, "Who owns a purchase").
@Suite struct AppStorePurchases {
    typealias A = AppStoreFixture
    static let day = A.day

    @Test func aSignedSubscriptionReportAnswersTheDocumentAndGrantsItsPaidTerm() async throws {
        try await A.run { a in
            let alice = try await a.f.create("alice")
            let s = a.startMs
            let feedBefore = try await a.f.feedCursor()
            let jws = a.sign(a.transaction("1000000001", purchasedMs: s, expiresMs: s + 30 * Self.day))
            let answer = try await a.report(alice.id, jws, via: a.f.sdk)
            #expect(answer.isSuccess, "\(answer)")
            #expect(answer["subscriptions"] == ["1000000001": [
                "product_id": "pro_monthly", "store": "app_store", "status": "active", "expires_ms": .int(s + 30 * Self.day),
                "will_renew": true, "period_type": "normal", "environment": "sandbox",
            ]])
            #expect(StoreFixture.entitlement(answer)?["is_active"] == true)
            #expect(StoreFixture.entitlement(answer)?.string("store") == "app_store")
            #expect(answer.object("currencies")?.int("COINS") == 100, "the paid first term grants `purchase`")
            #expect(try await a.eventTypes(after: feedBefore) == ["INITIAL_PURCHASE"])
            let event = try #require(try await a.f.events(after: feedBefore).first)
            #expect(event.string("store") == "app_store")
            #expect(event.string("transaction_id") == "1000000001")
            // The same signed transaction again changes nothing and grants nothing.
            let again = try await a.report(alice.id, jws)
            #expect(again.int("cursor") == answer.int("cursor"))
            #expect(again.object("currencies")?.int("COINS") == 100)
        }
    }

    @Test func aSignedTransactionCarryingAnotherProfilesTokenGoesToThatProfile() async throws {
        try await A.run { a in
            let owner = try await a.f.create()
            let reporter = try await a.f.create()
            let jws = a.sign(a.transaction("1000000002", token: owner.token.uppercased()))
            let answer = try await a.report(reporter.id, jws)
            #expect(answer.isSuccess, "\(answer)")
            #expect(answer["subscriptions"] == .object(JSONObject()), "the reporter does not get it")
            #expect(try await a.subscription(owner.id, "1000000002")?.string("status") == "active")
            #expect(try await a.balance(owner.id) == 100)
        }
    }

    @Test func restoreTakesEverySignedTransactionAndTransfersUnderTheRestoreSetting() async throws {
        try await A.run { a in
            let first = try await a.f.create()
            let second = try await a.f.create()
            let s = a.startMs
            let subscription = a.sign(a.transaction("2000000001", purchasedMs: s, expiresMs: s + 30 * Self.day))
            let renewal = a.sign(a.transaction("2000000002", original: "2000000001", purchasedMs: s + 30 * Self.day,
                                               expiresMs: s + 60 * Self.day))
            let lifetime = a.sign(a.transaction("2000000003", product: "lifetime", type: "Non-Consumable", price: 29_990))
            let restored = try await a.restore(first.id, [subscription, renewal, lifetime], via: a.f.sdk)
            #expect(restored.isSuccess, "\(restored)")
            #expect(StoreFixture.subscription(restored, "2000000001")?.int("expires_ms") == s + 60 * Self.day)
            #expect(restored["purchases"]?.arrayValue?.first?.objectValue?.string("transaction_id") == "2000000003")
            #expect(restored["transferred_from"] == [])
            // Another profile restores the same purchases: under `transfer` they move to it.
            let moved = try await a.restore(second.id, [subscription, lifetime])
            #expect(moved["transferred_from"] == [.string(first.id)])
            #expect(StoreFixture.subscription(moved, "2000000001") != nil)
            #expect(try await a.subscription(first.id, "2000000001") == nil)
            // Currency stays where it was granted: the first term's and the renewal's.
            #expect(try await a.balance(first.id) == 100)
            #expect(try await a.balance(first.id, "GEMS") == 10)
            #expect(try await a.balance(second.id) == 0)
        }
    }

    @Test func offersSetThePeriodTypeAndAFreeTrialGrantsNothing() async throws {
        try await A.run { a in
            let dana = try await a.f.create()
            let trial = a.transaction("3000000001", token: dana.token, price: 0, more: [
                "offerType": 1, "offerDiscountType": "FREE_TRIAL", "offerPeriod": "P1W",
            ])
            let answer = try await a.report(dana.id, a.sign(trial))
            #expect(StoreFixture.subscription(answer, "3000000001")?.string("period_type") == "trial")
            #expect(answer.object("currencies")?.int("COINS") == 0)
            let intro = a.transaction("3000000002", token: dana.token, price: 990, more: [
                "offerType": 1, "offerDiscountType": "PAY_AS_YOU_GO",
            ])
            let introAnswer = try await a.report(dana.id, a.sign(intro))
            #expect(StoreFixture.subscription(introAnswer, "3000000002")?.string("period_type") == "intro")
            #expect(introAnswer.object("currencies")?.int("COINS") == 100, "a paid introductory term grants")
        }
    }

    @Test func aFamilySharedCopyEntitlesButGrantsNothing() async throws {
        try await A.run { a in
            let member = try await a.f.create()
            let shared = a.transaction("3100000001", token: member.token, ownership: "FAMILY_SHARED")
            try await a.notifyApplied(a.notification("n-family", "SUBSCRIBED", "INITIAL_BUY", transaction: shared))
            #expect(try await a.entitlement(member.id)?["is_active"] == true)
            #expect(try await a.balance(member.id) == 0)
            let renewal = a.transaction("3100000002", original: "3100000001", purchasedMs: a.startMs + 30 * Self.day,
                                        expiresMs: a.startMs + 60 * Self.day, ownership: "FAMILY_SHARED")
            try await a.notifyApplied(a.notification("n-family-2", "DID_RENEW", transaction: renewal,
                                                     signedDate: a.startMs + 30 * Self.day))
            #expect(try await a.balance(member.id, "GEMS") == 0)
        }
    }

    @Test func theBodyApplePostsIsAcceptedAsTextOrAsAnObject() async throws {
        try await A.run { a in
            let owner = try await a.f.create()
            let signed = a.notification("n-body-1", "SUBSCRIBED", "INITIAL_BUY", transaction: a.transaction("3200000001", token: owner.token))
            let asText = try await a.notify(value: .string(#"{"signedPayload":"\#(signed)"}"#))
            #expect(asText["applied"] == true, "\(asText)")
            #expect(asText.string("profile_id") == owner.id)
            let other = a.notification("n-body-2", "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED",
                                       transaction: a.transaction("3200000001", token: owner.token), signedDate: a.startMs + 1)
            let asObject = try await a.notify(value: ["signedPayload": .string(other)])
            #expect(asObject["applied"] == true, "\(asObject)")
            #expect(try await a.subscription(owner.id, "3200000001")?["will_renew"] == false)
        }
    }

    @Test(arguments: [false, true])
    func whatTheAppStoreSaidSurvivesARestart(checkpoint: Bool) async throws {
        let chain = try AppStoreTestChain()
        let configure: (inout ServerConfiguration) -> Void = {
            $0.testClock = true
            $0.appStoreRootCertificates = [chain.rootDER]
        }
        let first = try await TestServer.start(configure)
        let f = try await StoreFixture.make(first)
        try await f.putConfig(A.config())
        let a = A(f: f, chain: chain)
        let owner = try await f.create()
        let s = a.startMs
        let extended = a.transaction("4000000001", token: owner.token, more: ["expiresDate": .int(s + 40 * Self.day)])
        let notifications = [
            a.notification("n1", "SUBSCRIBED", "INITIAL_BUY", transaction: a.transaction("4000000001", token: owner.token)),
            a.notification("n2", "DID_CHANGE_RENEWAL_PREF", "UPGRADE", transaction: a.transaction(
                "4000000002", original: "4000000001", product: "pro_yearly", purchasedMs: s + Self.day, expiresMs: s + 366 * Self.day,
                price: 79_990), signedDate: s + Self.day),
            a.notification("n3", "REFUND", transaction: a.transaction("4000000001", more: ["revocationPercentage": 50_000]),
                           signedDate: s + 2 * Self.day),
            a.notification("n4", "RENEWAL_EXTENDED", transaction: extended, signedDate: s + 3 * Self.day),
            a.notification("n5", "TEST"),
        ]
        for notification in notifications { try await a.notifyApplied(notification) }
        if checkpoint { #expect(try await f.admin.call("server.checkpoint").isSuccess) }
        let before = try await f.get(owner.id)
        let events = try await f.events()
        #expect(before.object("currencies")?.int("COINS") == 1_050)

        let second = try await first.restart(configure)
        let g = try await f.reconnected(to: second)
        let b = A(f: g, chain: chain)
        #expect(try await g.get(owner.id) == before)
        #expect(try await g.events() == events)
        for notification in notifications { #expect(try await b.notify(notification)["applied"] == false) }
        await second.stop()
    }
}
