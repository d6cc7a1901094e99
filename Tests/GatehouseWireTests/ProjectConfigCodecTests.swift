import GatehouseCore
import GatehouseWire
import Testing

// MARK: Fixtures

/// PROTOCOL.md's example, verbatim.
private let protocolExample = """
    {
      "entitlements": [{"id": "pro"}],
      "products": [
        {"id": "pro_monthly", "type": "subscription", "entitlements": ["pro"],
         "grants": [{"currency": "COINS", "amount": 100, "on": "purchase"}]},
        {"id": "lifetime", "type": "non_consumable", "entitlements": ["pro"]},
        {"id": "coins_500", "type": "consumable", "grants": [{"currency": "COINS", "amount": 500, "on": "purchase"}]}
      ],
      "currencies": [{"code": "COINS", "name": "Coins"}],
      "offerings": [{"id": "default", "is_default": true,
                     "packages": [{"id": "monthly", "type": "monthly", "product": "pro_monthly"}]}],
      "login": "alias",
      "restore": "transfer",
      "grace_period_ms": 0,
      "stores": {"test": true, "app_store": {"bundle_id": "com.example.app", "environment": "production"}}
    }
    """

/// The example as the model, which is what it must decode to.
private let exampleConfig = ProjectConfig(
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

/// A small valid document that tests break one field at a time.
private let base: JSONObject = [
    "entitlements": [["id": "pro"]],
    "products": [
        [
            "id": "pro_monthly", "type": "subscription", "entitlements": ["pro"],
            "grants": [["currency": "COINS", "amount": 100, "on": "purchase"]],
        ],
        ["id": "coins_500", "type": "consumable", "grants": [["currency": "COINS", "amount": 500, "on": "purchase"]]],
    ],
    "currencies": [["code": "COINS", "name": "Coins"]],
    "offerings": [
        [
            "id": "default", "is_default": true,
            "packages": [["id": "monthly", "type": "monthly", "product": "pro_monthly"]],
        ]
    ],
    "login": "alias",
    "restore": "transfer",
    "grace_period_ms": 0,
    "stores": ["test": true, "app_store": ["bundle_id": "com.example.app", "environment": "production"]],
]

/// `base` with the value at `path` (keys and array indexes) replaced, or removed when `nil`.
private func base(setting path: [PathStep], to value: JSONValue?) -> JSONObject {
    replacing(.object(base), at: path[...], with: value).objectValue!
}

private enum PathStep: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    case key(String)
    case index(Int)
    init(stringLiteral value: String) { self = .key(value) }
    init(integerLiteral value: Int) { self = .index(value) }
}

private func replacing(_ json: JSONValue, at path: ArraySlice<PathStep>, with value: JSONValue?) -> JSONValue {
    guard let step = path.first else { return value ?? .null }
    switch (step, json) {
    case (.key(let key), .object(var object)):
        object[key] = path.count == 1 ? value : replacing(object[key] ?? .null, at: path.dropFirst(), with: value)
        return .object(object)
    case (.index(let index), .array(var array)):
        array[index] = replacing(array[index], at: path.dropFirst(), with: value)
        return .array(array)
    default:
        preconditionFailure("path does not fit the fixture")
    }
}

private func number(_ text: String) -> JSONValue { .number(JSONNumber(uncheckedText: text)) }

private func decode(_ json: JSONObject) throws(GatehouseError) -> ProjectConfig {
    try ProjectConfig(json: json)
}

/// Expects `bad_request` whose message names `field`, and, when given, says exactly `problem`.
private func expectRejected(
    _ json: JSONObject, at field: String, _ problem: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    do throws(GatehouseError) {
        let config = try decode(json)
        Issue.record("expected \(field) to be rejected, decoded \(config)", sourceLocation: sourceLocation)
    } catch {
        #expect(error.code == .badRequest, sourceLocation: sourceLocation)
        if let problem {
            #expect(error.message == "\(field): \(problem)", sourceLocation: sourceLocation)
        } else {
            #expect(error.message.hasPrefix("\(field): "), "\(error.message)", sourceLocation: sourceLocation)
        }
    }
}

private func expectRejected(
    setting path: [PathStep], to value: JSONValue?, at field: String, _ problem: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    expectRejected(base(setting: path, to: value), at: field, problem, sourceLocation: sourceLocation)
}

// MARK: Decoding and encoding

@Suite struct ProjectConfigCodecTests {
    @Test func protocolExampleDecodes() throws {
        let json = try #require(try JSONParser.parse(protocolExample).objectValue)
        #expect(try decode(json) == exampleConfig)
    }

