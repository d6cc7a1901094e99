import GatehouseCore
import GatehouseWire
import Testing

// HTTP.md, "Endpoints": the bodies made from the project's config and balances (offerings, the
// product-entitlement mapping, virtual currencies) and intro eligibility.

private let config = ProjectConfig(
    entitlements: [EntitlementDefinition(id: "pro"), EntitlementDefinition(id: "premium")],
    products: [
        ProductDefinition(id: "w", type: .subscription, entitlements: ["pro"]),
        ProductDefinition(id: "m", type: .subscription, entitlements: ["pro", "premium", "pro"]),
        ProductDefinition(id: "life", type: .nonConsumable, entitlements: ["pro"]),
        ProductDefinition(id: "coins", type: .consumable, entitlements: ["pro"]),
    ],
    currencies: [CurrencyDefinition(code: "GOLD_COIN", name: "Gold"), CurrencyDefinition(code: "GEMS")],
    offerings: [
        OfferingDefinition(id: "plain", packages: [PackageDefinition(id: "coins_pack", product: "coins")]),
        OfferingDefinition(
            id: "default", isDefault: true, description: "Standard", metadataJSON: #"{"title":"Go pro","rank":2,"tags":["a"]}"#,
            packages: [
                PackageDefinition(id: "weekly", type: .weekly, product: "w"),
                PackageDefinition(id: "monthly", type: .monthly, product: "m"),
                PackageDefinition(id: "two", type: .twoMonth, product: "m"),
                PackageDefinition(id: "three", type: .threeMonth, product: "m"),
                PackageDefinition(id: "six", type: .sixMonth, product: "m"),
                PackageDefinition(id: "year", type: .annual, product: "m"),
                PackageDefinition(id: "forever", type: .lifetime, product: "life"),
                PackageDefinition(id: "special", type: .custom, product: "w"),
            ]),
    ])

@Suite("Offerings")
struct RevenueCatOfferingsTests {
    @Test func packagesOfATypeShowRevenueCatsIdentifierAndCustomOnesTheirOwn() throws {
        let body = RevenueCatOfferingsDocument.json(config)
        let offerings = try #require(body["offerings"]?.arrayValue)
        let packages = try #require(offerings.last?.objectValue?["packages"]?.arrayValue)
        #expect(packages.map { $0.objectValue?["identifier"] } == [
            "$rc_weekly", "$rc_monthly", "$rc_two_month", "$rc_three_month", "$rc_six_month", "$rc_annual", "$rc_lifetime", "special",
        ])
        #expect(packages.map { $0.objectValue?["platform_product_identifier"] } == ["w", "m", "m", "m", "m", "m", "life", "w"])
        #expect(packages.allSatisfy { $0.objectValue?.keys == ["identifier", "platform_product_identifier"] })
    }

    @Test func descriptionAndMetadataComeFromTheConfigElseTheIDAndEmpty() throws {
        let body = RevenueCatOfferingsDocument.json(config)
        #expect(body.keys == ["current_offering_id", "offerings"])
        #expect(body["current_offering_id"] == "default")
        let offerings = try #require(body["offerings"]?.arrayValue).compactMap(\.objectValue)
        #expect(offerings.map(\.keys) == [["identifier", "description", "metadata", "packages"], ["identifier", "description", "metadata", "packages"]])
        #expect(offerings[0]["identifier"] == "plain")
        #expect(offerings[0]["description"] == "plain")
        #expect(offerings[0]["metadata"] == .object(JSONObject()))
        #expect(offerings[1]["description"] == "Standard")
        #expect(offerings[1]["metadata"] == ["title": "Go pro", "rank": 2, "tags": ["a"]])
    }

    @Test func withoutADefaultOfferingTheCurrentOneIsNullNotMissing() {
        var plain = config
        plain.offerings = [OfferingDefinition(id: "only")]
        let body = RevenueCatOfferingsDocument.json(plain)
        #expect(body["current_offering_id"] == .null)
        #expect(RevenueCatOfferingsDocument.json(.empty) == ["current_offering_id": nil, "offerings": []])
    }
}

@Suite("The product-entitlement mapping")
struct ProductEntitlementMappingTests {
    @Test func everyProductMapsToWhatTheServerWouldGrant() throws {
        let mapping = try #require(ProductEntitlementMappingDocument.json(config)["product_entitlement_mapping"]?.objectValue)
        #expect(mapping.keys == ["w", "m", "life", "coins"])
        #expect(mapping["w"] == ["product_identifier": "w", "entitlements": ["pro"]])
        #expect(mapping["m"] == ["product_identifier": "m", "entitlements": ["pro", "premium"]])
        #expect(mapping["life"] == ["product_identifier": "life", "entitlements": ["pro"]])
        // A consumable grants nothing, whatever the config lists for it.
        #expect(mapping["coins"] == ["product_identifier": "coins", "entitlements": []])
    }
}

@Suite("Virtual currencies")
struct VirtualCurrenciesTests {
    @Test func everyCurrencyShowsItsBalanceNameCodeAndANullDescription() throws {
        let body = VirtualCurrenciesDocument.json(
            balances: [CurrencyBalance(code: "GOLD_COIN", balance: 2_000_000_000), CurrencyBalance(code: "GEMS", balance: 0),
                       CurrencyBalance(code: "GONE", balance: 5)],
            config: config)
        let currencies = try #require(body["virtual_currencies"]?.objectValue)
        #expect(currencies.keys == ["GOLD_COIN", "GEMS"])
        #expect(currencies["GOLD_COIN"] == ["balance": 2_000_000_000, "name": "Gold", "code": "GOLD_COIN", "description": nil])
        #expect(currencies["GEMS"] == ["balance": 0, "name": "GEMS", "code": "GEMS", "description": nil])
    }
}

@Suite("Intro eligibility")
struct IntroEligibilityTests {
    @Test func aProductIsEligibleUntilTheProfileHadASubscriptionToIt() throws {
        var world = RCWorld()
        let id = try world.create()
        try world.report(id, RCCatalogue.subscription("s1", expiresMs: RCCatalogue.startMs + 1_000))
        world.advance(to: RCCatalogue.startMs + 2_000)
        let body = IntroEligibilityDocument.json(
            productIdentifiers: ["pro_yearly", "pro_monthly", "unknown", "pro_monthly"], subscriptions: world.holdings(id).subscriptions)
        #expect(body == ["pro_yearly": true, "pro_monthly": false, "unknown": true])
    }
}
