import GatehouseCore
import GatehouseRuntime
import GatehouseWire

/// The bodies of the RevenueCat endpoints, from what the ops answered (the encoders are
/// GatehouseWire's, in `RevenueCat/`).
enum RevenueCatBodies {
    /// The subscriber object; the secret key's shows the attributes with their times.
    static func customerInfo(_ view: ProfileView, secret: Bool) -> JSONObject {
        let purchases = CustomerInfoPurchases(
            holdings: view.holdings, grants: view.grants, formerSubscriptions: view.former.subscriptions,
            formerPurchases: view.former.purchases
        )
        let attributes = secret ? view.profile.attributes.sorted { $0.key < $1.key }.map { ($0.key, $0.value.value, $0.value.updatedMs) } : nil
        return CustomerInfoDocument.json(
            profile: view.profile, purchases: purchases, config: view.config, nowMs: view.nowMs,
            originalAppUserID: originalAppUserID(view.profile), attributes: attributes
        )
    }

    /// HTTP.md: the install id the profile was created with, else its customer user id, else its id.
    static func originalAppUserID(_ profile: Profile) -> String {
        profile.installID?.description ?? profile.customerUserID ?? profile.id.description
    }

    static func offerings(_ config: ProjectConfig) -> JSONObject { RevenueCatOfferingsDocument.json(config) }

    static func productEntitlementMapping(_ config: ProjectConfig) -> JSONObject { ProductEntitlementMappingDocument.json(config) }

    static func virtualCurrencies(_ view: ProfileView) -> JSONObject {
        VirtualCurrenciesDocument.json(balances: view.holdings.balances, config: view.config)
    }

    /// A product the profile ever subscribed to, lost to a transfer included, is not eligible.
    static func introEligibility(_ products: [String], _ view: ProfileView) -> JSONObject {
        IntroEligibilityDocument.json(productIdentifiers: products, subscriptions: view.holdings.subscriptions + view.former.subscriptions)
    }
}