    @Test func protocolExampleRoundTrips() throws {
        let json = try #require(try JSONParser.parse(protocolExample).objectValue)
        let config = try decode(json)
        #expect(try decode(#require(config.json.objectValue)) == config)
    }

    @Test func encodingWritesEveryFieldInTheProtocolOrder() {
        let expected: JSONValue = [
            "entitlements": [["id": "pro"]],
            "products": [
                [
                    "id": "pro_monthly", "type": "subscription", "entitlements": ["pro"],
                    "grants": [["currency": "COINS", "amount": 100, "on": "purchase"]],
                ],
                ["id": "lifetime", "type": "non_consumable", "entitlements": ["pro"], "grants": []],
                [
                    "id": "coins_500", "type": "consumable", "entitlements": [],
                    "grants": [["currency": "COINS", "amount": 500, "on": "purchase"]],
                ],
            ],
            "currencies": [["code": "COINS", "name": "Coins"]],
            "offerings": [
                [
                    "id": "default", "is_default": true, "description": nil, "metadata": nil,
                    "packages": [["id": "monthly", "type": "monthly", "product": "pro_monthly"]],
                ]
            ],
            "login": "alias",
            "restore": "transfer",
            "grace_period_ms": 0,
            "stores": [
                "test": true,
                "app_store": ["bundle_id": "com.example.app", "environment": "production", "app_apple_id": nil],
            ],
            "limits": ["sdk_creates_per_second": 1000],
            "web": nil,
            "webhooks": [],
            "integrations": ["onesignal": nil],
        ]
        #expect(exampleConfig.json == expected)
    }

    @Test func encodingIsDeterministic() throws {
        let json = try #require(try JSONParser.parse(protocolExample).objectValue)
        #expect(try decode(json).json == exampleConfig.json)
        #expect(exampleConfig.json == exampleConfig.json)
    }

    @Test func defaultConfigEncodesToStableText() {
        let expected = #"{"entitlements":[],"products":[],"currencies":[],"offerings":[],"login":"alias","#
            + #""restore":"transfer","grace_period_ms":0,"stores":{"test":false,"app_store":null},"#
            + #""limits":{"sdk_creates_per_second":1000},"web":null,"webhooks":[],"integrations":{"onesignal":null}}"#
        #expect(JSONWriter.string(ProjectConfig.empty.json) == expected)
    }

    @Test func protocolExampleRoundTripsThroughText() throws {
        let text = JSONWriter.string(exampleConfig.json)
        let reparsed = try #require(try JSONParser.parse(text).objectValue)
        #expect(try decode(reparsed) == exampleConfig)
        #expect(JSONWriter.string(try decode(reparsed).json) == text)
    }

    @Test func emptyObjectDecodesToTheDefaultConfig() throws {
        #expect(try decode([:]) == .empty)
    }

    @Test func defaultConfigEncodesEveryDefault() {
        let expected: JSONValue = [
            "entitlements": [], "products": [], "currencies": [], "offerings": [],
            "login": "alias", "restore": "transfer", "grace_period_ms": 0,
            "stores": ["test": false, "app_store": nil], "limits": ["sdk_creates_per_second": 1000], "web": nil,
            "webhooks": [], "integrations": ["onesignal": nil],
        ]
        #expect(ProjectConfig.empty.json == expected)
    }

    @Test func nullFieldsTakeTheirDefaults() throws {
        let json: JSONObject = [
            "entitlements": nil, "products": nil, "currencies": nil, "offerings": nil, "login": nil,
            "restore": nil, "grace_period_ms": nil, "stores": ["test": nil, "app_store": nil],
            "limits": ["sdk_creates_per_second": nil], "webhooks": nil, "integrations": ["onesignal": nil],
        ]
        #expect(try decode(json) == .empty)
    }

