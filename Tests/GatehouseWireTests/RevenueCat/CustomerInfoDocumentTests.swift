import GatehouseCore
import GatehouseWire
import Testing

// HTTP.md, "The subscriber object (CustomerInfo)": the body field by field, from states the
// domain's rules reach.

private typealias C = RCCatalogue

@Suite("The subscriber object's envelope and profile fields")
struct CustomerInfoEnvelope {
    @Test func aNewProfileHasEveryMemberWithEmptyPurchaseObjects() throws {
        var world = RCWorld()
        let id = try world.create()
        world.nowMs += 5_123
        let body = world.body(id)
        #expect(body.keys == ["request_date", "request_date_ms", "subscriber"])
        #expect(body["request_date"] == .string("2026-11-29T10:00:05.123Z"))
        #expect(body["request_date_ms"] == .int(C.startMs + 5_123))
        let subscriber = try body.object("subscriber")
        #expect(subscriber.keys == [
            "original_app_user_id", "original_application_version", "original_purchase_date", "management_url", "first_seen",
            "last_seen", "entitlements", "subscriptions", "non_subscriptions", "other_purchases",
        ])
        #expect(subscriber["original_app_user_id"] == .string(id.description))
        #expect(subscriber["original_application_version"] == .null)
        #expect(subscriber["original_purchase_date"] == .null)
        #expect(subscriber["management_url"] == .null)
        #expect(subscriber["first_seen"] == .string("2026-11-29T10:00:00.000Z"))
        for key in ["entitlements", "subscriptions", "non_subscriptions", "other_purchases"] {
            #expect(subscriber[key] == .object(JSONObject()), "\(key)")
        }
    }

    @Test func theCallerNamesTheOriginalAppUserID() throws {
        var world = RCWorld()
        let id = try world.create()
        let body = CustomerInfoDocument.json(
            profile: world.profile(id), purchases: CustomerInfoPurchases(state: world.state, profileID: id, nowMs: world.nowMs),
            config: world.state.config, nowMs: world.nowMs, originalAppUserID: "$RCAnonymousID:0123456789abcdef0123456789abcdef",
            attributes: nil)
        #expect(try body.object("subscriber")["original_app_user_id"] == .string("$RCAnonymousID:0123456789abcdef0123456789abcdef"))
    }

    @Test func firstSeenIsTheCreationAndLastSeenTheLastChange() throws {
        var world = RCWorld()
        let id = try world.create()
        world.nowMs += 60_000
        try world.identify(id, "customer-1")
        let subscriber = world.subscriber(id)
        #expect(try subscriber.dateMs("first_seen") == C.startMs)
        #expect(try subscriber.dateMs("last_seen") == C.startMs + 60_000)
    }

    @Test func attributesAreShownOnlyWhenGivenKeyedInOrder() throws {
        var world = RCWorld()
        let id = try world.create()
        #expect(world.subscriber(id)["subscriber_attributes"] == nil)
        let given = [(key: "$email", value: "a@b.example", updatedMs: Int64(7)), (key: "custom_key", value: "x", updatedMs: 9),
                     (key: "$displayName", value: "A", updatedMs: 8)]
        let subscriber = try world.body(id, attributes: given).object("subscriber")
        #expect(subscriber.keys.last == "subscriber_attributes")
        let attributes = try subscriber.object("subscriber_attributes")
        #expect(attributes.keys == ["$displayName", "$email", "custom_key"])
        #expect(attributes["custom_key"] == ["value": "x", "updated_at_ms": 9])
        #expect(try world.body(id, attributes: []).object("subscriber")["subscriber_attributes"] == .object(JSONObject()))
    }
}

@Suite("Dates in the RevenueCat bodies")
struct RevenueCatDates {
    @Test func datesAreUTCWithThreeFractionDigitsAndZ() {
        #expect(RevenueCatDate.string(ms: 0) == "1970-01-01T00:00:00.000Z")
        #expect(RevenueCatDate.string(ms: 1_795_946_400_123) == "2026-11-29T10:00:00.123Z")
        #expect(RevenueCatDate.string(ms: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
        #expect(RevenueCatDate.json(ms: nil) == .null)
    }

