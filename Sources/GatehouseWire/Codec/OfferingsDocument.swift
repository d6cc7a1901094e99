public import GatehouseCore

/// The answer of `offerings` (PROTOCOL.md, "Sync and push"): the config's offerings with each
/// package's product resolved, and `current`, the default offering's id.
public enum OfferingsDocument {
    public static func json(_ config: ProjectConfig) -> JSONObject {
        var products: [String: ProductDefinition] = [:]
        for product in config.products where products[product.id] == nil { products[product.id] = product }
        return [
            "current": .optional(config.defaultOffering?.id) { .string($0) },
            "offerings": .array(config.offerings.map { offering in
                [
                    "id": .string(offering.id),
                    "is_default": .bool(offering.isDefault),
                    "packages": .array(offering.packages.map { package in
                        [
                            "id": .string(package.id),
                            "type": .string(package.type.rawValue),
                            "product": products[package.product].map(product) ?? .null,
                        ]
                    }),
                ]
            }),
        ]
    }

    /// A product as a paywall needs it: its id, type, the entitlements it unlocks and the
    /// currency it grants.
    static func product(_ product: ProductDefinition) -> JSONValue {
        [
            "id": .string(product.id),
            "type": .string(product.type.rawValue),
            "entitlements": .array(product.entitlements.map { .string($0) }),
            "grants": .array(product.grants.map { grant in
                ["currency": .string(grant.currency), "amount": .int(grant.amount), "on": .string(grant.on.rawValue)]
            }),
        ]
    }
}