    @Test func missingNestedOptionalFieldsTakeTheirDefaults() throws {
        let json: JSONObject = [
            "products": [["id": "p", "type": "consumable"]],
            "currencies": [["code": "GEMS"]],
            "offerings": [["id": "o", "packages": [["id": "k", "product": "p"]]], ["id": "empty"]],
        ]
        let config = try decode(json)
        #expect(config.products == [ProductDefinition(id: "p", type: .consumable, entitlements: [], grants: [])])
        #expect(config.currencies == [CurrencyDefinition(code: "GEMS", name: "GEMS")])
        #expect(
            config.offerings[0]
                == OfferingDefinition(
                    id: "o", isDefault: false,
                    packages: [
                        PackageDefinition(id: "k", type: .custom, product: "p")
                    ]))
        #expect(config.offerings[1].packages.isEmpty)
    }

    @Test func fullySpecifiedConfigRoundTrips() throws {
        let config = ProjectConfig(
            entitlements: [EntitlementDefinition(id: "pro"), EntitlementDefinition(id: "ads_free")],
            products: [
                ProductDefinition(
                    id: "pro_annual", type: .subscription, entitlements: ["pro", "ads_free"],
                    grants: [
                        CurrencyGrant(currency: "COINS", amount: 2_000_000_000, on: .both),
                        CurrencyGrant(currency: "GEMS", amount: 1, on: .renewal),
                    ]),
                ProductDefinition(
                    id: "gems", type: .consumable, grants: [CurrencyGrant(currency: "GEMS", amount: 5, on: .purchase)]),
            ],
            currencies: [CurrencyDefinition(code: "COINS"), CurrencyDefinition(code: "GEMS", name: "Gems ✨")],
            offerings: [
                OfferingDefinition(
                    id: "main",
                    packages: PackageType.allCases.map {
                        PackageDefinition(id: $0.rawValue, type: $0, product: "pro_annual")
                    }),
                OfferingDefinition(id: "sale", isDefault: true),
            ],
            login: .switch,
            restore: .transferIfNoActive,
            gracePeriodMs: 365 * 24 * 60 * 60 * 1_000,
            stores: StoreSettings(
                test: false,
                appStore: AppStoreSettings(
                    bundleID: "com.example.app", environment: .sandbox, appAppleID: 1_234_567_890))
        )
        #expect(try decode(#require(config.json.objectValue)) == config)
    }

    @Test(arguments: RestoreMode.allCases)
    func everyRestoreModeRoundTrips(restore: RestoreMode) throws {
        let config = ProjectConfig(login: .switch, restore: restore)
        #expect(try decode(["login": "switch", "restore": .string(restore.rawValue)]) == config)
        #expect(try decode(#require(config.json.objectValue)) == config)
    }

    @Test func appStoreAppleIdIsRead() throws {
        let json = base(setting: ["stores", "app_store", "app_apple_id"], to: 1_234_567_890)
        #expect(try decode(json).stores.appStore?.appAppleID == 1_234_567_890)
    }
}

// MARK: Offering texts

@Suite struct ProjectConfigCodecOfferingTextTests {
    static let metadata: JSONValue = ["paywall": ["title": "Go pro", "colors": ["#fff", "#000"]], "rank": 1.5, "beta": nil]

    static var withTexts: JSONObject {
        let described = base(setting: ["offerings", 0, "description"], to: "The usual packages")
        return replacing(.object(described), at: ["offerings", 0, "metadata"], with: metadata).objectValue!
    }

    @Test func descriptionAndMetadataAreKeptAndShown() throws {
        let config = try decode(Self.withTexts)
        #expect(config.offerings[0].description == "The usual packages")
        #expect(config.offerings[0].metadataJSON == JSONWriter.string(Self.metadata))
        let offering = try #require(config.json.objectValue?["offerings"]?.arrayValue?.first?.objectValue)
        #expect(offering.members.map(\.key) == ["id", "is_default", "description", "metadata", "packages"])
        #expect(offering["description"] == "The usual packages")
        #expect(offering["metadata"] == Self.metadata)
        #expect(try decode(#require(config.json.objectValue)) == config)
    }

    /// PROTOCOL.md: any JSON object; its keys are the app's, not the server's.
    @Test func metadataKeysAreNotChecked() throws {
        let json = base(setting: ["offerings", 0, "metadata"], to: ["entitlemnts": ["any": [1, [2]]]])
        #expect(try decode(json).offerings[0].metadataJSON == #"{"entitlemnts":{"any":[1,[2]]}}"#)
    }

    @Test func nullDescriptionAndMetadataAreAbsent() throws {
        let described = base(setting: ["offerings", 0, "description"], to: .null)
        let json = replacing(.object(described), at: ["offerings", 0, "metadata"], with: .null).objectValue!
        #expect(try decode(json) == decode(base))
        #expect(try decode(base).offerings[0].json.objectValue?["metadata"] == .null)
    }

    @Test func descriptionAndMetadataOfTheWrongTypeAreRejected() {
        expectRejected(
            setting: ["offerings", 0, "description"], to: 1, at: "offerings[0].description",
            "expected a string, got number")
        expectRejected(
            setting: ["offerings", 0, "metadata"], to: "{}", at: "offerings[0].metadata",
            "expected an object, got string")
        expectRejected(
            setting: ["offerings", 0, "metadata"], to: [1], at: "offerings[0].metadata", "expected an object, got array")
    }

