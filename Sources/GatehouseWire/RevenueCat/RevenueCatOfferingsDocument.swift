public import GatehouseCore

/// The body of `GET /v1/subscribers/{id}/offerings` (HTTP.md, "Endpoints"):
/// `{current_offering_id, offerings: [{identifier, description, metadata, packages:
/// [{identifier, platform_product_identifier}]}]}`, from the config alone.
///
/// Both SDKs require `description` (a string) and Android also `current_offering_id` (the key,
/// `null` allowed), so the body always has them: the offering's id stands in for a missing
/// description, `{}` for missing metadata. The SDKs tell a package's type from its identifier, so
/// a typed package shows RevenueCat's `$rc_…` identifier and a custom one its own id.
public enum RevenueCatOfferingsDocument {
    public static func json(_ config: ProjectConfig) -> JSONObject {
        [
            "current_offering_id": .optional(config.defaultOffering?.id, JSONValue.string),
            "offerings": .array(config.offerings.map(offering)),
        ]
    }

    static func offering(_ offering: OfferingDefinition) -> JSONValue {
        [
            "identifier": .string(offering.id),
            "description": .string(offering.description ?? offering.id),
            "metadata": offering.metadata.isNull ? .object(JSONObject()) : offering.metadata,
            "packages": .array(offering.packages.map { package in
                ["identifier": .string(packageIdentifier(package)), "platform_product_identifier": .string(package.product)]
            }),
        ]
    }

    /// `$rc_weekly` … `$rc_lifetime` for a typed package, the package's id for a custom one.
    public static func packageIdentifier(_ package: PackageDefinition) -> String {
        switch package.type {
        case .weekly: "$rc_weekly"
        case .monthly: "$rc_monthly"
        case .twoMonth: "$rc_two_month"
        case .threeMonth: "$rc_three_month"
        case .sixMonth: "$rc_six_month"
        case .annual: "$rc_annual"
        case .lifetime: "$rc_lifetime"
        case .custom: package.id
        }
    }
}