    @Test func instantsOutsideFourDigitYearsAreHeldToThem() {
        #expect(RevenueCatDate.string(ms: RevenueCatDate.latestMs) == "9999-12-31T23:59:59.999Z")
        #expect(RevenueCatDate.string(ms: Int64(1) << 53) == "9999-12-31T23:59:59.999Z")
        #expect(RevenueCatDate.string(ms: .max) == "9999-12-31T23:59:59.999Z")
        #expect(RevenueCatDate.string(ms: -1) == "1970-01-01T00:00:00.000Z")
    }

    @Test func everyDateOfARichBodyIsAnISODateOrNull() throws {
        let (world, ids) = try RichWorld.make()
        for id in ids {
            var dates = 0
            try RichWorld.forEachDate(in: .object(world.body(id))) { key, value in
                dates += 1
                if value.isNull { return }
                let text = try #require(value.stringValue, "\(key) is not a string")
                #expect(ISO8601Text.ms(text) != nil, "\(key): \(text)")
            }
            #expect(dates > 10)
        }
    }
}

@Suite("Subscriptions in the subscriber object")
struct CustomerInfoSubscriptions {
    @Test func aSubscriptionShowsEveryField() throws {
        var world = RCWorld()
        let id = try world.create()
        try world.report(id, C.subscription("s1", purchasedMs: C.startMs, expiresMs: C.startMs + 7 * C.dayMs, periodType: .trial))
        let subscriptions = try world.subscriber(id).object("subscriptions")
        #expect(subscriptions.keys == ["pro_monthly"])
        let entry = try subscriptions.object("pro_monthly")
        #expect(entry.keys == [
            "purchase_date", "original_purchase_date", "expires_date", "store", "is_sandbox", "period_type", "ownership_type",
            "unsubscribe_detected_at", "billing_issues_detected_at", "grace_period_expires_date", "refunded_at",
            "store_transaction_id", "price",
        ])
        #expect(entry["purchase_date"] == "2026-11-29T10:00:00.000Z")
        #expect(entry["original_purchase_date"] == "2026-11-29T10:00:00.000Z")
        #expect(entry["expires_date"] == "2026-12-06T10:00:00.000Z")
        #expect(entry["store"] == "app_store")
        #expect(entry["is_sandbox"] == true)
        #expect(entry["period_type"] == "trial")
        #expect(entry["ownership_type"] == "PURCHASED")
        for key in ["unsubscribe_detected_at", "billing_issues_detected_at", "grace_period_expires_date", "refunded_at", "price"] {
            #expect(entry[key] == .null, "\(key)")
        }
        #expect(entry["store_transaction_id"] == "s1")
    }

    @Test func aRenewalMovesThePurchaseAndTheTransactionNotTheOriginalPurchase() throws {
        var world = RCWorld()
        let id = try world.create()
        try world.report(id, C.subscription("s1"))
        try world.notify("s1", .renewal(C.term("s2", purchasedMs: C.startMs + 30 * C.dayMs, expiresMs: C.startMs + 60 * C.dayMs)))
        let entry = try world.subscriber(id).object("subscriptions", "pro_monthly")
        #expect(try entry.dateMs("purchase_date") == C.startMs + 30 * C.dayMs)
        #expect(try entry.dateMs("original_purchase_date") == C.startMs)
        #expect(try entry.dateMs("expires_date") == C.startMs + 60 * C.dayMs)
        #expect(entry["store_transaction_id"] == "s2")
    }

    @Test func turningAutoRenewOffIsDatedAndTurningItOnClearsIt() throws {
        var world = RCWorld()
        let id = try world.create()
        try world.report(id, C.subscription("s1"))
        try world.notify("s1", atMs: C.startMs + 1_000, .cancel)
        #expect(try world.subscriber(id).object("subscriptions", "pro_monthly").dateMs("unsubscribe_detected_at") == C.startMs + 1_000)
        try world.notify("s1", atMs: C.startMs + 2_000, .uncancel)
        #expect(try world.subscriber(id).object("subscriptions", "pro_monthly")["unsubscribe_detected_at"] == .null)
    }

    @Test func aBillingIssueInGraceKeepsAccessUntilTheEndOfGrace() throws {
        var world = RCWorld()
        let id = try world.create()
        let expires = C.startMs + 30 * C.dayMs
        try world.report(id, C.subscription("s1", expiresMs: expires))
        world.nowMs = expires - 1_000
        try world.notify("s1", .billingIssue(graceExpiresMs: expires + 16 * C.dayMs))
        world.nowMs = expires + C.dayMs
        let subscriber = world.subscriber(id)
        let entry = try subscriber.object("subscriptions", "pro_monthly")
        #expect(try entry.dateMs("billing_issues_detected_at") == expires - 1_000)
        #expect(try entry.dateMs("grace_period_expires_date") == expires + 16 * C.dayMs)
        #expect(try entry.dateMs("expires_date") == expires + 16 * C.dayMs)
        let pro = try subscriber.object("entitlements", "pro")
        #expect(try pro.dateMs("expires_date") == expires + 16 * C.dayMs)
        #expect(try pro.dateMs("grace_period_expires_date") == expires + 16 * C.dayMs)
        #expect(subscriber["management_url"] == .string(RevenueCatStore.appStoreManagementURL))
    }

    @Test func aBillingIssueWithoutGraceLapsesWhenItIsReported() throws {
        var world = RCWorld()
        let id = try world.create()
        try world.report(id, C.subscription("s1", expiresMs: C.startMs + 30 * C.dayMs))
        world.nowMs = C.startMs + 10 * C.dayMs
        try world.notify("s1", .billingIssue(graceExpiresMs: nil))
        world.nowMs += 5_000
        let subscriber = world.subscriber(id)
        let entry = try subscriber.object("subscriptions", "pro_monthly")
        #expect(try entry.dateMs("billing_issues_detected_at") == C.startMs + 10 * C.dayMs)
        #expect(try entry.dateMs("expires_date") == C.startMs + 10 * C.dayMs)
        #expect(entry["grace_period_expires_date"] == .null)
        #expect(try subscriber.object("entitlements", "pro").dateMs("expires_date") == C.startMs + 10 * C.dayMs)
        #expect(subscriber["management_url"] == .null)
    }

    @Test func aRefundOfTheCurrentTermIsDatedAndEndsAccessThen() throws {
        var world = RCWorld()
        let id = try world.create()
        try world.report(id, C.subscription("s1", expiresMs: C.startMs + 30 * C.dayMs))
        world.nowMs = C.startMs + 3 * C.dayMs
        try world.notify("s1", .refund(transactionID: "s1", fraction: 1))
        world.nowMs += 1
        let subscriber = world.subscriber(id)
        let entry = try subscriber.object("subscriptions", "pro_monthly")
        #expect(try entry.dateMs("refunded_at") == C.startMs + 3 * C.dayMs)
        #expect(try entry.dateMs("expires_date") == C.startMs + 3 * C.dayMs)
        #expect(try subscriber.object("entitlements", "pro").dateMs("expires_date") == C.startMs + 3 * C.dayMs)
    }

    @Test func aRevokeEndsAccessWhenTheStoreRevoked() throws {
        var world = RCWorld()
        let id = try world.create()
        try world.report(id, C.subscription("s1", expiresMs: C.startMs + 30 * C.dayMs, familyShared: true))
        #expect(try world.subscriber(id).object("subscriptions", "pro_monthly")["ownership_type"] == "FAMILY_SHARED")
        world.nowMs = C.startMs + 2 * C.dayMs
        try world.notify("s1", .revoke)
        world.nowMs += 1
        let entry = try world.subscriber(id).object("subscriptions", "pro_monthly")
        #expect(try entry.dateMs("expires_date") == C.startMs + 2 * C.dayMs)
        #expect(entry["refunded_at"] == .null)
    }

    @Test func anEarlyExpiryFromTheStoreNeverShowsAFutureEnd() throws {
        var world = RCWorld()
        let id = try world.create()
        try world.report(id, C.subscription("s1", expiresMs: C.startMs + 30 * C.dayMs))
        world.nowMs = C.startMs + 4 * C.dayMs
        try world.notify("s1", .expire)
        let pro = try world.subscriber(id).object("entitlements", "pro")
        #expect(try #require(try pro.dateMs("expires_date")) < world.nowMs)
    }

    @Test func aSubscriptionEndingAtTheRequestShowsAnEndBeforeIt() throws {
        // iOS holds an entitlement active while its expiry is not before `request_date`.
        var world = RCWorld()
        let id = try world.create()
        try world.report(id, C.subscription("s1", expiresMs: C.startMs + C.dayMs))
        world.nowMs = C.startMs + C.dayMs
        #expect(world.holdings(id).entitlements.first?.isActive == false)
        let subscriber = world.subscriber(id)
        #expect(try subscriber.object("entitlements", "pro").dateMs("expires_date") == world.nowMs - 1)
        #expect(try subscriber.object("subscriptions", "pro_monthly").dateMs("expires_date") == world.nowMs - 1)
        world.nowMs += 1
        #expect(try world.subscriber(id).object("entitlements", "pro").dateMs("expires_date") == C.startMs + C.dayMs)
    }

    @Test func ofSeveralSubscriptionsOfAProductTheLiveOneLastingLongestIsShown() throws {
        var world = RCWorld()
        let id = try world.create()
        try world.report(id, C.subscription("s1", expiresMs: C.startMs + 30 * C.dayMs))
        try world.report(id, C.subscription("s2", expiresMs: C.startMs + 40 * C.dayMs))
        try world.report(id, C.subscription("s3", expiresMs: C.startMs + 90 * C.dayMs))
        #expect(try world.subscriber(id).object("subscriptions", "pro_monthly")["store_transaction_id"] == "s3")
        try world.notify("s3", .refund(transactionID: "s3", fraction: 1))
        #expect(try world.subscriber(id).object("subscriptions", "pro_monthly")["store_transaction_id"] == "s2")
        world.advance(to: C.startMs + 50 * C.dayMs)
        // All lapsed: the newest, then the one lasting longest.
        #expect(try world.subscriber(id).object("subscriptions", "pro_monthly")["store_transaction_id"] == "s3")
    }

    @Test func theManagementURLIsTheStoreOfTheLiveSubscriptionLastingLongest() throws {
        var world = RCWorld()
        let id = try world.create()
        try world.report(id, C.subscription("a1", expiresMs: C.startMs + 30 * C.dayMs))
        #expect(world.subscriber(id)["management_url"] == .string("https://apps.apple.com/account/subscriptions"))
        try world.report(id, C.subscription("t1", product: "premium_monthly", store: "test", expiresMs: C.startMs + 60 * C.dayMs))
        #expect(world.subscriber(id)["management_url"] == .null)
        try world.report(id, C.subscription("g1", product: "pro_yearly", store: "google_play", expiresMs: C.startMs + 365 * C.dayMs))
        #expect(world.subscriber(id)["management_url"] == .string("https://play.google.com/store/account/subscriptions"))
        world.advance(to: C.startMs + 400 * C.dayMs)
        #expect(world.subscriber(id)["management_url"] == .null)
    }

    @Test func storesAreNamedAsRevenueCatNamesThem() {
        #expect(RevenueCatStore.name("app_store") == "app_store")
        #expect(RevenueCatStore.name("test") == "test_store")
        #expect(RevenueCatStore.name("google_play") == "play_store")
        #expect(RevenueCatStore.name("stripe") == "stripe")
        #expect(RevenueCatStore.name("promotional") == "promotional")
        #expect(RevenueCatStore.managementURL("stripe") == nil)
        #expect(RevenueCatStore.managementURL("test") == nil)
    }
}

