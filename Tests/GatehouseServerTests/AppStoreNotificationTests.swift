import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// App Store Server Notifications V2, signed by a test chain and posted to `store.notify`: every
/// notification type and subtype moves the subscription as docs/app-store.md's table says, with
/// its feed events and currency grants; a repeated `notificationUUID` is applied once; the
/// notifications' `signedDate` orders late deliveries (DESIGN.md, "Subscription life and
/// entitlements", "Virtual currencies").
@Suite struct AppStoreNotifications {
    typealias A = AppStoreFixture
    static let day = A.day
    static let original = "5000000001"

    /// A profile that owns `original` (`pro_monthly`, 30 days from the start, COINS 100 granted)
    /// through `SUBSCRIBED` `INITIAL_BUY` with its token; answers the profile id and the feed
    /// cursor after it.
    static func subscribed(_ a: A) async throws -> (owner: String, token: String, cursor: Int64) {
        let owner = try await a.f.create()
        let first = a.transaction(original, token: owner.token)
        let named = try await a.notifyApplied(a.notification("n-initial", "SUBSCRIBED", "INITIAL_BUY", transaction: first))
        #expect(named == owner.id)
        #expect(try await a.balance(owner.id) == 100)
        return (owner.id, owner.token, try await a.f.feedCursor())
    }

    /// The second term of `original`: 30 → 60 days.
    static func renewal(_ a: A, _ id: String = "5000000002", token: String? = nil) -> JSONObject {
        a.transaction(id, original: original, purchasedMs: a.startMs + 30 * day, expiresMs: a.startMs + 60 * day, token: token)
    }

    // MARK: Purchases and renewals

    @Test func subscribedOwnsByTokenAndFeedsInitialPurchase() async throws {
        try await A.run { a in
            let (owner, _, _) = try await Self.subscribed(a)
            let subscription = try #require(try await a.subscription(owner, Self.original))
            #expect(subscription.string("status") == "active")
            #expect(subscription.int("expires_ms") == a.startMs + 30 * Self.day)
            #expect(try await a.eventTypes(after: 0) == ["INITIAL_PURCHASE"])
        }
    }

    @Test func subscribedWithATokenNobodyHoldsIsHeldUntilAProfileTakesIt() async throws {
        try await A.run { a in
            let token = "6b1f0d2e-3c4a-4e5f-8a9b-0c1d2e3f4a5b"
            let answer = try await a.notify(a.notification("n1", "SUBSCRIBED", "INITIAL_BUY",
                                                           transaction: a.transaction(Self.original, token: token)))
            #expect(answer["applied"] == true)
            #expect(answer["profile_id"] == .null)
            let created = try await a.f.sdk.call("profile.create", ["app_account_token": .string(token)])
            let id = try #require(StoreFixture.id(created))
            #expect(StoreFixture.subscription(created, Self.original)?.string("status") == "active")
            #expect(try await a.balance(id) == 100, "the grant waited for its owner")
        }
    }

    @Test func didRenewAddsTheTermAndGrantsTheRenewal() async throws {
        try await A.run { a in
            let (owner, _, cursor) = try await Self.subscribed(a)
            try await a.notifyApplied(a.notification("n2", "DID_RENEW", transaction: Self.renewal(a), signedDate: a.startMs + 30 * Self.day))
            #expect(try await a.subscription(owner, Self.original)?.int("expires_ms") == a.startMs + 60 * Self.day)
            #expect(try await a.eventTypes(after: cursor) == ["RENEWAL"])
            #expect(try await a.balance(owner, "GEMS") == 10)
            #expect(try await a.balance(owner) == 100)
        }
    }

