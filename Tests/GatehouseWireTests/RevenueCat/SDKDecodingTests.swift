import Foundation
import GatehouseCore
import GatehouseWire
import Testing

// The bodies decoded the way RevenueCat's SDKs decode them (`IOSDecoders`, `AndroidDecoders`):
// what the SDK reads must be what the body meant, and a body that breaks a rule of theirs must
// fail here.

private typealias C = RCCatalogue

@Suite("The subscriber object decodes as the SDKs decode it")
struct CustomerInfoSDKDecoding {
    @Test func theIOSSDKReadsTheDatesAndFieldsTheBodyMeans() throws {
        let (world, ids) = try RichWorld.make()
        let body = world.body(ids[0], attributes: [(key: "custom_key", value: "v", updatedMs: 1_700_000_000_123)])
        let info = try IOSDecoders.decode(IOSCustomerInfo.self, JSONWriter.serialize(.object(body)))
        info.checkNothingIsDropped()
        #expect(info.requestDate == Date(timeIntervalSince1970: Double(world.nowMs) / 1_000))
        #expect(info.subscriber.originalAppUserId == ids[0].description)
        #expect(info.subscriber.firstSeen == Date(timeIntervalSince1970: Double(C.startMs) / 1_000))
        #expect(info.subscriber.managementUrl == nil)
        // The subscription the second profile restored from the first.
        let restorer = try IOSDecoders.decode(IOSCustomerInfo.self, JSONWriter.serialize(.object(world.body(ids[1]))))
        #expect(restorer.subscriber.managementUrl == URL(string: "https://apps.apple.com/account/subscriptions"))
        let monthly = try #require(restorer.subscriber.subscriptions?["pro_monthly"])
        #expect(monthly.purchaseDate == Date(timeIntervalSince1970: Double(C.startMs + 30 * C.dayMs) / 1_000))
        #expect(monthly.store == "app_store")
        #expect(monthly.periodType == "normal")
        #expect(monthly.isSandbox == true)
        let premium = try #require(info.subscriber.subscriptions?["premium_monthly"])
        #expect(premium.store == "test_store")
        #expect(premium.gracePeriodExpiresDate == Date(timeIntervalSince1970: Double(C.startMs + 5 * C.dayMs) / 1_000))
        #expect(premium.billingIssuesDetectedAt != nil)
        let coins = try #require(info.subscriber.nonSubscriptions?["coins"]?.last)
        #expect(coins.id == "c1")
        #expect(coins.storeTransactionId == "c1")
        #expect(info.subscriber.entitlements?["extra"]?.productIdentifier == "rc_promo_extra_three_day")
        #expect(info.subscriber.subscriberAttributes?["custom_key"]?.value == "v")
        #expect(info.subscriber.subscriberAttributes?["custom_key"]?.updatedAtMs == 1_700_000_000_123)
    }

    @Test func bothSDKsKeepEveryEntitlementOfEveryProfileOfARichState() throws {
        let (world, ids) = try RichWorld.make()
        for id in ids { try RichWorld.checkEntitlements(world, id) }
    }

    @Test func theIOSMirrorRefusesWhatTheSDKRefuses() throws {
        let (world, ids) = try RichWorld.make()
        let body = world.body(ids[0])
        func decodes(_ change: (inout JSONObject) -> Void) -> Bool {
            var changed = body
            change(&changed)
            return (try? IOSDecoders.decode(IOSCustomerInfo.self, JSONWriter.serialize(.object(changed)))) != nil
        }
        #expect(decodes { _ in })
        #expect(!decodes { $0["request_date"] = .int(world.nowMs) })
        #expect(!decodes { $0["request_date"] = "2026-11-29T10:00:00" })
        #expect(!decodes { $0["request_date"] = "2026-11-29 10:00:00Z" })
        #expect(!decodes { $0.editSubscriber { $0["first_seen"] = nil } })
        #expect(!decodes { $0.editSubscriber { $0["original_app_user_id"] = nil } })
        #expect(!decodes { $0.editSubscriber { $0["entitlements"] = ["pro": ["expires_date": nil]] } })
        #expect(decodes { $0.edit("subscriber", "subscriptions", "pro_yearly") { $0["price"] = ["amount": 1.5, "currency": "USD"] } })
        #expect(!decodes { $0.edit("subscriber", "subscriptions", "pro_yearly") { $0["price"] = ["amount": 1.5, "currency": nil] } })
        #expect(!decodes { $0.edit("subscriber", "subscriptions", "pro_yearly") { $0["purchase_date"] = nil } })
        #expect(!decodes { $0.edit("subscriber", "subscriptions", "pro_yearly") { $0["expires_date"] = .int(world.nowMs) } })
        #expect(!decodes { $0.edit("subscriber", "non_subscriptions") { nonSubscriptions in
            var coins = nonSubscriptions["coins"]?.arrayValue?.first?.objectValue ?? JSONObject()
            coins["is_sandbox"] = nil
            nonSubscriptions["coins"] = [.object(coins)]
        } })
    }

    @Test func theAndroidMirrorRefusesWhatTheSDKRefuses() throws {
        let (world, ids) = try RichWorld.make()
        let body = world.body(ids[0])
        func reads(_ change: (inout JSONObject) -> Void) -> Bool {
            var changed = body
            change(&changed)
            return (try? AndroidDecoders.customerInfo(changed)) != nil
        }
        #expect(reads { _ in })
        #expect(!reads { $0.editSubscriber { $0["subscriptions"] = nil } })
        #expect(!reads { $0.editSubscriber { $0["non_subscriptions"] = nil } })
        #expect(!reads { $0.editSubscriber { $0["first_seen"] = "12345-01-01T00:00:00.000Z" } })
        #expect(!reads { $0.editSubscriber { $0["entitlements"] = ["pro": ["product_identifier": "coins", "expires_date": nil]] } })
    }

    @Test func aDateFarOutStillDecodes() throws {
        var world = RCWorld()
        let id = try world.create()
        try world.report(id, C.subscription("s1", expiresMs: Int64(1) << 53))
        try RichWorld.checkEntitlements(world, id)
        #expect(try world.subscriber(id).object("subscriptions", "pro_monthly")["expires_date"] == "9999-12-31T23:59:59.999Z")
    }
}

extension JSONObject {
    /// Changes the object at `path` in place.
    mutating func edit(_ path: String..., change: (inout JSONObject) -> Void) {
        edit(path[...], change: change)
    }

    private mutating func edit(_ path: ArraySlice<String>, change: (inout JSONObject) -> Void) {
        guard let key = path.first else { return change(&self) }
        var inner = self[key]?.objectValue ?? JSONObject()
        inner.edit(path.dropFirst(), change: change)
        self[key] = .object(inner)
    }

    mutating func editSubscriber(_ change: (inout JSONObject) -> Void) {
        edit("subscriber", change: change)
    }
}