@Suite("One-time purchases in the subscriber object")
struct CustomerInfoNonSubscriptions {
    @Test func oneTimePurchasesAreListedByProductOldestFirstWithBothIDs() throws {
        var world = RCWorld()
        let id = try world.create()
        try world.report(id, C.oneTime("c2", product: "coins", purchasedMs: C.startMs + 2_000))
        try world.report(id, C.oneTime("c1", product: "coins", store: "test", purchasedMs: C.startMs + 1_000))
        try world.report(id, C.oneTime("l1"))
        let nonSubscriptions = try world.subscriber(id).object("non_subscriptions")
        #expect(nonSubscriptions.keys == ["coins", "lifetime"])
        let coins = try #require(nonSubscriptions["coins"]?.arrayValue)
        #expect(coins.map { $0.objectValue?["id"] } == ["c1", "c2"])
        let first = try #require(coins.first?.objectValue)
        #expect(first.keys == ["id", "store_transaction_id", "purchase_date", "original_purchase_date", "store", "is_sandbox", "price"])
        #expect(first["store_transaction_id"] == "c1")
        #expect(first["store"] == "test_store")
        #expect(first["is_sandbox"] == false)
        #expect(try first.dateMs("purchase_date") == C.startMs + 1_000)
        #expect(try first.dateMs("original_purchase_date") == C.startMs + 1_000)
        #expect(first["price"] == .null)
    }
}