    @Test func offerRedeemedBuysResubscribesAndUpgrades() async throws {
        try await A.run { a in
            let owner = try await a.f.create()
            let s = a.startMs
            let offer = a.transaction(Self.original, token: owner.token, price: 4_990, more: ["offerType": 3, "offerIdentifier": "WELCOME"])
            try await a.notifyApplied(a.notification("n1", "OFFER_REDEEMED", "INITIAL_BUY", transaction: offer))
            #expect(try await a.balance(owner.id) == 100)
            try await a.notifyApplied(a.notification("n2", "EXPIRED", "VOLUNTARY", transaction: offer, signedDate: s + 30 * Self.day))
            let back = a.transaction("5000000003", original: Self.original, purchasedMs: s + 40 * Self.day,
                                     expiresMs: s + 70 * Self.day, more: ["offerType": 3])
            try await a.notifyApplied(a.notification("n3", "OFFER_REDEEMED", "RESUBSCRIBE", transaction: back, signedDate: s + 40 * Self.day))
            #expect(try await a.subscription(owner.id, Self.original)?.string("status") == "active")
            #expect(try await a.balance(owner.id) == 200, "a resubscribe fires `purchase`")
            let upgrade = a.transaction("5000000004", original: Self.original, product: "pro_yearly", purchasedMs: s + 41 * Self.day,
                                        expiresMs: s + 406 * Self.day, price: 79_990, more: ["offerType": 3])
            try await a.notifyApplied(a.notification("n4", "OFFER_REDEEMED", "UPGRADE", transaction: upgrade, signedDate: s + 41 * Self.day))
            #expect(try await a.subscription(owner.id, Self.original)?.string("product_id") == "pro_yearly")
            #expect(try await a.eventTypes(after: 0) == ["INITIAL_PURCHASE", "EXPIRATION", "INITIAL_PURCHASE", "PRODUCT_CHANGE"])
        }
    }

    @Test func oneTimeChargesBuyConsumablesAndNonConsumables() async throws {
        try await A.run { a in
            let owner = try await a.f.create()
            let coins = a.transaction("5100000001", product: "coins_500", type: "Consumable", token: owner.token, price: 4_990)
            let named = try await a.notifyApplied(a.notification("n1", "ONE_TIME_CHARGE", transaction: coins))
            #expect(named == owner.id)
            #expect(try await a.balance(owner.id) == 500)
            let lifetime = a.transaction("5100000002", product: "lifetime", type: "Non-Consumable", token: owner.token, price: 29_990)
            try await a.notifyApplied(a.notification("n2", "ONE_TIME_CHARGE", transaction: lifetime))
            let entitlement = try #require(try await a.entitlement(owner.id))
            #expect(entitlement["is_active"] == true)
            #expect(entitlement["expires_ms"] == .null, "for life")
            #expect(try await a.eventTypes(after: 0) == ["NON_RENEWING_PURCHASE", "NON_RENEWING_PURCHASE"])
            // A full refund of the consumable takes its coins back.
            let refunded = a.transaction("5100000001", product: "coins_500", type: "Consumable", token: owner.token, price: 4_990,
                                         more: ["revocationDate": .int(a.startMs + 1), "revocationReason": 0, "revocationType": "REFUND_FULL",
                                                "revocationPercentage": 100_000])
            try await a.notifyApplied(a.notification("n3", "REFUND", transaction: refunded, signedDate: a.startMs + 1))
            #expect(try await a.balance(owner.id) == 0)
        }
    }

    // MARK: Billing

    @Test func didFailToRenewWithGracePeriodKeepsAccessUntilTheGraceEnds() async throws {
        try await A.run { a in
            let (owner, _, cursor) = try await Self.subscribed(a)
            let s = a.startMs
            let graceEnd = s + 46 * Self.day
            let info = a.renewalInfo(Self.original, more: ["gracePeriodExpiresDate": .int(graceEnd), "isInBillingRetryPeriod": true])
            try await a.notifyApplied(a.notification("n2", "DID_FAIL_TO_RENEW", "GRACE_PERIOD", transaction: a.transaction(Self.original),
                                                     renewalInfo: info, signedDate: s + 30 * Self.day))
            #expect(try await a.subscription(owner, Self.original)?.string("status") == "grace")
            let entitlement = try #require(try await a.entitlement(owner))
            #expect(entitlement["is_active"] == true)
            #expect(entitlement.int("grace_expires_ms") == graceEnd)
            #expect(entitlement["billing_issue"] == true)
            #expect(try await a.eventTypes(after: cursor) == ["BILLING_ISSUE"])
            let feed = try await a.f.feedCursor()
            // Past the term's end, inside the grace: still entitled (the feed has forgotten the
            // week-old BILLING_ISSUE by now: it keeps 7 days).
            try await a.f.advance(35 * Self.day)
            #expect(try await a.entitlement(owner)?["is_active"] == true)
            try await a.notifyApplied(a.notification("n3", "GRACE_PERIOD_EXPIRED", transaction: a.transaction(Self.original),
                                                     signedDate: graceEnd))
            #expect(try await a.subscription(owner, Self.original)?.string("status") == "expired")
            #expect(try await a.entitlement(owner)?["is_active"] == false)
            #expect(try await a.eventTypes(after: feed) == ["EXPIRATION"])
        }
    }

