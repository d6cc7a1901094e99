import GatehouseCore
import Testing

// MARK: Fixtures

/// PROTOCOL.md's example configuration.
private let sample = ProjectConfig(
    entitlements: [EntitlementDefinition(id: "pro")],
    products: [
        ProductDefinition(
            id: "pro_monthly", type: .subscription, entitlements: ["pro"],
            grants: [CurrencyGrant(currency: "COINS", amount: 100, on: .purchase)]),
        ProductDefinition(id: "lifetime", type: .nonConsumable, entitlements: ["pro"]),
        ProductDefinition(
            id: "coins_500", type: .consumable, grants: [CurrencyGrant(currency: "COINS", amount: 500, on: .purchase)]),
    ],
    currencies: [CurrencyDefinition(code: "COINS", name: "Coins")],
    offerings: [
        OfferingDefinition(
            id: "default", isDefault: true,
            packages: [PackageDefinition(id: "monthly", type: .monthly, product: "pro_monthly")])
    ],
    stores: StoreSettings(test: true, appStore: AppStoreSettings(bundleID: "com.example.app", environment: .production))
)

/// The sample with one change.
private func sample(_ change: (inout ProjectConfig) -> Void) -> ProjectConfig {
    var config = sample
    change(&config)
    return config
}

private func expectValid(_ config: ProjectConfig, sourceLocation: SourceLocation = #_sourceLocation) {
    do throws(GatehouseError) {
        try config.validate()
    } catch {
        Issue.record("expected a valid config, got \(error)", sourceLocation: sourceLocation)
    }
}

/// Expects `bad_request` whose message names `field`, and, when given, says exactly `problem`.
private func expectRejected(
    _ config: ProjectConfig, at field: String, _ problem: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do throws(GatehouseError) {
        try config.validate()
        Issue.record("expected \(field) to be rejected", sourceLocation: sourceLocation)
    } catch {
        #expect(error.code == .badRequest, sourceLocation: sourceLocation)
        if let problem {
            #expect(error.message == "\(field): \(problem)", sourceLocation: sourceLocation)
        } else {
            #expect(error.message.hasPrefix("\(field): "), "\(error.message)", sourceLocation: sourceLocation)
        }
    }
}

private func text(_ count: Int) -> String { String(repeating: "a", count: count) }

// MARK: The model

@Suite struct ProjectConfigModelTests {
    @Test func emptyConfigHasEveryDefault() {
        let config = ProjectConfig.empty
        #expect(config.entitlements.isEmpty && config.products.isEmpty)
        #expect(config.currencies.isEmpty && config.offerings.isEmpty)
        #expect(config.login == .alias)
        #expect(config.restore == .transfer)
        #expect(config.gracePeriodMs == 0)
        #expect(config.stores == StoreSettings(test: false, appStore: nil))
        expectValid(config)
    }

    @Test func protocolExampleIsValid() {
        expectValid(sample)
    }

