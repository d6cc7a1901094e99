import GatehouseCore
import GatehouseWire
import Testing

// The bodies made from the config and balances, decoded the way RevenueCat's SDKs decode them
// (`IOSDecoders`, `AndroidDecoders`).

@Suite("The other bodies decode as the SDKs decode them")
struct OtherBodiesSDKDecoding {
    private static let config = ProjectConfig(
        entitlements: [EntitlementDefinition(id: "pro")],
        products: [ProductDefinition(id: "pro_monthly", type: .subscription, entitlements: ["pro"]),
                   ProductDefinition(id: "gems_100", type: .consumable)],
        currencies: [CurrencyDefinition(code: "GOLD_COIN", name: "Gold")],
        offerings: [
            OfferingDefinition(id: "default", isDefault: true, metadataJSON: #"{"nested":{"a_b":[1,null,true]}}"#, packages: [
                PackageDefinition(id: "monthly", type: .monthly, product: "pro_monthly"),
                PackageDefinition(id: "gems_pack", product: "gems_100"),
            ]),
            OfferingDefinition(id: "empty"),
        ])

    @Test func offerings() throws {
        let body = RevenueCatOfferingsDocument.json(Self.config)
        let offerings = try IOSDecoders.decode(IOSOfferings.self, JSONWriter.serialize(.object(body)))
        #expect(offerings.currentOfferingId == "default")
        #expect(offerings.offerings.map(\.identifier) == ["default", "empty"])
        #expect(offerings.offerings.map(\.description) == ["default", "empty"])
        #expect(offerings.offerings[0].packages.map(\.identifier) == ["$rc_monthly", "gems_pack"])
        #expect(offerings.offerings[0].packages.map(\.platformProductIdentifier) == ["pro_monthly", "gems_100"])
        #expect(offerings.offerings[0].metadata?["nested"] != nil)
        try AndroidDecoders.offerings(body)
        var plain = Self.config
        plain.offerings[0].isDefault = false
        try AndroidDecoders.offerings(RevenueCatOfferingsDocument.json(plain))
        #expect(try IOSDecoders.decode(IOSOfferings.self, JSONWriter.serialize(.object(RevenueCatOfferingsDocument.json(plain))))
            .currentOfferingId == nil)
    }

    @Test func productEntitlementMapping() throws {
        let body = ProductEntitlementMappingDocument.json(Self.config)
        let mapping = try IOSDecoders.decode(IOSProductEntitlementMapping.self, JSONWriter.serialize(.object(body)))
        #expect(mapping.productEntitlementMapping["pro_monthly"]?.productIdentifier == "pro_monthly")
        #expect(mapping.productEntitlementMapping["pro_monthly"]?.entitlements == ["pro"])
        #expect(mapping.productEntitlementMapping["gems_100"]?.entitlements == [])
    }

    @Test func virtualCurrencies() throws {
        let body = VirtualCurrenciesDocument.json(balances: [CurrencyBalance(code: "GOLD_COIN", balance: 1_999_999_999)], config: Self.config)
        let currencies = try IOSDecoders.decode(IOSVirtualCurrencies.self, JSONWriter.serialize(.object(body)))
        let gold = try #require(currencies.virtualCurrencies["GOLD_COIN"])
        #expect(gold.balance == 1_999_999_999)
        #expect(gold.name == "Gold")
        #expect(gold.code == "GOLD_COIN")
        #expect(gold.description == nil)
        // Android reads `balance` as a 32-bit Int: every balance Gatehouse allows fits.
        #expect(Int64(Int32.max) >= 2_000_000_000)
    }

    @Test func introEligibility() throws {
        let body = IntroEligibilityDocument.json(productIdentifiers: ["pro_monthly", "pro_yearly"], subscriptions: [])
        let eligibility = try IOSDecoders.decode(Dictionary<String, Bool?>.self, JSONWriter.serialize(.object(body)))
        #expect(eligibility == ["pro_monthly": true, "pro_yearly": true])
    }
}