    @Test func aGraceThatRunsOutExpiresByTheServersClock() async throws {
        try await A.run { a in
            let (owner, _, cursor) = try await Self.subscribed(a)
            let s = a.startMs
            let info = a.renewalInfo(Self.original, more: ["gracePeriodExpiresDate": .int(s + 33 * Self.day)])
            try await a.notifyApplied(a.notification("n2", "DID_FAIL_TO_RENEW", "GRACE_PERIOD", transaction: a.transaction(Self.original),
                                                     renewalInfo: info, signedDate: s + 30 * Self.day))
            #expect(try await a.eventTypes(after: cursor) == ["BILLING_ISSUE"])
            let feed = try await a.f.feedCursor()
            try await a.f.advance(34 * Self.day)
            #expect(try await a.subscription(owner, Self.original)?.string("status") == "expired")
            #expect(try await a.eventTypes(after: feed) == ["EXPIRATION"], "the server's own expiry (the feed keeps 7 days)")
        }
    }

    @Test func didFailToRenewWithoutSubtypeIsBillingRetryUntilBillingRecovery() async throws {
        try await A.run { a in
            let (owner, _, cursor) = try await Self.subscribed(a)
            let s = a.startMs
            try await a.notifyApplied(a.notification("n2", "DID_FAIL_TO_RENEW", transaction: a.transaction(Self.original),
                                                     renewalInfo: a.renewalInfo(Self.original), signedDate: s + 30 * Self.day))
            #expect(try await a.subscription(owner, Self.original)?.string("status") == "billing_retry")
            #expect(try await a.entitlement(owner)?["is_active"] == false)
            #expect(try await a.entitlement(owner)?["billing_issue"] == true)
            try await a.notifyApplied(a.notification("n3", "DID_RENEW", "BILLING_RECOVERY", transaction: Self.renewal(a),
                                                     signedDate: s + 32 * Self.day))
            #expect(try await a.subscription(owner, Self.original)?.string("status") == "active")
            #expect(try await a.subscription(owner, Self.original)?.int("expires_ms") == s + 60 * Self.day)
            #expect(try await a.eventTypes(after: cursor) == ["BILLING_ISSUE", "RENEWAL"])
            #expect(try await a.balance(owner, "GEMS") == 10, "the recovered term is a paid renewal")
        }
    }

    @Test func withoutAGraceFromAppleTheProjectsGraceApplies() async throws {
        try await A.run(gracePeriodMs: 3 * Self.day) { a in
            let (owner, _, _) = try await Self.subscribed(a)
            try await a.notifyApplied(a.notification("n2", "DID_FAIL_TO_RENEW", transaction: a.transaction(Self.original),
                                                     signedDate: a.startMs + 30 * Self.day))
            #expect(try await a.subscription(owner, Self.original)?.string("status") == "grace")
            #expect(try await a.entitlement(owner)?.int("grace_expires_ms") == a.startMs + 33 * Self.day)
        }
    }

    @Test(arguments: ["VOLUNTARY", "BILLING_RETRY", "PRICE_INCREASE", "PRODUCT_NOT_FOR_SALE", nil])
    func expiredEndsTheSubscription(_ subtype: String?) async throws {
        try await A.run { a in
            let (owner, _, cursor) = try await Self.subscribed(a)
            try await a.notifyApplied(a.notification("n2", "EXPIRED", subtype, transaction: a.transaction(Self.original),
                                                     signedDate: a.startMs + 30 * Self.day))
            #expect(try await a.subscription(owner, Self.original)?.string("status") == "expired")
            #expect(try await a.entitlement(owner)?["is_active"] == false)
            #expect(try await a.eventTypes(after: cursor) == ["EXPIRATION"])
        }
    }

