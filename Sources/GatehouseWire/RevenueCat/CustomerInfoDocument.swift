public import GatehouseCore

/// The subscriber object of RevenueCat's REST API v1 (HTTP.md, "The subscriber object
/// (CustomerInfo)"): `{request_date, request_date_ms, subscriber}`, the body of
/// `GET /v1/subscribers/{id}` and of every endpoint that answers with the customer.
///
/// The SDKs judge an entitlement by its `expires_date` alone (active while it is absent, or not
/// before `request_date` on iOS, after it on Android) and take every other field from the
/// purchase its `product_identifier` names, so two things hold in every body:
/// - each entitlement names a key of `subscriptions` or `non_subscriptions`, with that
///   purchase's dates;
/// - an `expires_date` is after `nowMs` (or `null`, for life) exactly when the source is live. A
///   source that lapsed before its end (refunded, revoked, billing retry, an expiry the store
///   sent early, a grant revoked, a purchase lost to a transfer) shows the time it lapsed where
///   the model knows it, else its start, and always a time before `nowMs`; a lapsed
///   non-consumable or grant for life shows its start rather than `null`, which would read as
///   active for ever.
public enum CustomerInfoDocument {
    /// `originalAppUserID` is the caller's (the install id the profile was made with, else its
    /// customer user id, else its profile id). `attributes` are shown only when given: `nil` for
    /// the public key, which may not read them.
    public static func json(
        profile: Profile, purchases: CustomerInfoPurchases, config: ProjectConfig, nowMs: Int64,
        originalAppUserID: String, attributes: [(key: String, value: String, updatedMs: Int64)]?
    ) -> JSONObject {
        let byProduct = PurchasesByProduct(purchases, nowMs: nowMs)
        let grants = purchases.grants.filter { config.entitlement(id: $0.entitlementID) != nil }
        var subscriber: JSONObject = [
            "original_app_user_id": .string(originalAppUserID),
            "original_application_version": .null,
            "original_purchase_date": .null,
            "management_url": .optional(managementURL(byProduct, nowMs: nowMs), JSONValue.string),
            "first_seen": RevenueCatDate.json(ms: profile.createdMs),
            "last_seen": RevenueCatDate.json(ms: profile.lastSeenMs),
            "entitlements": .object(entitlements(purchases.holdings.entitlements, byProduct, grants: grants, nowMs: nowMs)),
            "subscriptions": .object(subscriptions(byProduct, grants: grants, nowMs: nowMs)),
            "non_subscriptions": .object(nonSubscriptions(byProduct)),
            "other_purchases": .object(JSONObject()),
        ]
        if let attributes {
            subscriber.append("subscriber_attributes", subscriberAttributes(attributes))
        }
        return [
            "request_date": RevenueCatDate.json(ms: nowMs),
            "request_date_ms": .int(nowMs),
            "subscriber": .object(subscriber),
        ]
    }

    /// The subscription page of the store of the live subscription that lasts longest; `nil`
    /// when none is live or its store has no page (the SDKs read `""` as a broken URL).
    static func managementURL(_ byProduct: PurchasesByProduct, nowMs: Int64) -> String? {
        let live = byProduct.subscriptions.values.filter { $0.isLive(nowMs: nowMs) }
        let furthest = live.max { ($0.lastsUntilMs, $0.subscription.store) < ($1.lastsUntilMs, $1.subscription.store) }
        return furthest.flatMap { RevenueCatStore.managementURL($0.subscription.store) }
    }

    /// Every entitlement with a purchase in the body to name, by id.
    static func entitlements(
        _ views: [EntitlementView], _ byProduct: PurchasesByProduct, grants: [PromotionalGrant], nowMs: Int64
    ) -> JSONObject {
        var object = JSONObject()
        for view in views.sorted(by: { $0.entitlementID < $1.entitlementID }) {
            if let entitlement = entitlement(view, byProduct, grants: grants, nowMs: nowMs) {
                object.append(view.entitlementID, entitlement)
            }
        }
        return object
    }

    /// `{expires_date, grace_period_expires_date, product_identifier, purchase_date}` of the
    /// purchase the view's source names; `nil` when the body holds none.
    static func entitlement(
        _ view: EntitlementView, _ byProduct: PurchasesByProduct, grants: [PromotionalGrant], nowMs: Int64
    ) -> JSONValue? {
        let dates: (product: String, purchasedMs: Int64, expiresMs: Int64?, graceExpiresMs: Int64?)
        switch view.source {
        case .subscription:
            guard let product = view.productID, let shown = byProduct.subscriptions[product] else { return nil }
            dates = (product, shown.latestPurchaseMs, shown.shownExpiresMs(nowMs: nowMs), shown.shownGraceExpiresMs)
        case .oneTimePurchase:
            guard let product = view.productID, let shown = byProduct.oneTime[product], let purchase = shown.entitling else {
                return nil
            }
            dates = (product, purchase.purchasedMs, shownExpiresMs(purchase, lost: shown.lost, nowMs: nowMs), nil)
        case .promotional:
            guard let grant = grants.first(where: { $0.entitlementID == view.entitlementID }) else { return nil }
            dates = (PromotionalDuration.productIdentifier(of: grant), grant.grantedMs, shownExpiresMs(grant, nowMs: nowMs), nil)
        }
        return [
            "expires_date": RevenueCatDate.json(ms: dates.expiresMs),
            "grace_period_expires_date": RevenueCatDate.json(ms: dates.graceExpiresMs),
            "product_identifier": .string(dates.product),
            "purchase_date": RevenueCatDate.json(ms: dates.purchasedMs),
        ]
    }

    /// Store subscriptions by product, and each known entitlement's grant as
    /// `rc_promo_<entitlement>_<duration>`, keys in order.
    static func subscriptions(_ byProduct: PurchasesByProduct, grants: [PromotionalGrant], nowMs: Int64) -> JSONObject {
        var members = byProduct.subscriptions.map { JSONObject.Member(key: $0.key, value: $0.value.json(nowMs: nowMs)) }
        members += grants.map { JSONObject.Member(key: PromotionalDuration.productIdentifier(of: $0), value: grantJSON($0, nowMs: nowMs)) }
        return JSONObject(members: members.sorted { $0.key < $1.key })
    }

    /// One-time purchases by product, keys in order, each list oldest first: the SDKs take the
    /// last one as the product's latest.
    static func nonSubscriptions(_ byProduct: PurchasesByProduct) -> JSONObject {
        JSONObject(members: byProduct.oneTime.sorted { $0.key < $1.key }.map { product, shown in
            JSONObject.Member(key: product, value: .array(shown.purchases.map(purchaseJSON)))
        })
    }

    /// `{key: {value, updated_at_ms}}`, keys in order.
    static func subscriberAttributes(_ attributes: [(key: String, value: String, updatedMs: Int64)]) -> JSONValue {
        .object(JSONObject(members: attributes.sorted { $0.key < $1.key }.map { attribute in
            JSONObject.Member(key: attribute.key, value: ["value": .string(attribute.value), "updated_at_ms": .int(attribute.updatedMs)])
        }))
    }
}
