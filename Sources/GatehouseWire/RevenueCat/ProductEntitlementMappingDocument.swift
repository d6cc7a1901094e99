public import GatehouseCore

/// The body of `GET /v1/product_entitlement_mapping` (HTTP.md, "Endpoints"):
/// `{product_entitlement_mapping: {product: {product_identifier, entitlements}}}`, every product
/// of the config in its order.
///
/// The iOS SDK computes entitlements from it while the server is down, so it says what the
/// server's own rule grants (``Entitlements``): a consumable grants nothing, and an entitlement
/// the config does not name, or names twice in one product, is left out or listed once.
public enum ProductEntitlementMappingDocument {
    public static func json(_ config: ProjectConfig) -> JSONObject {
        let known = Set(config.entitlements.map(\.id))
        var listed = Set<String>()
        var mapping = JSONObject()
        for product in config.products where listed.insert(product.id).inserted {
            var seen = Set<String>()
            let entitlements =
                product.type == .consumable ? [] : product.entitlements.filter { known.contains($0) && seen.insert($0).inserted }
            mapping.append(product.id, [
                "product_identifier": .string(product.id),
                "entitlements": .array(entitlements.map(JSONValue.string)),
            ])
        }
        return ["product_entitlement_mapping": .object(mapping)]
    }
}