    // MARK: Renewal status and plan

    @Test func renewalStatusChangesTurnWillRenewOffAndOn() async throws {
        try await A.run { a in
            let (owner, _, cursor) = try await Self.subscribed(a)
            let s = a.startMs
            try await a.notifyApplied(a.notification("n2", "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED",
                                                     transaction: a.transaction(Self.original), signedDate: s + 1_000))
            #expect(try await a.subscription(owner, Self.original)?["will_renew"] == false)
            #expect(try await a.entitlement(owner)?["is_active"] == true, "access is unchanged")
            try await a.notifyApplied(a.notification("n3", "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED",
                                                     transaction: a.transaction(Self.original), signedDate: s + 2_000))
            #expect(try await a.subscription(owner, Self.original)?["will_renew"] == true)
            #expect(try await a.eventTypes(after: cursor) == ["CANCELLATION", "UNCANCELLATION"])
        }
    }

    @Test func anUpgradeChangesTheProductAndItsTermAtOnce() async throws {
        try await A.run { a in
            let (owner, _, cursor) = try await Self.subscribed(a)
            let s = a.startMs
            let yearly = a.transaction("5000000009", original: Self.original, product: "pro_yearly", purchasedMs: s + 10 * Self.day,
                                       expiresMs: s + 375 * Self.day, price: 79_990)
            try await a.notifyApplied(a.notification("n2", "DID_CHANGE_RENEWAL_PREF", "UPGRADE", transaction: yearly,
                                                     signedDate: s + 10 * Self.day))
            let subscription = try #require(try await a.subscription(owner, Self.original))
            #expect(subscription.string("product_id") == "pro_yearly")
            #expect(subscription.int("expires_ms") == s + 375 * Self.day)
            #expect(try await a.eventTypes(after: cursor) == ["PRODUCT_CHANGE"])
            #expect(try await a.balance(owner) == 1_100, "the upgrade's paid term grants pro_yearly's `both`")
            // Past the old term's end it is still active: the upgrade's term counts.
            try await a.f.advance(31 * Self.day)
            #expect(try await a.entitlement(owner)?["is_active"] == true)
        }
    }

    @Test(arguments: ["DOWNGRADE", nil])
    func aDowngradeOrItsUndoingWaitsForTheNextRenewal(_ subtype: String?) async throws {
        try await A.run { a in
            let (owner, _, cursor) = try await Self.subscribed(a)
            let before = try await a.get(owner)
            let info = a.renewalInfo(Self.original, more: ["autoRenewProductId": "pro_cheap"])
            try await a.notifyApplied(a.notification("n2", "DID_CHANGE_RENEWAL_PREF", subtype, transaction: a.transaction(Self.original),
                                                     renewalInfo: info, signedDate: a.startMs + 1_000))
            #expect(StoreFixture.holdings(try await a.get(owner)) == StoreFixture.holdings(before))
            #expect(try await a.eventTypes(after: cursor) == [])
        }
    }

    // MARK: Refunds and revokes

    @Test func aPartialRefundClawsBackItsShareAndAReversalGivesItBack() async throws {
        try await A.run { a in
            let (owner, _, cursor) = try await Self.subscribed(a)
            let s = a.startMs
            let refunded = a.transaction(Self.original, more: [
                "revocationDate": .int(s + 5 * Self.day), "revocationReason": 1, "revocationType": "REFUND_PRORATED",
                "revocationPercentage": 67_932,
            ])
            try await a.notifyApplied(a.notification("n2", "REFUND", transaction: refunded, signedDate: s + 5 * Self.day))
            #expect(try await a.subscription(owner, Self.original)?.string("status") == "refunded")
            #expect(try await a.entitlement(owner)?["is_active"] == false)
            #expect(try await a.balance(owner) == 33, "floor(100 × 0.67932) = 67 taken back")
            try await a.notifyApplied(a.notification("n3", "REFUND_REVERSED", transaction: a.transaction(Self.original),
                                                     signedDate: s + 6 * Self.day))
            #expect(try await a.subscription(owner, Self.original)?.string("status") == "active")
            #expect(try await a.balance(owner) == 100)
            #expect(try await a.eventTypes(after: cursor) == ["REFUND", "REFUND_REVERSED"])
        }
    }

