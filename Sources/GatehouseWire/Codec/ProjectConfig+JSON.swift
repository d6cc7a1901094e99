public import GatehouseCore

// A project configuration on the wire (PROTOCOL.md, "Configuration"). Decoding reads with
// `Fields`, so every type or range problem names its field; missing fields take their defaults,
// and a key that no decoder here reads is refused at any depth (`Fields.strictly`): a misspelled
// key must not empty a part of the config. Encoding writes every field, defaults included, in the
// order PROTOCOL.md's example uses, so the output is deterministic and decodes to the same value,
// save the In-App Purchase key's private key, which it never writes (a secret no answer shows;
// put back as it came, the config keeps the stored one). `webhooks` and `integrations` hold the
// delivery secrets, which the secret key may see and the sdk key, shipped in every app, must not:
// ``ProjectConfig/json`` writes them, ``ProjectConfig/sdkJSON`` leaves both parts out.

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
            limits: try fields.optionalObject("limits").map(ProjectLimits.init) ?? ProjectLimits(),
            webhooks: try Self.decodeEach(fields, "webhooks", max: Limits.webhooksMax, WebhookSettings.init),
            integrations: try fields.optionalObject("integrations").map(IntegrationSettings.init) ?? IntegrationSettings(),
            web: try fields.optionalObject("web").map(WebSettings.init)
        )
    }

    /// The config as the secret key sees it: everything, delivery secrets included.
    public var json: JSONValue {
        var object = commonObject(showingSecrets: true)
        object.append("webhooks", .array(webhooks.map(\.json)))
        object.append("integrations", integrations.json)
        return .object(object)
    }

    /// The config as the sdk key sees it: without `webhooks` and `integrations`, and Stripe's
    /// settings without their secrets, which would be every app's to read.
    public var sdkJSON: JSONValue { .object(commonObject(showingSecrets: false)) }

    private func commonObject(showingSecrets: Bool) -> JSONObject {
        [
            "entitlements": .array(entitlements.map(\.json)),
            "products": .array(products.map(\.json)),
            "currencies": .array(currencies.map(\.json)),
            "offerings": .array(offerings.map(\.json)),
            "login": .string(login.rawValue),
            "restore": .string(restore.rawValue),
            "grace_period_ms": .int(gracePeriodMs),
            "stores": stores.json(showingSecrets: showingSecrets),
            "limits": limits.json,
            "web": .optional(web, \.json),
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
            appStore: try fields.optionalObject("app_store").map(AppStoreSettings.init),
            stripe: try fields.optionalObject("stripe").map(StripeSettings.init)
        )
    }

    /// Stripe's secrets are shown only to the secret key (`showingSecrets`).
    public func json(showingSecrets: Bool) -> JSONValue {
        var object: JSONObject = ["test": .bool(test), "app_store": .optional(appStore, \.json)]
        if let stripe { object.append("stripe", stripe.json(showingSecrets: showingSecrets)) }
        return .object(object)
    }
}

// MARK: Web purchases

extension StripeSettings {
    init(fields: Fields) throws(GatehouseError) {
        self.init(
            webhookSecrets: try fields.strings("webhook_secrets", maxCount: ProjectConfig.Limits.stripeWebhookSecretsMax),
            secretKey: try fields.optionalString("secret_key"),
            prices: try fields.optionalObject("prices").map(Self.prices) ?? [],
            livemode: try fields.optionalBool("livemode") ?? false
        )
    }

    /// `{"<price id>": "<product id>"}`, in the document's order.
    private static func prices(_ fields: Fields) throws(GatehouseError) -> [StripePrice] {
        var result: [StripePrice] = []
        for key in fields.object.keys {
            result.append(StripePrice(priceID: key, productID: try fields.string(key)))
        }
        return result
    }

    func json(showingSecrets: Bool) -> JSONValue {
        var prices = JSONObject()
        for price in self.prices { prices.append(price.priceID, .string(price.productID)) }
        var object: JSONObject = [:]
        if showingSecrets {
            object.append("webhook_secrets", .array(webhookSecrets.map(JSONValue.string)))
            object.append("secret_key", .optional(secretKey, JSONValue.string))
        }
        object.append("prices", .object(prices))
        object.append("livemode", .bool(livemode))
        return .object(object)
    }
}