    @Test func descriptionAndMetadataAreBounded() {
        expectRejected(
            setting: ["offerings", 0, "description"], to: .string(String(repeating: "é", count: 1_001)),
            at: "offerings[0].description", "must be 0–1000 characters")
        let big = JSONValue.object(["k": .string(String(repeating: "x", count: 4_096))])
        expectRejected(
            setting: ["offerings", 0, "metadata"], to: big, at: "offerings[0].metadata",
            "must take at most 4096 bytes as compact JSON")
    }

    /// The bound is on the compact form the server keeps, not on the spaces a client sent.
    @Test func metadataIsMeasuredCompact() throws {
        let padding = String(repeating: " ", count: 5_000)
        let text = #"{"config":{"offerings":[{"id":"o","metadata":{"k":"# + padding + "1}}]}}"
        let json = try #require(try JSONParser.parse(text).objectValue?["config"]?.objectValue)
        #expect(try decode(json).offerings[0].metadataJSON == #"{"k":1}"#)
    }
}

// MARK: Limits

@Suite struct ProjectConfigCodecLimitTests {
    @Test func sdkCreatesPerSecondIsReadAndShown() throws {
        let config = try decode(base(setting: ["limits"], to: ["sdk_creates_per_second": 25]))
        #expect(config.limits == ProjectLimits(sdkCreatesPerSecond: 25))
        #expect(config.json.objectValue?["limits"] == ["sdk_creates_per_second": 25])
        #expect(try decode(#require(config.json.objectValue)) == config)
    }

    @Test func missingLimitsTakeTheDefault() throws {
        #expect(try decode(base).limits.sdkCreatesPerSecond == 1_000)
        #expect(try decode(base(setting: ["limits"], to: [:])).limits.sdkCreatesPerSecond == 1_000)
    }

    @Test(arguments: ["0", "-1", "1000001", "1.5", "1e30"])
    func sdkCreatesPerSecondOutOfRangeIsRejected(text: String) {
        expectRejected(
            setting: ["limits"], to: ["sdk_creates_per_second": number(text)], at: "limits.sdk_creates_per_second")
    }

    @Test(arguments: ["1", "1000000"])
    func sdkCreatesPerSecondAtItsBoundsIsAccepted(text: String) throws {
        let config = try decode(base(setting: ["limits"], to: ["sdk_creates_per_second": number(text)]))
        #expect(config.limits.sdkCreatesPerSecond == Int64(text))
    }

    @Test func limitsOfTheWrongTypeAreRejected() {
        expectRejected(setting: ["limits"], to: 1_000, at: "limits", "expected an object, got number")
        expectRejected(
            setting: ["limits"], to: ["sdk_creates_per_second": "1000"], at: "limits.sdk_creates_per_second",
            "expected an integer, got string")
    }

    @Test func unknownKeyInsideLimitsIsRefused() {
        expectRejected(
            setting: ["limits"], to: ["sdk_create_per_second": 5], at: "limits.sdk_create_per_second", "unknown key")
    }
}

// MARK: Unknown keys