    @Test func aRefundWithoutAPercentageIsWhole() async throws {
        try await A.run { a in
            let (owner, _, _) = try await Self.subscribed(a)
            let refunded = a.transaction(Self.original, more: ["revocationDate": .int(a.startMs + 1), "revocationReason": 0])
            try await a.notifyApplied(a.notification("n2", "REFUND", transaction: refunded, signedDate: a.startMs + 1))
            #expect(try await a.balance(owner) == 0)
        }
    }

    @Test func revokeEndsAccessAndTakesBackEveryTerm() async throws {
        try await A.run { a in
            let (owner, _, cursor) = try await Self.subscribed(a)
            let s = a.startMs
            try await a.notifyApplied(a.notification("n2", "DID_RENEW", transaction: Self.renewal(a), signedDate: s + 30 * Self.day))
            let revoked = a.transaction(Self.original, more: ["revocationDate": .int(s + 31 * Self.day), "revocationType": "FAMILY_REVOKE"])
            try await a.notifyApplied(a.notification("n3", "REVOKE", transaction: revoked, signedDate: s + 31 * Self.day))
            #expect(try await a.subscription(owner, Self.original)?.string("status") == "revoked")
            let expiration = try #require(try await a.f.events(after: cursor).last { $0.string("type") == "EXPIRATION" })
            #expect(expiration.string("reason") == "revoked")
            #expect(try await a.balance(owner) == 0)
            #expect(try await a.balance(owner, "GEMS") == 0)
        }
    }

    // MARK: Extension

    @Test func renewalExtendedMovesTheExpiryLaterAndNeverBack() async throws {
        try await A.run { a in
            let (owner, _, cursor) = try await Self.subscribed(a)
            let s = a.startMs
            let later = a.transaction(Self.original, expiresMs: s + 40 * Self.day)
            try await a.notifyApplied(a.notification("n2", "RENEWAL_EXTENDED", transaction: later, signedDate: s + 2 * Self.day))
            #expect(try await a.subscription(owner, Self.original)?.int("expires_ms") == s + 40 * Self.day)
            #expect(try await a.entitlement(owner)?.int("expires_ms") == s + 40 * Self.day)
            // An older, shorter extension delivered late does not shorten it.
            let shorter = a.transaction(Self.original, expiresMs: s + 35 * Self.day)
            try await a.notifyApplied(a.notification("n3", "RENEWAL_EXTENDED", transaction: shorter, signedDate: s + 1 * Self.day))
            #expect(try await a.subscription(owner, Self.original)?.int("expires_ms") == s + 40 * Self.day)
            // Past the old end, still entitled.
            try await a.f.advance(31 * Self.day)
            #expect(try await a.entitlement(owner)?["is_active"] == true)
            #expect(try await a.eventTypes(after: cursor) == [])
        }
    }

    // MARK: Notifications that change nothing

    @Test(arguments: [
        ("REFUND_DECLINED", nil), ("PRICE_INCREASE", "PENDING"), ("PRICE_INCREASE", "ACCEPTED"), ("CONSUMPTION_REQUEST", nil),
        ("METADATA_UPDATE", nil), ("SOMETHING_APPLE_ADDS_LATER", nil),
    ] as [(String, String?)])
    func aNotificationThatReportsWithoutChangingIsRecordedOnce(_ type: String, _ subtype: String?) async throws {
        try await A.run { a in
            let (owner, _, _) = try await Self.subscribed(a)
            let document = try await a.get(owner)
            let events = try await a.f.events()
            let signed = a.notification("n2", type, subtype, transaction: a.transaction(Self.original),
                                        renewalInfo: a.renewalInfo(Self.original), signedDate: a.startMs + 1_000)
            let answer = try await a.notify(signed)
            #expect(answer["applied"] == true, "\(answer)")
            #expect(answer.string("profile_id") == owner)
            #expect(StoreFixture.holdings(try await a.get(owner)) == StoreFixture.holdings(document))
            #expect(try await a.f.events() == events)
            #expect(try await a.notify(signed)["applied"] == false)
        }
    }

