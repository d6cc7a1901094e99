public import GatehouseCore

// A project configuration on the wire (PROTOCOL.md, "Configuration"). Decoding reads with
// `Fields`, so every type or range problem names its field; missing fields take their defaults,
// and a key that no decoder here reads is refused at any depth (`Fields.strictly`): a misspelled
// key must not empty a part of the config. Encoding writes every field, defaults included, in the
// order PROTOCOL.md's example uses, so the output is deterministic and decodes to the same value,
// save the In-App Purchase key's private key, which it never writes (a secret no answer shows;
// put back as it came, the config keeps the stored one).

extension ProjectConfig {
    /// Reads a `config.put` document and validates it as a whole: a config that fails anything
    /// throws `bad_request`, and the caller keeps the old one.
    public init(json: JSONObject) throws(GatehouseError) {
        self = try Fields.strictly(json, Self.init(fields:))
        try validate()
    }

    private init(fields: Fields) throws(GatehouseError) {
        self.init(
            entitlements: try Self.decodeEach(
                fields, "entitlements", max: Limits.entitlementsMax, EntitlementDefinition.init),
            products: try Self.decodeEach(fields, "products", max: Limits.productsMax, ProductDefinition.init),
            currencies: try Self.decodeEach(fields, "currencies", max: Limits.currenciesMax, CurrencyDefinition.init),
            offerings: try Self.decodeEach(fields, "offerings", max: Limits.offeringsMax, OfferingDefinition.init),
            login: try fields.optionalEnumeration("login", LoginMode.self) ?? .alias,
            restore: try fields.optionalEnumeration("restore", RestoreMode.self) ?? .transfer,
            gracePeriodMs: try fields.optionalInt("grace_period_ms", in: Limits.gracePeriodMs) ?? 0,
            stores: try fields.optionalObject("stores").map(StoreSettings.init) ?? StoreSettings(),
            limits: try fields.optionalObject("limits").map(ProjectLimits.init) ?? ProjectLimits()
        )
    }

    public var json: JSONValue {
        [
            "entitlements": .array(entitlements.map(\.json)),
            "products": .array(products.map(\.json)),
            "currencies": .array(currencies.map(\.json)),
            "offerings": .array(offerings.map(\.json)),
            "login": .string(login.rawValue),
            "restore": .string(restore.rawValue),
            "grace_period_ms": .int(gracePeriodMs),
            "stores": stores.json,
            "limits": limits.json,
        ]
    }

    /// The objects of an optional array field, each decoded with its indexed path.
    static func decodeEach<T>(
        _ fields: Fields, _ key: String, max: Int, _ decode: (Fields) throws(GatehouseError) -> T
    ) throws(GatehouseError) -> [T] {
        var result: [T] = []
        for element in try fields.optionalObjects(key, maxCount: max) {
            result.append(try decode(element))
        }
        return result
    }
}

// MARK: Entitlements and products

extension EntitlementDefinition {
    init(fields: Fields) throws(GatehouseError) {
        self.init(id: try fields.string("id"))
    }

    public var json: JSONValue {
        ["id": .string(id)]
    }
}

extension ProductDefinition {
    init(fields: Fields) throws(GatehouseError) {
        self.init(
            id: try fields.string("id"),
            type: try fields.enumeration("type", ProductType.self),
            entitlements: try fields.optionalStrings("entitlements", maxCount: ProjectConfig.Limits.entitlementsMax),
            grants: try ProjectConfig.decodeEach(
                fields, "grants", max: ProjectConfig.Limits.grantsPerProductMax, CurrencyGrant.init)
        )
    }

    public var json: JSONValue {
        [
            "id": .string(id),
            "type": .string(type.rawValue),
            "entitlements": .array(entitlements.map(JSONValue.string)),
            "grants": .array(grants.map(\.json)),
        ]
    }
}

extension CurrencyGrant {
    init(fields: Fields) throws(GatehouseError) {
        self.init(
            currency: try fields.string("currency"),
            amount: try fields.int("amount", in: ProjectConfig.Limits.grantAmount),
            on: try fields.enumeration("on", GrantTrigger.self)
        )
    }

    public var json: JSONValue {
        ["currency": .string(currency), "amount": .int(amount), "on": .string(on.rawValue)]
    }
}

// MARK: Currencies and offerings