@Suite("Entitlements in the subscriber object")
struct CustomerInfoEntitlements {
    @Test func anEntitlementShowsTheDatesOfTheSourceLastingLongest() throws {
        var world = RCWorld()
        let id = try world.create()
        try world.report(id, C.subscription("s1", expiresMs: C.startMs + 30 * C.dayMs))
        try world.report(id, C.subscription("y1", product: "pro_yearly", purchasedMs: C.startMs + 5, expiresMs: C.startMs + 365 * C.dayMs))
        let pro = try world.subscriber(id).object("entitlements", "pro")
        #expect(pro.keys == ["expires_date", "grace_period_expires_date", "product_identifier", "purchase_date"])
        #expect(pro["product_identifier"] == "pro_yearly")
        #expect(try pro.dateMs("expires_date") == C.startMs + 365 * C.dayMs)
        #expect(try pro.dateMs("purchase_date") == C.startMs + 5)
        #expect(pro["grace_period_expires_date"] == .null)
        try world.report(id, C.oneTime("l1"))
        let lifetime = try world.subscriber(id).object("entitlements", "pro")
        #expect(lifetime["product_identifier"] == "lifetime")
        #expect(lifetime["expires_date"] == .null)
    }

    @Test func aRefundedLifetimePurchaseShowsItsPurchaseAsItsEndNotNull() throws {
        var world = RCWorld()
        let id = try world.create()
        try world.report(id, C.oneTime("l1"))
        world.nowMs += C.dayMs
        try world.notify("l1", .refund(transactionID: "l1", fraction: 1))
        let pro = try world.subscriber(id).object("entitlements", "pro")
        #expect(pro["product_identifier"] == "lifetime")
        #expect(try pro.dateMs("expires_date") == C.startMs)
    }