@Suite struct ProjectConfigCodecUnknownKeyTests {
    /// The issue's example: two misspelled top-level keys once read as an empty config.
    @Test func misspelledTopLevelKeysAreRefused() throws {
        let json = try #require(
            try JSONParser.parse(#"{"entitlemnts": [{"id": "pro"}], "curencies": [{"code": "COINS"}]}"#).objectValue)
        expectRejected(json, at: "entitlemnts", "unknown key")
    }

    @Test(
        arguments: [
            (["entitlemnts"], "entitlemnts"),
            (["entitlements", "0", "name"], "entitlements[0].name"),
            (["products", "0", "entitelments"], "products[0].entitelments"),
            (["products", "1", "price"], "products[1].price"),
            (["products", "0", "grants", "0", "amout"], "products[0].grants[0].amout"),
            (["currencies", "0", "symbol"], "currencies[0].symbol"),
            (["offerings", "0", "default"], "offerings[0].default"),
            (["offerings", "0", "packages", "0", "prodcut"], "offerings[0].packages[0].prodcut"),
            (["stores", "tset"], "stores.tset"),
            (["stores", "app_store", "shared_secret"], "stores.app_store.shared_secret"),
        ] as [([String], String)])
    func unknownKeyIsRefusedAtAnyDepth(path: [String], field: String) {
        let steps = path.map { Int($0).map(PathStep.index) ?? .key($0) }
        expectRejected(setting: steps, to: "x", at: field, "unknown key")
    }

    /// A key the server does not know is refused whatever it holds: `null` too.
    @Test func unknownKeyHoldingNullIsRefused() {
        expectRejected(setting: ["grace_periode_ms"], to: .null, at: "grace_periode_ms", "unknown key")
        expectRejected(setting: ["products", 0, "grant"], to: .null, at: "products[0].grant", "unknown key")
    }

    /// A misspelled required key leaves the key it stands for missing, which is named first.
    @Test func misspelledRequiredKeyIsRefusedAsMissing() {
        var json = base(setting: ["offerings", 0, "packages", 0, "product"], to: nil)
        json = replacing(.object(json), at: ["offerings", 0, "packages", 0, "prodcut"], with: "pro_monthly").objectValue!
        expectRejected(json, at: "offerings[0].packages[0].product", "is required")
    }

    /// Keys are matched exactly: another case is another key.
    @Test func keysAreCaseSensitive() {
        expectRejected(setting: ["Products"], to: [], at: "Products", "unknown key")
    }

    /// The first unknown key in the reading order is the one named.
    @Test func theFirstUnknownKeyIsNamed() {
        var json = base(setting: ["stores", "tset"], to: true)
        json["entitlemnts"] = []
        expectRejected(json, at: "entitlemnts", "unknown key")
    }
}

// MARK: Wrong types

@Suite struct ProjectConfigCodecTypeTests {
    @Test func topLevelFieldsOfTheWrongTypeAreRejected() {
        expectRejected(
            setting: ["entitlements"], to: ["id": "pro"], at: "entitlements", "expected an array, got object")
        expectRejected(setting: ["products"], to: "pro", at: "products", "expected an array, got string")
        expectRejected(setting: ["currencies"], to: 1, at: "currencies", "expected an array, got number")
        expectRejected(setting: ["offerings"], to: true, at: "offerings", "expected an array, got boolean")
        expectRejected(setting: ["login"], to: 1, at: "login", "expected a string, got number")
        expectRejected(setting: ["restore"], to: ["transfer"], at: "restore", "expected a string, got array")
        expectRejected(setting: ["grace_period_ms"], to: "0", at: "grace_period_ms", "expected an integer, got string")
        expectRejected(setting: ["stores"], to: [], at: "stores", "expected an object, got array")
    }

    @Test func arrayElementsThatAreNotObjectsAreRejected() {
        expectRejected(
            setting: ["entitlements", 0], to: "pro", at: "entitlements[0]", "expected an object, got string")
        expectRejected(setting: ["products", 1], to: [], at: "products[1]", "expected an object, got array")
        expectRejected(setting: ["currencies", 0], to: "COINS", at: "currencies[0]")
        expectRejected(setting: ["offerings", 0], to: 3, at: "offerings[0]")
        expectRejected(setting: ["products", 0, "grants", 0], to: 100, at: "products[0].grants[0]")
        expectRejected(setting: ["offerings", 0, "packages", 0], to: "monthly", at: "offerings[0].packages[0]")
    }

    @Test func entitlementAndProductFieldsOfTheWrongTypeAreRejected() {
        expectRejected(
            setting: ["entitlements", 0, "id"], to: 1, at: "entitlements[0].id", "expected a string, got number")
        expectRejected(setting: ["products", 0, "id"], to: ["x"], at: "products[0].id", "expected a string, got array")
        expectRejected(
            setting: ["products", 0, "type"], to: 1, at: "products[0].type", "expected a string, got number")
        expectRejected(setting: ["products", 0, "entitlements"], to: "pro", at: "products[0].entitlements")
        expectRejected(
            setting: ["products", 0, "entitlements", 0], to: 7, at: "products[0].entitlements[0]",
            "expected a string, got number")
        expectRejected(setting: ["products", 0, "grants"], to: ["currency": "COINS"], at: "products[0].grants")
    }

    @Test func grantFieldsOfTheWrongTypeAreRejected() {
        let grant: [PathStep] = ["products", 0, "grants", 0]
        expectRejected(
            setting: grant + ["currency"], to: 1, at: "products[0].grants[0].currency", "expected a string, got number")
        expectRejected(
            setting: grant + ["amount"], to: "100", at: "products[0].grants[0].amount",
            "expected an integer, got string")
        expectRejected(
            setting: grant + ["on"], to: true, at: "products[0].grants[0].on", "expected a string, got boolean")
    }

    @Test func currencyAndOfferingFieldsOfTheWrongTypeAreRejected() {
        expectRejected(
            setting: ["currencies", 0, "code"], to: 1, at: "currencies[0].code", "expected a string, got number")
        expectRejected(
            setting: ["currencies", 0, "name"], to: false, at: "currencies[0].name", "expected a string, got boolean")
        expectRejected(setting: ["offerings", 0, "id"], to: 1, at: "offerings[0].id")
        expectRejected(
            setting: ["offerings", 0, "is_default"], to: "true", at: "offerings[0].is_default",
            "expected a boolean, got string")
        expectRejected(setting: ["offerings", 0, "packages"], to: ["id": "x"], at: "offerings[0].packages")
    }