    @Test func enumRawValuesAreTheWireSpellings() {
        #expect(ProductType.allCases.map(\.rawValue) == ["subscription", "non_consumable", "consumable"])
        #expect(GrantTrigger.allCases.map(\.rawValue) == ["purchase", "renewal", "both"])
        #expect(LoginMode.allCases.map(\.rawValue) == ["alias", "switch"])
        #expect(RestoreMode.allCases.map(\.rawValue) == ["transfer", "transfer_if_no_active", "keep"])
        #expect(AppStoreEnvironment.allCases.map(\.rawValue) == ["sandbox", "production"])
        #expect(
            PackageType.allCases.map(\.rawValue) == [
                "weekly", "monthly", "two_month", "three_month", "six_month", "annual", "lifetime", "custom",
            ])
    }

    @Test func definitionsTakeTheirDefaults() {
        #expect(CurrencyDefinition(code: "GEMS").name == "GEMS")
        #expect(PackageDefinition(id: "p", product: "x").type == .custom)
        #expect(OfferingDefinition(id: "o").isDefault == false)
        #expect(ProductDefinition(id: "x", type: .consumable).grants.isEmpty)
    }

    @Test func lookupsFindByIdOrNil() {
        #expect(sample.product(id: "lifetime")?.type == .nonConsumable)
        #expect(sample.product(id: "nope") == nil)
        #expect(sample.entitlement(id: "pro") == EntitlementDefinition(id: "pro"))
        #expect(sample.entitlement(id: "gold") == nil)
        #expect(sample.currency(code: "COINS")?.name == "Coins")
        #expect(sample.currency(code: "coins") == nil)
        #expect(sample.offering(id: "default")?.packages.count == 1)
        #expect(sample.defaultOffering?.id == "default")
        #expect(ProjectConfig.empty.defaultOffering == nil)
        #expect(sample.products[0].grant(of: "COINS")?.amount == 100)
        #expect(sample.products[1].grant(of: "COINS") == nil)
    }

    @Test func grantTriggersFireOnTheirTerms() {
        #expect(GrantTrigger.purchase.firesOnPurchase && !GrantTrigger.purchase.firesOnRenewal)
        #expect(!GrantTrigger.renewal.firesOnPurchase && GrantTrigger.renewal.firesOnRenewal)
        #expect(GrantTrigger.both.firesOnPurchase && GrantTrigger.both.firesOnRenewal)
    }

    @Test func appStoreEnvironmentMatchesApplesSpellingIgnoringCase() {
        #expect(AppStoreEnvironment.production.matches("Production"))
        #expect(AppStoreEnvironment.sandbox.matches("SANDBOX"))
        #expect(!AppStoreEnvironment.sandbox.matches("Production"))
        #expect(!AppStoreEnvironment.production.matches("Xcode"))
    }
}

// MARK: Ids

@Suite struct ProjectConfigIDTests {
    @Test func emptyIdsAreRejected() {
        expectRejected(sample { $0.entitlements[0].id = "" }, at: "entitlements[0].id", "must be 1–100 characters")
        expectRejected(sample { $0.products[1].id = "" }, at: "products[1].id", "must be 1–100 characters")
        expectRejected(sample { $0.offerings[0].id = "" }, at: "offerings[0].id", "must be 1–100 characters")
        expectRejected(
            sample { $0.offerings[0].packages[0].id = "" }, at: "offerings[0].packages[0].id",
            "must be 1–100 characters")
    }

    @Test func idsOfAHundredCharactersAreAcceptedAndLongerRejected() {
        let long = text(100)
        expectValid(
            sample {
                $0.entitlements.append(EntitlementDefinition(id: long))
                $0.products.append(ProductDefinition(id: long, type: .consumable))
                $0.offerings.append(
                    OfferingDefinition(id: long, packages: [PackageDefinition(id: long, product: long)]))
            })
        expectRejected(sample { $0.entitlements[0].id = text(101) }, at: "entitlements[0].id")
        expectRejected(sample { $0.products[2].id = text(101) }, at: "products[2].id")
        expectRejected(sample { $0.offerings[0].id = text(101) }, at: "offerings[0].id")
        expectRejected(sample { $0.offerings[0].packages[0].id = text(101) }, at: "offerings[0].packages[0].id")
    }

    @Test func idsCountCharactersNotBytes() {
        expectValid(sample { $0.entitlements.append(EntitlementDefinition(id: String(repeating: "é", count: 100))) })
    }

    @Test func idsWithControlCharactersAreRejected() {
        let problem = "must not contain control characters"
        expectRejected(sample { $0.entitlements[0].id = "pro\n" + "x" }, at: "entitlements[0].id", problem)
        expectRejected(sample { $0.products[0].id = "a\u{7}b" }, at: "products[0].id", problem)
        expectRejected(sample { $0.offerings[0].id = "a\u{0}b" }, at: "offerings[0].id", problem)
        expectRejected(
            sample { $0.offerings[0].packages[0].id = "a\u{7F}" }, at: "offerings[0].packages[0].id", problem)
    }