    @Test func aPurchaseLostToATransferKeepsItsEntitlementListedAndLapsed() throws {
        var world = RCWorld()
        let first = try world.create()
        let second = try world.create()
        let transaction = C.subscription("s1", expiresMs: C.startMs + 30 * C.dayMs)
        try world.report(first, transaction)
        world.nowMs += 1_000
        try world.restore(second, [transaction])
        let lost = world.subscriber(first)
        let pro = try lost.object("entitlements", "pro")
        #expect(pro["product_identifier"] == "pro_monthly")
        #expect(try #require(try pro.dateMs("expires_date")) < world.nowMs)
        #expect(try lost.object("subscriptions", "pro_monthly").dateMs("expires_date") == C.startMs)
        #expect(lost["management_url"] == .null)
        let won = try world.subscriber(second).object("entitlements", "pro")
        #expect(try won.dateMs("expires_date") == C.startMs + 30 * C.dayMs)
    }

    @Test func everyEntitlementNamesAPurchaseOfTheBodyAndIsActiveExactlyWhenLive() throws {
        for seed in 1...30 {
            var run = RandomRun(seed: UInt64(seed))
            for _ in 0..<30 {
                try run.step()
                for id in run.profiles { try RichWorld.checkEntitlements(run.world, id) }
            }
        }
    }
}