    @Test func packageFieldsOfTheWrongTypeAreRejected() {
        let package: [PathStep] = ["offerings", 0, "packages", 0]
        expectRejected(
            setting: package + ["id"], to: 1, at: "offerings[0].packages[0].id", "expected a string, got number")
        expectRejected(setting: package + ["type"], to: 1, at: "offerings[0].packages[0].type")
        expectRejected(setting: package + ["product"], to: [], at: "offerings[0].packages[0].product")
    }

    @Test func storeFieldsOfTheWrongTypeAreRejected() {
        expectRejected(setting: ["stores", "test"], to: "yes", at: "stores.test", "expected a boolean, got string")
        expectRejected(
            setting: ["stores", "app_store"], to: "com.example.app", at: "stores.app_store",
            "expected an object, got string")
        expectRejected(setting: ["stores", "app_store", "bundle_id"], to: 1, at: "stores.app_store.bundle_id")
        expectRejected(setting: ["stores", "app_store", "environment"], to: 1, at: "stores.app_store.environment")
        expectRejected(
            setting: ["stores", "app_store", "app_apple_id"], to: "123", at: "stores.app_store.app_apple_id",
            "expected an integer, got string")
    }
}

// MARK: Missing required fields

@Suite struct ProjectConfigCodecRequiredFieldTests {
    @Test(
        arguments: [
            (["entitlements", "0", "id"], "entitlements[0].id"),
            (["products", "0", "id"], "products[0].id"),
            (["products", "0", "type"], "products[0].type"),
            (["products", "0", "grants", "0", "currency"], "products[0].grants[0].currency"),
            (["products", "0", "grants", "0", "amount"], "products[0].grants[0].amount"),
            (["products", "0", "grants", "0", "on"], "products[0].grants[0].on"),
            (["currencies", "0", "code"], "currencies[0].code"),
            (["offerings", "0", "id"], "offerings[0].id"),
            (["offerings", "0", "packages", "0", "id"], "offerings[0].packages[0].id"),
            (["offerings", "0", "packages", "0", "product"], "offerings[0].packages[0].product"),
            (["stores", "app_store", "bundle_id"], "stores.app_store.bundle_id"),
            (["stores", "app_store", "environment"], "stores.app_store.environment"),
        ] as [([String], String)])
    func missingRequiredFieldIsRejected(path: [String], field: String) {
        let steps = path.map { Int($0).map(PathStep.index) ?? .key($0) }
        expectRejected(setting: steps, to: nil, at: field, "is required")
        expectRejected(setting: steps, to: .null, at: field, "is required")
    }
}

// MARK: Enumerations

@Suite struct ProjectConfigCodecEnumTests {
    @Test func unknownProductTypeIsRejected() {
        expectRejected(
            setting: ["products", 0, "type"], to: "sub", at: "products[0].type",
            #"must be one of "subscription", "non_consumable", "consumable""#)
    }

    @Test func unknownGrantTriggerIsRejected() {
        expectRejected(
            setting: ["products", 0, "grants", 0, "on"], to: "renew", at: "products[0].grants[0].on",
            #"must be one of "purchase", "renewal", "both""#)
    }

    @Test func unknownLoginModeIsRejected() {
        expectRejected(setting: ["login"], to: "merge", at: "login", #"must be one of "alias", "switch""#)
    }

    @Test func unknownRestoreModeIsRejected() {
        expectRejected(
            setting: ["restore"], to: "transfer_always", at: "restore",
            #"must be one of "transfer", "transfer_if_no_active", "keep""#)
    }

    @Test(arguments: ["staging", "Production", ""])
    func unknownEnvironmentIsRejected(environment: String) {
        expectRejected(
            setting: ["stores", "app_store", "environment"], to: .string(environment),
            at: "stores.app_store.environment",
            #"must be one of "sandbox", "production""#)
    }

    @Test func unknownPackageTypeIsRejected() {
        expectRejected(
            setting: ["offerings", 0, "packages", 0, "type"], to: "yearly", at: "offerings[0].packages[0].type")
    }

    @Test func enumValuesAreCaseSensitive() {
        expectRejected(setting: ["products", 0, "type"], to: "Subscription", at: "products[0].type")
        expectRejected(setting: ["login"], to: "ALIAS", at: "login")
    }
}

// MARK: Numbers

@Suite struct ProjectConfigCodecNumberTests {
    private static let amount: [PathStep] = ["products", 0, "grants", 0, "amount"]

    @Test(arguments: ["0", "-1", "-100", "2000000001", "9223372036854775807"])
    func amountsOutOfRangeAreRejected(text: String) {
        expectRejected(
            setting: Self.amount, to: number(text), at: "products[0].grants[0].amount", "out of range 1…2000000000")
    }

    @Test(arguments: ["1.5", "1e30", "99999999999999999999", "-0.5"])
    func amountsThatAreNotIntegersAreRejected(text: String) {
        expectRejected(
            setting: Self.amount, to: number(text), at: "products[0].grants[0].amount",
            "expected an integer in range 1…2000000000")
    }

    @Test(arguments: ["1", "2000000000", "1e3", "100.0"])
    func wholeAmountsInRangeAreAccepted(text: String) throws {
        let config = try decode(base(setting: Self.amount, to: number(text)))
        #expect(config.products[0].grants[0].amount == Int64(Double(text)!))
    }

    @Test(arguments: ["-1", "31536000001", "1.5"])
    func gracePeriodOutOfRangeIsRejected(text: String) {
        expectRejected(setting: ["grace_period_ms"], to: number(text), at: "grace_period_ms")
    }

    @Test func gracePeriodOfAYearIsAccepted() throws {
        #expect(try decode(base(setting: ["grace_period_ms"], to: 31_536_000_000)).gracePeriodMs == 31_536_000_000)
    }

    @Test(arguments: ["0", "-5", "1.5"])
    func nonPositiveAppAppleIdIsRejected(text: String) {
        expectRejected(
            setting: ["stores", "app_store", "app_apple_id"], to: number(text), at: "stores.app_store.app_apple_id")
    }

    @Test func bundleIdLengthIsChecked() {
        let bundleID: [PathStep] = ["stores", "app_store", "bundle_id"]
        expectRejected(setting: bundleID, to: "", at: "stores.app_store.bundle_id", "must be 1–255 characters")
        expectRejected(
            setting: bundleID, to: .string(String(repeating: "a", count: 256)), at: "stores.app_store.bundle_id",
            "must be 1–255 characters")
    }
}

// MARK: Validation through the decoder

@Suite struct ProjectConfigCodecValidationTests {
    @Test func unknownEntitlementIsRejected() {
        expectRejected(
            setting: ["products", 0, "entitlements", 0], to: "gold", at: "products[0].entitlements[0]",
            #"unknown entitlement "gold""#)
    }

    @Test func unknownCurrencyIsRejected() {
        expectRejected(
            setting: ["products", 1, "grants", 0, "currency"], to: "GEMS", at: "products[1].grants[0].currency",
            #"unknown currency "GEMS""#)
    }

    @Test func unknownProductIsRejected() {
        expectRejected(
            setting: ["offerings", 0, "packages", 0, "product"], to: "lifetime", at: "offerings[0].packages[0].product",
            #"unknown product "lifetime""#)
    }

    @Test func repeatedIdsAreRejected() {
        expectRejected(
            setting: ["entitlements"], to: [["id": "pro"], ["id": "pro"]], at: "entitlements[1].id", #"repeats "pro""#)
        expectRejected(
            setting: ["products", 1, "id"], to: "pro_monthly", at: "products[1].id", #"repeats "pro_monthly""#)
        expectRejected(
            setting: ["currencies"], to: [["code": "COINS"], ["code": "COINS"]], at: "currencies[1].code",
            #"repeats "COINS""#)
        expectRejected(
            setting: ["offerings"], to: [["id": "a"], ["id": "a"]], at: "offerings[1].id", #"repeats "a""#)
        expectRejected(
            setting: ["offerings", 0, "packages"],
            to: [["id": "m", "product": "pro_monthly"], ["id": "m", "product": "coins_500"]],
            at: "offerings[0].packages[1].id", #"repeats "m""#)
        expectRejected(
            setting: ["products", 0, "entitlements"], to: ["pro", "pro"], at: "products[0].entitlements[1]",
            #"repeats "pro""#)
        expectRejected(
            setting: ["products", 1, "grants"],
            to: [
                ["currency": "COINS", "amount": 1, "on": "purchase"],
                ["currency": "COINS", "amount": 2, "on": "purchase"],
            ],
            at: "products[1].grants[1].currency", #"repeats "COINS""#)
    }

    @Test func renewalGrantOnConsumableIsRejected() {
        expectRejected(setting: ["products", 1, "grants", 0, "on"], to: "renewal", at: "products[1].grants[0].on")
        expectRejected(setting: ["products", 1, "grants", 0, "on"], to: "both", at: "products[1].grants[0].on")
    }

    @Test func twoDefaultOfferingsAreRejected() {
        expectRejected(
            setting: ["offerings"], to: [["id": "a", "is_default": true], ["id": "b", "is_default": true]],
            at: "offerings[1].is_default")
    }

    @Test func badIdsAndCodesAreRejected() {
        expectRejected(
            setting: ["entitlements", 0, "id"], to: "", at: "entitlements[0].id", "must be 1–100 characters")
        expectRejected(setting: ["products", 0, "id"], to: " pro_monthly", at: "products[0].id")
        expectRejected(setting: ["offerings", 0, "id"], to: "de\tfault", at: "offerings[0].id")
        expectRejected(setting: ["currencies", 0, "code"], to: "CO-INS", at: "currencies[0].code")
        expectRejected(setting: ["currencies", 0, "name"], to: "", at: "currencies[0].name")
    }

    @Test func oversizedListsAreRejectedBeforeTheirItemsAreRead() {
        let entitlements = JSONValue.array((0...1_000).map { _ in 0 })
        expectRejected(setting: ["entitlements"], to: entitlements, at: "entitlements", "has more than 1000 items")
        expectRejected(
            setting: ["products"], to: .array(Array(repeating: 0, count: 1_001)), at: "products",
            "has more than 1000 items")
        expectRejected(
            setting: ["currencies"], to: .array(Array(repeating: 0, count: 101)), at: "currencies",
            "has more than 100 items")
        expectRejected(
            setting: ["offerings"], to: .array(Array(repeating: 0, count: 101)), at: "offerings",
            "has more than 100 items")
        expectRejected(
            setting: ["offerings", 0, "packages"], to: .array(Array(repeating: 0, count: 51)),
            at: "offerings[0].packages", "has more than 50 items")
        expectRejected(
            setting: ["products", 0, "grants"], to: .array(Array(repeating: 0, count: 11)), at: "products[0].grants",
            "has more than 10 items")
    }
}

// MARK: The In-App Purchase key

@Suite struct ProjectConfigCodecAPIKeyTests {
    static let pem = "-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----\n"
    fileprivate static let path: [PathStep] = ["stores", "app_store", "api"]

    static func shownKey(_ json: JSONValue) -> JSONValue? {
        json.objectValue?["stores"]?.objectValue?["app_store"]?.objectValue?["api"]
    }

    @Test func theKeyIsReadAndShownWithoutItsPrivateKey() throws {
        let config = try decode(base(setting: Self.path, to: ["issuer_id": "i", "key_id": "k", "private_key": .string(Self.pem)]))
        #expect(config.stores.appStore?.apiKey == InAppPurchaseKey(issuerID: "i", keyID: "k", privateKeyPEM: Self.pem))
        #expect(Self.shownKey(config.json) == ["issuer_id": "i", "key_id": "k"])
        let shown = try #require(config.json.objectValue)
        // Put back as shown, it names the key without its private key: the stored one is kept.
        #expect(try decode(shown).stores.appStore?.apiKey == InAppPurchaseKey(issuerID: "i", keyID: "k", privateKeyPEM: nil))
    }

    @Test func anAppStoreWithoutAKeyShowsNone() throws {
        let config = try decode(base)
        #expect(config.stores.appStore?.apiKey == nil)
        #expect(Self.shownKey(config.json) == nil)
    }

    @Test(arguments: [
        (["key_id": "k", "private_key": .string(pem)], "stores.app_store.api.issuer_id"),
        (["issuer_id": "", "key_id": "k"], "stores.app_store.api.issuer_id"),
        (["issuer_id": "i", "key_id": .string(String(repeating: "k", count: 101))], "stores.app_store.api.key_id"),
        (["issuer_id": "i", "key_id": " k"], "stores.app_store.api.key_id"),
        (["issuer_id": "i", "key_id": "k", "private_key": "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg"], "stores.app_store.api.private_key"),
        (["issuer_id": "i", "key_id": "k", "private_key": "-----BEGIN EC PRIVATE KEY-----\nAA==\n-----END EC PRIVATE KEY-----"], "stores.app_store.api.private_key"),
        (["issuer_id": "i", "key_id": "k", "private_key": "-----BEGIN PRIVATE KEY-----\nÄA==\n-----END PRIVATE KEY-----"], "stores.app_store.api.private_key"),
        (["issuer_id": "i", "key_id": "k", "private_key": .string(pem + String(repeating: "\n", count: 8_192))], "stores.app_store.api.private_key"),
        (["issuer_id": "i", "key_id": "k", "private_key": 5], "stores.app_store.api.private_key"),
        (["issuer_id": "i", "key_id": "k", "private_key_set": true], "stores.app_store.api.private_key_set"),
    ] as [(JSONObject, String)])
    func aMalformedKeyIsRejectedNamingItsField(_ api: JSONObject, _ field: String) {
        expectRejected(setting: Self.path, to: .object(api), at: field)
    }
}