    @Test func idsWithWhitespaceAtEitherEndAreRejected() {
        let problem = "must not start or end with whitespace"
        expectRejected(sample { $0.entitlements[0].id = " pro" }, at: "entitlements[0].id", problem)
        expectRejected(sample { $0.products[0].id = "pro " }, at: "products[0].id", problem)
        expectRejected(sample { $0.offerings[0].id = "\u{A0}default" }, at: "offerings[0].id", problem)
        expectRejected(
            sample { $0.offerings[0].packages[0].id = "m\u{3000}" }, at: "offerings[0].packages[0].id", problem)
    }

    @Test func idsWithInnerSpacesAreAccepted() {
        expectValid(sample { $0.entitlements.append(EntitlementDefinition(id: "pro plan")) })
    }
}

// MARK: Currencies

@Suite struct ProjectConfigCurrencyTests {
    @Test func currencyCodesOfLettersDigitsAndUnderscoresAreAccepted() {
        expectValid(
            sample {
                $0.currencies.append(CurrencyDefinition(code: "gems_2"))
                $0.currencies.append(CurrencyDefinition(code: String(repeating: "Z", count: 32)))
            })
    }

    @Test(arguments: ["", "COINS-1", "CO INS", "МОНЕТЫ", "coins!", String(repeating: "A", count: 33)])
    func badCurrencyCodesAreRejected(code: String) {
        expectRejected(
            sample { $0.currencies.append(CurrencyDefinition(code: code)) }, at: "currencies[1].code",
            "must be 1–32 characters of A–Z, a–z, 0–9 and _")
    }

    @Test func badCurrencyNamesAreRejected() {
        expectRejected(sample { $0.currencies[0].name = "" }, at: "currencies[0].name", "must be 1–100 characters")
        expectRejected(sample { $0.currencies[0].name = text(101) }, at: "currencies[0].name")
        expectRejected(sample { $0.currencies[0].name = "Co\tins" }, at: "currencies[0].name")
    }
}

// MARK: Repeats