    @Test func testAndSummaryNotificationsCarryNoTransactionAndAreRecordedOnce() async throws {
        try await A.run { a in
            for (uuid, type, subtype) in [("n-test", "TEST", nil), ("n-summary", "RENEWAL_EXTENSION", "SUMMARY")] as [(String, String, String?)] {
                let signed = a.notification(uuid, type, subtype)
                let answer = try await a.notify(signed)
                #expect(answer["applied"] == true, "\(answer)")
                #expect(answer["profile_id"] == .null)
                #expect(try await a.notify(signed)["applied"] == false)
            }
            #expect(try await a.f.events() == [])
        }
    }

    // MARK: Delivery: repeats, order, and purchases never seen

    @Test func aRepeatedNotificationUUIDIsAppliedOnceWhateverItCarries() async throws {
        try await A.run { a in
            let (owner, _, _) = try await Self.subscribed(a)
            let s = a.startMs
            try await a.notifyApplied(a.notification("n2", "DID_RENEW", transaction: Self.renewal(a), signedDate: s + 30 * Self.day))
            let document = try await a.get(owner)
            let events = try await a.f.events()
            let again = try await a.notify(a.notification("n2", "DID_RENEW", transaction: Self.renewal(a), signedDate: s + 30 * Self.day))
            #expect(again["applied"] == false)
            #expect(again.string("profile_id") == owner)
            let otherBody = try await a.notify(a.notification("n2", "EXPIRED", transaction: a.transaction(Self.original), signedDate: s + 31 * Self.day))
            #expect(otherBody["applied"] == false)
            #expect(try await a.get(owner) == document)
            #expect(try await a.f.events() == events)
        }
    }

    @Test func anOlderNotificationDeliveredLateNeverRollsBackANewerOne() async throws {
        try await A.run { a in
            let (owner, _, cursor) = try await Self.subscribed(a)
            let s = a.startMs
            // Apple signed "off" first and "on" later, but "on" arrives first.
            try await a.notifyApplied(a.notification("n-on", "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED",
                                                     transaction: a.transaction(Self.original), signedDate: s + 3_000))
            try await a.notifyApplied(a.notification("n-off", "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED",
                                                     transaction: a.transaction(Self.original), signedDate: s + 2_000))
            #expect(try await a.subscription(owner, Self.original)?["will_renew"] == true)
            // A renewal signed after an expiry it overtook stays; the late expiry changes nothing.
            try await a.notifyApplied(a.notification("n-renew", "DID_RENEW", transaction: Self.renewal(a), signedDate: s + 31 * Self.day))
            try await a.notifyApplied(a.notification("n-expired", "EXPIRED", "BILLING_RETRY", transaction: a.transaction(Self.original),
                                                     signedDate: s + 30 * Self.day))
            #expect(try await a.subscription(owner, Self.original)?.string("status") == "active")
            #expect(try await a.eventTypes(after: cursor) == ["RENEWAL"])
        }
    }

    @Test func aNotificationAboutASubscriptionNeverSeenCreatesItFromItsTransaction() async throws {
        try await A.run { a in
            let owner = try await a.f.create()
            let s = a.startMs
            // The SUBSCRIBED notification was lost; the first the server hears of it is a renewal.
            let named = try await a.notifyApplied(a.notification("n1", "DID_RENEW", transaction: Self.renewal(a, token: owner.token),
                                                                 signedDate: s + 30 * Self.day))
            #expect(named == owner.id)
            let subscription = try #require(try await a.subscription(owner.id, Self.original))
            #expect(subscription.string("status") == "active")
            #expect(subscription.int("expires_ms") == s + 60 * Self.day)
            // Without a token it is held unowned, and a restore claims it.
            let unowned = a.transaction("5200000001", purchasedMs: s, expiresMs: s + 30 * Self.day)
            let answer = try await a.notify(a.notification("n2", "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", transaction: unowned))
            #expect(answer["applied"] == true, "\(answer)")
            #expect(answer["profile_id"] == .null)
            let restored = try await a.restore(owner.id, [a.sign(unowned)])
            #expect(StoreFixture.subscription(restored, "5200000001")?["will_renew"] == false)
        }
    }
}