@Suite("Promotional grants in the subscriber object")
struct CustomerInfoGrants {
    @Test func aGrantShowsAsAPromotionalSubscriptionNamedByItsDuration() throws {
        var world = RCWorld()
        let id = try world.create()
        try world.grant(id, "pro", expiresMs: PromotionalDuration.monthly.end(fromMs: world.nowMs))
        try world.grant(id, "extra", expiresMs: nil)
        try world.grant(id, "premium", expiresMs: world.nowMs + 5 * C.dayMs)
        let subscriber = world.subscriber(id)
        let subscriptions = try subscriber.object("subscriptions")
        #expect(subscriptions.keys == ["rc_promo_extra_lifetime", "rc_promo_premium_custom", "rc_promo_pro_monthly"])
        let monthly = try subscriptions.object("rc_promo_pro_monthly")
        #expect(monthly["store"] == "promotional")
        #expect(monthly["is_sandbox"] == false)
        #expect(monthly["period_type"] == "normal")
        #expect(monthly["ownership_type"] == "PURCHASED")
        #expect(try monthly.dateMs("purchase_date") == C.startMs)
        #expect(try monthly.dateMs("original_purchase_date") == C.startMs)
        #expect(try monthly.dateMs("expires_date") == C.startMs + 31 * C.dayMs)
        #expect(try subscriptions.object("rc_promo_extra_lifetime")["expires_date"] == .null)
        let pro = try subscriber.object("entitlements", "pro")
        #expect(pro["product_identifier"] == "rc_promo_pro_monthly")
        #expect(try pro.dateMs("purchase_date") == C.startMs)
        #expect(try subscriber.object("entitlements", "extra")["expires_date"] == .null)
        #expect(subscriber["management_url"] == .null)
    }

    @Test func aGrantThatIsNotTheEntitlementsSourceIsStillListed() throws {
        var world = RCWorld()
        let id = try world.create()
        try world.report(id, C.subscription("s1", expiresMs: C.startMs + 300 * C.dayMs))
        try world.grant(id, "pro", expiresMs: PromotionalDuration.weekly.end(fromMs: world.nowMs))
        let subscriber = world.subscriber(id)
        #expect(try subscriber.object("entitlements", "pro")["product_identifier"] == "pro_monthly")
        #expect(try subscriber.object("subscriptions").keys == ["pro_monthly", "rc_promo_pro_weekly"])
    }

    @Test func aRevokedGrantForLifeLapsesAtItsStart() throws {
        var world = RCWorld()
        let id = try world.create()
        try world.grant(id, "extra", expiresMs: nil)
        world.nowMs += C.dayMs
        try world.revoke(id, "extra")
        let subscriber = world.subscriber(id)
        #expect(try subscriber.object("subscriptions", "rc_promo_extra_lifetime").dateMs("expires_date") == C.startMs)
        #expect(try subscriber.object("entitlements", "extra").dateMs("expires_date") == C.startMs)
    }

    @Test func aGrantThatRanOutShowsItsEnd() throws {
        var world = RCWorld()
        let id = try world.create()
        try world.grant(id, "extra", expiresMs: PromotionalDuration.daily.end(fromMs: world.nowMs))
        world.advance(to: C.startMs + 2 * C.dayMs)
        #expect(try world.subscriber(id).object("entitlements", "extra").dateMs("expires_date") == C.startMs + C.dayMs)
    }
}