@Suite struct ProjectConfigRepeatTests {
    @Test func repeatedEntitlementIdIsRejected() {
        expectRejected(
            sample { $0.entitlements.append(EntitlementDefinition(id: "pro")) }, at: "entitlements[1].id",
            #"repeats "pro""#)
    }

    @Test func repeatedProductIdIsRejected() {
        expectRejected(
            sample { $0.products.append(ProductDefinition(id: "lifetime", type: .consumable)) }, at: "products[3].id",
            #"repeats "lifetime""#)
    }

    @Test func repeatedCurrencyCodeIsRejected() {
        expectRejected(
            sample {
                $0.currencies.append(CurrencyDefinition(code: "GEMS"))
                $0.currencies.append(CurrencyDefinition(code: "COINS"))
            }, at: "currencies[2].code", #"repeats "COINS""#)
    }

    @Test func currencyCodesDifferingInCaseAreDistinct() {
        expectValid(sample { $0.currencies.append(CurrencyDefinition(code: "coins")) })
    }

    @Test func repeatedOfferingIdIsRejected() {
        expectRejected(
            sample { $0.offerings.append(OfferingDefinition(id: "default")) }, at: "offerings[1].id",
            #"repeats "default""#)
    }

    @Test func repeatedPackageIdWithinAnOfferingIsRejected() {
        expectRejected(
            sample { $0.offerings[0].packages.append(PackageDefinition(id: "monthly", product: "lifetime")) },
            at: "offerings[0].packages[1].id", #"repeats "monthly""#)
    }

    @Test func samePackageIdInTwoOfferingsIsAccepted() {
        expectValid(
            sample {
                $0.offerings.append(
                    OfferingDefinition(id: "sale", packages: [PackageDefinition(id: "monthly", product: "pro_monthly")])
                )
            })
    }

    @Test func repeatedEntitlementInOneProductIsRejected() {
        expectRejected(
            sample { $0.products[1].entitlements.append("pro") }, at: "products[1].entitlements[1]", #"repeats "pro""#)
    }

    @Test func twoGrantsOfOneCurrencyInOneProductAreRejected() {
        expectRejected(
            sample { $0.products[2].grants.append(CurrencyGrant(currency: "COINS", amount: 1, on: .purchase)) },
            at: "products[2].grants[1].currency", #"repeats "COINS""#)
    }

    @Test func repeatedValuesAreQuotedSoOddCharactersShow() {
        expectRejected(
            sample {
                $0.entitlements = [EntitlementDefinition(id: #"a"b"#), EntitlementDefinition(id: #"a"b"#)]
                $0.products = []
                $0.offerings = []
            }, at: "entitlements[1].id", #"repeats "a\"b""#)
    }
}

// MARK: References

@Suite struct ProjectConfigReferenceTests {
    @Test func productNamingUnknownEntitlementIsRejected() {
        expectRejected(
            sample { $0.products[1].entitlements = ["gold"] }, at: "products[1].entitlements[0]",
            #"unknown entitlement "gold""#)
    }

    @Test func grantNamingUnknownCurrencyIsRejected() {
        expectRejected(
            sample { $0.products[0].grants[0].currency = "GEMS" }, at: "products[0].grants[0].currency",
            #"unknown currency "GEMS""#)
    }

    @Test func packageNamingUnknownProductIsRejected() {
        expectRejected(
            sample { $0.offerings[0].packages[0].product = "pro_yearly" }, at: "offerings[0].packages[0].product",
            #"unknown product "pro_yearly""#)
    }

    @Test func referencesAreCaseSensitive() {
        expectRejected(sample { $0.products[0].entitlements = ["Pro"] }, at: "products[0].entitlements[0]")
    }
}

// MARK: Grants

@Suite struct ProjectConfigGrantTests {
    @Test(arguments: [GrantTrigger.renewal, .both])
    func renewalGrantsOnOneTimeProductsAreRejected(on: GrantTrigger) {
        expectRejected(
            sample { $0.products[2].grants[0].on = on }, at: "products[2].grants[0].on",
            "\"\(on.rawValue)\" needs a subscription product, and this one is \"consumable\"")
        expectRejected(
            sample { $0.products[1].grants = [CurrencyGrant(currency: "COINS", amount: 5, on: on)] },
            at: "products[1].grants[0].on")
    }

    @Test(arguments: GrantTrigger.allCases)
    func everyTriggerIsAllowedOnSubscriptions(on: GrantTrigger) {
        expectValid(sample { $0.products[0].grants[0].on = on })
    }

    @Test(arguments: [Int64(0), -1, -2_000_000_000, 2_000_000_001, .max, .min])
    func amountsOutsideOneToTwoBillionAreRejected(amount: Int64) {
        expectRejected(
            sample { $0.products[0].grants[0].amount = amount }, at: "products[0].grants[0].amount",
            "out of range 1…2000000000")
    }

    @Test(arguments: [Int64(1), 2_000_000_000])
    func amountsAtTheBoundsAreAccepted(amount: Int64) {
        expectValid(sample { $0.products[0].grants[0].amount = amount })
    }
}

// MARK: Offerings

@Suite struct ProjectConfigDefaultOfferingTests {
    @Test func twoDefaultOfferingsAreRejected() {
        expectRejected(
            sample {
                $0.offerings.append(OfferingDefinition(id: "plain"))
                $0.offerings.append(OfferingDefinition(id: "sale", isDefault: true))
            }, at: "offerings[2].is_default", #"only one offering may be the default, and "default" is"#)
    }

    @Test func noDefaultOfferingIsAccepted() {
        expectValid(sample { $0.offerings[0].isDefault = false })
    }

    @Test func offeringWithoutPackagesIsAccepted() {
        expectValid(sample { $0.offerings.append(OfferingDefinition(id: "empty")) })
    }
}

@Suite struct ProjectConfigLimitTests {
    @Test(arguments: [Int64(1), 1_000, 1_000_000])
    func sdkCreatesPerSecondInRangeIsAccepted(rate: Int64) {
        expectValid(sample { $0.limits.sdkCreatesPerSecond = rate })
    }

    @Test(arguments: [Int64(0), -1, 1_000_001, .max, .min])
    func sdkCreatesPerSecondOutOfRangeIsRejected(rate: Int64) {
        expectRejected(
            sample { $0.limits.sdkCreatesPerSecond = rate }, at: "limits.sdk_creates_per_second",
            "out of range 1…1000000")
    }

    @Test func theBurstIsTenTimesTheRate() {
        #expect(ProjectLimits().sdkCreatesPerSecond == 1_000)
        #expect(ProjectLimits().sdkCreatesBurst == 10_000)
        #expect(ProjectLimits(sdkCreatesPerSecond: 1_000_000).sdkCreatesBurst == 10_000_000)
    }
}

@Suite struct ProjectConfigOfferingTextTests {
    @Test func descriptionUpToOneThousandCharactersIsAccepted() {
        expectValid(sample { $0.offerings[0].description = "" })
        expectValid(sample { $0.offerings[0].description = text(1_000) })
    }

    @Test func longerDescriptionIsRejected() {
        expectRejected(
            sample { $0.offerings[0].description = text(1_001) }, at: "offerings[0].description",
            "must be 0–1000 characters")
    }

    @Test func metadataUpToFourKiBIsAccepted() {
        let padding = ProjectConfig.Limits.offeringMetadataBytes - #"{"k":""}"#.utf8.count
        expectValid(sample { $0.offerings[0].metadataJSON = #"{"k":""# + text(padding) + #""}"# })
    }

    @Test func largerMetadataIsRejected() {
        let padding = ProjectConfig.Limits.offeringMetadataBytes - #"{"k":""}"#.utf8.count + 1
        expectRejected(
            sample { $0.offerings[0].metadataJSON = #"{"k":""# + text(padding) + #""}"# }, at: "offerings[0].metadata",
            "must take at most 4096 bytes as compact JSON")
    }
}

// MARK: Sizes

@Suite struct ProjectConfigSizeTests {
    @Test func entitlementsAreBoundedAtOneThousand() {
        let many = (0..<1_000).map { EntitlementDefinition(id: "e\($0)") }
        expectValid(ProjectConfig(entitlements: many))
        expectRejected(
            ProjectConfig(entitlements: many + [EntitlementDefinition(id: "one_more")]), at: "entitlements",
            "has more than 1000 items")
    }

    @Test func productsAreBoundedAtOneThousand() {
        let many = (0..<1_000).map { ProductDefinition(id: "p\($0)", type: .consumable) }
        expectValid(ProjectConfig(products: many))
        expectRejected(
            ProjectConfig(products: many + [ProductDefinition(id: "one_more", type: .consumable)]), at: "products",
            "has more than 1000 items")
    }

    @Test func currenciesAreBoundedAtOneHundred() {
        let many = (0..<100).map { CurrencyDefinition(code: "C\($0)") }
        expectValid(ProjectConfig(currencies: many))
        expectRejected(
            ProjectConfig(currencies: many + [CurrencyDefinition(code: "MORE")]), at: "currencies",
            "has more than 100 items")
    }

    @Test func offeringsAreBoundedAtOneHundred() {
        let many = (0..<100).map { OfferingDefinition(id: "o\($0)") }
        expectValid(ProjectConfig(offerings: many))
        expectRejected(
            ProjectConfig(offerings: many + [OfferingDefinition(id: "more")]), at: "offerings",
            "has more than 100 items")
    }

    @Test func packagesAreBoundedAtFiftyPerOffering() {
        let many = (0..<50).map { PackageDefinition(id: "k\($0)", product: "lifetime") }
        expectValid(sample { $0.offerings[0].packages = many })
        expectRejected(
            sample { $0.offerings[0].packages = many + [PackageDefinition(id: "more", product: "lifetime")] },
            at: "offerings[0].packages", "has more than 50 items")
    }

    @Test func grantsAreBoundedAtTenPerProduct() {
        let currencies = (0..<11).map { CurrencyDefinition(code: "C\($0)") }
        let grants = currencies.map { CurrencyGrant(currency: $0.code, amount: 1, on: .purchase) }
        let product = { (count: Int) in
            ProductDefinition(id: "p", type: .consumable, grants: Array(grants.prefix(count)))
        }
        expectValid(ProjectConfig(products: [product(10)], currencies: currencies))
        expectRejected(
            ProjectConfig(products: [product(11)], currencies: currencies), at: "products[0].grants",
            "has more than 10 items")
    }
}

// MARK: Settings

@Suite struct ProjectConfigSettingsTests {
    private static let yearMs: Int64 = 365 * 24 * 60 * 60 * 1_000

    @Test func gracePeriodUpToAYearIsAccepted() {
        expectValid(sample { $0.gracePeriodMs = Self.yearMs })
        expectValid(sample { $0.gracePeriodMs = 3 * 24 * 60 * 60 * 1_000 })
    }

    @Test(arguments: [Int64(-1), yearMs + 1, .max])
    func gracePeriodOutsideZeroToAYearIsRejected(ms: Int64) {
        expectRejected(sample { $0.gracePeriodMs = ms }, at: "grace_period_ms", "out of range 0…31536000000")
    }

    @Test func bundleIdIsOneTo255Characters() {
        expectValid(sample { $0.stores.appStore?.bundleID = text(255) })
        expectRejected(
            sample { $0.stores.appStore?.bundleID = "" }, at: "stores.app_store.bundle_id", "must be 1–255 characters")
        expectRejected(sample { $0.stores.appStore?.bundleID = text(256) }, at: "stores.app_store.bundle_id")
        expectRejected(
            sample { $0.stores.appStore?.bundleID = "com.example\n" }, at: "stores.app_store.bundle_id",
            "must not contain control characters")
    }

    @Test(arguments: [Int64(0), -1, .min])
    func nonPositiveAppAppleIdIsRejected(id: Int64) {
        expectRejected(sample { $0.stores.appStore?.appAppleID = id }, at: "stores.app_store.app_apple_id")
    }

    @Test func positiveAppAppleIdIsAccepted() {
        expectValid(sample { $0.stores.appStore?.appAppleID = 1_234_567_890 })
    }

    @Test func everyLoginAndRestoreModeIsAccepted() {
        for login in LoginMode.allCases {
            for restore in RestoreMode.allCases {
                expectValid(
                    sample {
                        $0.login = login
                        $0.restore = restore
                    })
            }
        }
    }
}

// MARK: The stored In-App Purchase key

/// `config.get` never shows the private key, so a config put back without one keeps the stored
/// key when it names the same key (DESIGN.md, "Asking Apple").
@Suite struct InAppPurchaseKeyKept {
    static let pem = "-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----\n"

    static func config(_ key: InAppPurchaseKey?) -> ProjectConfig {
        sample { $0.stores.appStore?.apiKey = key }
    }

    static let stored = config(InAppPurchaseKey(issuerID: "i", keyID: "k", privateKeyPEM: pem))

    @Test func theSameKeyWithoutItsPrivateKeyKeepsTheStoredOne() throws {
        let put = Self.config(InAppPurchaseKey(issuerID: "i", keyID: "k", privateKeyPEM: nil))
        #expect(try put.keepingPrivateKey(of: Self.stored) == Self.stored)
    }

    @Test func aPrivateKeyGivenReplacesTheStoredOne() throws {
        let put = Self.config(InAppPurchaseKey(issuerID: "i", keyID: "k", privateKeyPEM: Self.pem + "\n"))
        #expect(try put.keepingPrivateKey(of: Self.stored) == put)
        #expect(try Self.config(nil).keepingPrivateKey(of: Self.stored) == Self.config(nil), "a config without a key drops it")
    }

    @Test(arguments: [
        (InAppPurchaseKey(issuerID: "i", keyID: "other", privateKeyPEM: nil), stored),
        (InAppPurchaseKey(issuerID: "other", keyID: "k", privateKeyPEM: nil), stored),
        (InAppPurchaseKey(issuerID: "i", keyID: "k", privateKeyPEM: nil), config(nil)),
    ])
    func anotherKeyWithoutItsPrivateKeyIsRejected(_ key: InAppPurchaseKey, _ stored: ProjectConfig) {
        do throws(GatehouseError) {
            _ = try Self.config(key).keepingPrivateKey(of: stored)
            Issue.record("the key was taken without a private key")
        } catch {
            #expect(error.code == .badRequest)
            #expect(error.message.hasPrefix("stores.app_store.api.private_key: "), "\(error.message)")
        }
    }
}