extension CurrencyDefinition {
    init(fields: Fields) throws(GatehouseError) {
        self.init(code: try fields.string("code"), name: try fields.optionalString("name"))
    }

    public var json: JSONValue {
        ["code": .string(code), "name": .string(name)]
    }
}

extension OfferingDefinition {
    init(fields: Fields) throws(GatehouseError) {
        self.init(
            id: try fields.string("id"),
            isDefault: try fields.optionalBool("is_default") ?? false,
            description: try fields.optionalString(
                "description", length: ProjectConfig.Limits.offeringDescriptionCharacters),
            metadataJSON: try fields.optionalOpaqueObject("metadata").map { JSONWriter.string(.object($0)) },
            packages: try ProjectConfig.decodeEach(
                fields, "packages", max: ProjectConfig.Limits.packagesPerOfferingMax, PackageDefinition.init)
        )
    }

    public var json: JSONValue {
        [
            "id": .string(id),
            "is_default": .bool(isDefault),
            "description": .optional(description, JSONValue.string),
            "metadata": metadata,
            "packages": .array(packages.map(\.json)),
        ]
    }

    /// The metadata object, read back from the text the decoder wrote. Text that is not an
    /// object's JSON can only come from a damaged or crafted snapshot; it shows as none rather
    /// than failing every answer that holds the config.
    var metadata: JSONValue {
        guard let text = metadataJSON, let object = (try? JSONParser.parse(text))?.objectValue else { return .null }
        return .object(object)
    }
}

extension PackageDefinition {
    init(fields: Fields) throws(GatehouseError) {
        self.init(
            id: try fields.string("id"),
            type: try fields.optionalEnumeration("type", PackageType.self) ?? .custom,
            product: try fields.string("product")
        )
    }

    public var json: JSONValue {
        ["id": .string(id), "type": .string(type.rawValue), "product": .string(product)]
    }
}

// MARK: Stores

extension StoreSettings {
    init(fields: Fields) throws(GatehouseError) {
        self.init(
            test: try fields.optionalBool("test") ?? false,
            appStore: try fields.optionalObject("app_store").map(AppStoreSettings.init)
        )
    }

    public var json: JSONValue {
        ["test": .bool(test), "app_store": .optional(appStore, \.json)]
    }
}

extension AppStoreSettings {
    init(fields: Fields) throws(GatehouseError) {
        self.init(
            bundleID: try fields.string("bundle_id", length: ProjectConfig.Limits.bundleIDCharacters),
            environment: try fields.enumeration("environment", AppStoreEnvironment.self),
            appAppleID: try fields.optionalInt("app_apple_id", in: ProjectConfig.Limits.appAppleID),
            apiKey: try fields.optionalObject("api").map(InAppPurchaseKey.init)
        )
    }

    public var json: JSONValue {
        var object: JSONObject = [
            "bundle_id": .string(bundleID),
            "environment": .string(environment.rawValue),
            "app_apple_id": .optional(appAppleID, JSONValue.int),
        ]
        if let apiKey { object.append("api", apiKey.json) }
        return .object(object)
    }
}

extension InAppPurchaseKey {
    /// `private_key` may be left out to keep the stored key (``ProjectConfig/keepingPrivateKey(of:)``);
    /// validation bounds it.
    init(fields: Fields) throws(GatehouseError) {
        let length = ProjectConfig.Limits.apiKeyIDCharacters
        self.init(
            issuerID: try fields.string("issuer_id", length: length),
            keyID: try fields.string("key_id", length: length),
            privateKeyPEM: try fields.optionalString("private_key")
        )
    }

    /// The identifiers, never the private key: every answer that shows a config, to either of
    /// the project's keys, shows it this way.
    public var json: JSONValue {
        ["issuer_id": .string(issuerID), "key_id": .string(keyID)]
    }
}

// MARK: Limits

extension ProjectLimits {
    init(fields: Fields) throws(GatehouseError) {
        let defaults = ProjectLimits()
        self.init(
            sdkCreatesPerSecond: try fields.optionalInt(
                "sdk_creates_per_second", in: ProjectConfig.Limits.sdkCreatesPerSecond) ?? defaults.sdkCreatesPerSecond
        )
    }

    public var json: JSONValue {
        ["sdk_creates_per_second": .int(sdkCreatesPerSecond)]
    }
}