extension WebSettings {
    init(fields: Fields) throws(GatehouseError) {
        self.init(
            appName: try fields.string("app_name"),
            appScheme: try fields.optionalString("app_scheme"),
            supportEmail: try fields.optionalString("support_email"),
            appStoreURL: try fields.optionalString("app_store_url"),
            playStoreURL: try fields.optionalString("play_store_url"),
            redemptionLinkHours: try fields.optionalInt("redemption_link_hours", in: ProjectConfig.Limits.redemptionLinkHours)
                ?? Self.defaultRedemptionLinkHours,
            successMode: try fields.optionalEnumeration("success_mode", SuccessMode.self) ?? .page,
            redirectURL: try fields.optionalString("redirect_url")
        )
    }

    public var json: JSONValue {
        [
            "app_name": .string(appName),
            "app_scheme": .optional(appScheme, JSONValue.string),
            "support_email": .optional(supportEmail, JSONValue.string),
            "app_store_url": .optional(appStoreURL, JSONValue.string),
            "play_store_url": .optional(playStoreURL, JSONValue.string),
            "redemption_link_hours": .int(redemptionLinkHours),
            "success_mode": .string(successMode.rawValue),
            "redirect_url": .optional(redirectURL, JSONValue.string),
        ]
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

// MARK: Webhooks and integrations

extension WebhookSettings {
    /// `secret` may be left out to keep the stored one or have one made
    /// (``ProjectConfig/fillingWebhookSecrets(from:random:)``); `events` left out means every type.
    init(fields: Fields) throws(GatehouseError) {
        self.init(
            id: try fields.string("id"),
            url: try fields.string("url"),
            secret: try fields.optionalString("secret"),
            previousSecret: try fields.optionalString("previous_secret"),
            authorization: try fields.optionalString("authorization"),
            events: fields.has("events") ? try fields.strings("events", maxCount: EventType.allCases.count) : nil
        )
    }

    /// Every field, secrets included: only the secret key's answers hold a webhook.
    public var json: JSONValue {
        [
            "id": .string(id),
            "url": .string(url),
            "secret": .optional(secret, JSONValue.string),
            "previous_secret": .optional(previousSecret, JSONValue.string),
            "authorization": .optional(authorization, JSONValue.string),
            "events": .optional(events) { .array($0.map(JSONValue.string)) },
        ]
    }
}

extension IntegrationSettings {
    init(fields: Fields) throws(GatehouseError) {
        self.init(oneSignal: try fields.optionalObject("onesignal").map(OneSignalSettings.init))
    }

    public var json: JSONValue {
        ["onesignal": .optional(oneSignal, \.json)]
    }
}

extension OneSignalSettings {
    /// `api_key` may be left out to keep the stored one (``ProjectConfig/keepingOneSignalKey(of:)``).
    init(fields: Fields) throws(GatehouseError) {
        self.init(
            appID: try fields.string("app_id"),
            apiKey: try fields.optionalString("api_key"),
            url: try fields.optionalString("url"),
            notifications: try fields.optionalObject("notifications").map(Self.notifications) ?? []
        )
    }

    /// `{"<EVENT_TYPE>": {title, message}}`, in the document's order; a key that names no event
    /// type is refused here, as the type is what the push is kept under.
    private static func notifications(_ fields: Fields) throws(GatehouseError) -> [OneSignalNotification] {
        var result: [OneSignalNotification] = []
        for key in fields.object.keys {
            guard let type = EventType(rawValue: key) else { throw .badField(fields.name(key), "unknown event type") }
            let notification = try fields.object(key)
            result.append(
                OneSignalNotification(
                    type: type, title: try notification.string("title"), message: try notification.string("message")))
        }
        return result
    }

    /// Every field, the API key included: only the secret key's answers hold integrations.
    public var json: JSONValue {
        var notifications = JSONObject()
        for notification in self.notifications {
            notifications.append(
                notification.type.rawValue, ["title": .string(notification.title), "message": .string(notification.message)])
        }
        return [
            "app_id": .string(appID),
            "api_key": .optional(apiKey, JSONValue.string),
            "url": .optional(url, JSONValue.string),
            "notifications": .object(notifications),
        ]
    }
}
