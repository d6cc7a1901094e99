/// A project's configuration (PROTOCOL.md, "Configuration"): what it sells, what that unlocks,
/// which currencies it grants, how it presents its products, and the identity, restore and
/// store settings its rules follow. `config.put` replaces it as a whole, so it is a plain value:
/// build one, ``validate()`` it, and swap it in only when that succeeds.
public struct ProjectConfig: Sendable, Equatable {
    public var entitlements: [EntitlementDefinition]
    public var products: [ProductDefinition]
    public var currencies: [CurrencyDefinition]
    public var offerings: [OfferingDefinition]
    public var login: LoginMode
    public var restore: RestoreMode
    /// The grace a billing issue gets when the store names none; `0` means none.
    public var gracePeriodMs: Int64
    public var stores: StoreSettings
    public var limits: ProjectLimits
    /// Where events are delivered (DESIGN.md, "Outbound delivery").
    public var webhooks: [WebhookSettings]
    public var integrations: IntegrationSettings
    /// How web buyers see the app (DESIGN.md, "Web purchases and redemption links"); required
    /// with `stores.stripe`.
    public var web: WebSettings?

    public init(
        entitlements: [EntitlementDefinition] = [],
        products: [ProductDefinition] = [],
        currencies: [CurrencyDefinition] = [],
        offerings: [OfferingDefinition] = [],
        login: LoginMode = .alias,
        restore: RestoreMode = .transfer,
        gracePeriodMs: Int64 = 0,
        stores: StoreSettings = StoreSettings(),
        limits: ProjectLimits = ProjectLimits(),
        webhooks: [WebhookSettings] = [],
        integrations: IntegrationSettings = IntegrationSettings(),
        web: WebSettings? = nil
    ) {
        self.entitlements = entitlements
        self.products = products
        self.currencies = currencies
        self.offerings = offerings
        self.login = login
        self.restore = restore
        self.gracePeriodMs = gracePeriodMs
        self.stores = stores
        self.limits = limits
        self.webhooks = webhooks
        self.integrations = integrations
        self.web = web
    }

    /// What a new project starts with: nothing for sale, every setting at its default.
    public static let empty = ProjectConfig()
}

// MARK: Lookups

// Configs are small (bounded by `Limits`) and read far more often than written, so plain
// linear searches keep the value simple; no index has to be kept in step with the arrays.
extension ProjectConfig {
    public func entitlement(id: String) -> EntitlementDefinition? {
        entitlements.first { $0.id == id }
    }

    public func product(id: String) -> ProductDefinition? {
        products.first { $0.id == id }
    }

    public func currency(code: String) -> CurrencyDefinition? {
        currencies.first { $0.code == code }
    }

    public func offering(id: String) -> OfferingDefinition? {
        offerings.first { $0.id == id }
    }

    /// The offering marked `is_default`, if any (``validate()`` allows at most one).
    public var defaultOffering: OfferingDefinition? {
        offerings.first { $0.isDefault }
    }
}

// MARK: Limits

extension ProjectConfig {
    /// The bounds ``validate()`` enforces and the decoder reads within.
    public enum Limits {
        public static let entitlementsMax = 1_000
        public static let productsMax = 1_000
        public static let currenciesMax = 100
        public static let offeringsMax = 100
        public static let packagesPerOfferingMax = 50
        public static let grantsPerProductMax = 10
        /// Entitlement, product, offering and package ids, and currency names.
        public static let idCharacters: ClosedRange<Int> = 1...100
        public static let currencyCodeCharacters: ClosedRange<Int> = 1...32
        /// A grant never exceeds what a balance may hold (DESIGN.md, "Virtual currencies").
        public static let grantAmount: ClosedRange<Int64> = 1...2_000_000_000
        public static let gracePeriodMs: ClosedRange<Int64> = 0...(365 * 24 * 60 * 60 * 1_000)
        public static let bundleIDCharacters: ClosedRange<Int> = 1...255
        public static let appAppleID: ClosedRange<Int64> = 1...Int64.max
        public static let offeringDescriptionCharacters: ClosedRange<Int> = 0...1_000
        /// An offering's metadata, as compact JSON text: room for a paywall's texts, not a store.
        public static let offeringMetadataBytes = 4_096
        public static let sdkCreatesPerSecond: ClosedRange<Int64> = 1...1_000_000
        /// An In-App Purchase key's `issuer_id` (a UUID) and `key_id` (ten characters), with room.
        public static let apiKeyIDCharacters: ClosedRange<Int> = 1...100
        /// A `.p8` file's text: a P-256 key's PKCS#8 PEM takes about 250 bytes.
        public static let privateKeyBytes: ClosedRange<Int> = 1...8_192
    }
}

// MARK: Entitlements and products

/// Something a customer can have access to (`pro`), granted by products.
public struct EntitlementDefinition: Sendable, Equatable {
    public var id: String

    public init(id: String) {
        self.id = id
    }
}

public enum ProductType: String, Sendable, Equatable, CaseIterable {
    case subscription
    case nonConsumable = "non_consumable"
    case consumable
}

/// A store product the project sells, the entitlements it unlocks and the currency it grants.
public struct ProductDefinition: Sendable, Equatable {
    /// The store's product id.
    public var id: String
    public var type: ProductType
    public var entitlements: [String]
    public var grants: [CurrencyGrant]

    public init(id: String, type: ProductType, entitlements: [String] = [], grants: [CurrencyGrant] = []) {
        self.id = id
        self.type = type
        self.entitlements = entitlements
        self.grants = grants
    }

    /// The product's grant of `currency`, if any (``ProjectConfig/validate()`` allows at most one).
    public func grant(of currency: String) -> CurrencyGrant? {
        grants.first { $0.currency == currency }
    }
}

/// Which paid terms of a product grant currency (DESIGN.md, "Virtual currencies").
public enum GrantTrigger: String, Sendable, Equatable, CaseIterable {
    /// The first paid term, a resubscribe, or a one-time purchase.
    case purchase
    /// Later auto-renewed terms of a subscription.
    case renewal
    case both

    public var firesOnPurchase: Bool { self != .renewal }
    public var firesOnRenewal: Bool { self != .purchase }
}

/// An amount of a currency that a product's paid terms grant.
public struct CurrencyGrant: Sendable, Equatable {
    /// A currency code from ``ProjectConfig/currencies``.
    public var currency: String
    public var amount: Int64
    public var on: GrantTrigger

    public init(currency: String, amount: Int64, on: GrantTrigger) {
        self.currency = currency
        self.amount = amount
        self.on = on
    }
}

// MARK: Currencies

public struct CurrencyDefinition: Sendable, Equatable {
    /// `A–Z`, `a–z`, `0–9` and `_`, as in `COINS`.
    public var code: String
    /// For people; defaults to the code.
    public var name: String

    public init(code: String, name: String? = nil) {
        self.code = code
        self.name = name ?? code
    }
}

// MARK: Offerings

/// A set of packages an app shows together; the default one is what a paywall shows first.
public struct OfferingDefinition: Sendable, Equatable {
    public var id: String
    public var isDefault: Bool
    /// For people: what the offering is for.
    public var description: String?
    /// Free-form data the app reads with the offering (a paywall's texts or colours), as the
    /// compact JSON text of an object. The rules never look inside it: the domain keeps it as it
    /// came and bounds its size, and the wire layer reads and writes it.
    public var metadataJSON: String?
    public var packages: [PackageDefinition]

    public init(
        id: String, isDefault: Bool = false, description: String? = nil, metadataJSON: String? = nil,
        packages: [PackageDefinition] = []
    ) {
        self.id = id
        self.isDefault = isDefault
        self.description = description
        self.metadataJSON = metadataJSON
        self.packages = packages
    }
}

public enum PackageType: String, Sendable, Equatable, CaseIterable {
    case weekly
    case monthly
    case twoMonth = "two_month"
    case threeMonth = "three_month"
    case sixMonth = "six_month"
    case annual
    case lifetime
    case custom
}

/// One product as an offering presents it.
public struct PackageDefinition: Sendable, Equatable {
    public var id: String
    public var type: PackageType
    /// A product id from ``ProjectConfig/products``.
    public var product: String

    public init(id: String, type: PackageType = .custom, product: String) {
        self.id = id
        self.type = type
        self.product = product
    }
}

// MARK: Settings

/// What logging in with a customer user id that belongs to another profile does (DESIGN.md).
public enum LoginMode: String, Sendable, Equatable, CaseIterable {
    case alias
    case `switch`
}

/// Where a restored purchase that another profile owns ends up (DESIGN.md).
public enum RestoreMode: String, Sendable, Equatable, CaseIterable {
    case transfer
    case transferIfNoActive = "transfer_if_no_active"
    case keep
}

public struct StoreSettings: Sendable, Equatable {
    /// Whether the test store's purchases are accepted.
    public var test: Bool
    /// `nil`: App Store payloads are not accepted.
    public var appStore: AppStoreSettings?
    /// `nil`: Stripe's events are not taken.
    public var stripe: StripeSettings?

    public init(test: Bool = false, appStore: AppStoreSettings? = nil, stripe: StripeSettings? = nil) {
        self.test = test
        self.appStore = appStore
        self.stripe = stripe
    }
}

/// The app that signed App Store payloads must match (else `wrong_app`), and the key the
/// project asks Apple with.
public struct AppStoreSettings: Sendable, Equatable {
    public var bundleID: String
    public var environment: AppStoreEnvironment
    /// Checked in production only, as Apple's library does.
    public var appAppleID: Int64?
    /// `stores.app_store.api`; `nil`: Apple is never asked (DESIGN.md, "Asking Apple").
    public var apiKey: InAppPurchaseKey?

    public init(bundleID: String, environment: AppStoreEnvironment, appAppleID: Int64? = nil, apiKey: InAppPurchaseKey? = nil) {
        self.bundleID = bundleID
        self.environment = environment
        self.appAppleID = appAppleID
        self.apiKey = apiKey
    }
}

/// An In-App Purchase key from App Store Connect, which signs the project's requests to the App
/// Store Server API. The private key is a secret: no answer shows it.
public struct InAppPurchaseKey: Sendable, Equatable {
    public var issuerID: String
    public var keyID: String
    /// The `.p8` file's text. `nil` only in a `config.put` that keeps the stored key (one that
    /// names the same `key_id` and `issuer_id`, as a `config.get` shows it):
    /// ``ProjectState/replaceConfig(with:random:)`` puts the stored one back, so a project's config
    /// always holds it.
    public var privateKeyPEM: String?

    public init(issuerID: String, keyID: String, privateKeyPEM: String?) {
        self.issuerID = issuerID
        self.keyID = keyID
        self.privateKeyPEM = privateKeyPEM
    }

    /// Whether `other` names the same key of the same team.
    public func isSameKey(as other: InAppPurchaseKey) -> Bool {
        issuerID == other.issuerID && keyID == other.keyID
    }
}

public enum AppStoreEnvironment: String, Sendable, Equatable, CaseIterable {
    case sandbox
    case production

    /// Whether Apple's spelling of an environment (`Sandbox`, `Production`) names this one;
    /// PROTOCOL.md compares them without regard to case.
    public func matches(_ appleEnvironment: String) -> Bool {
        appleEnvironment.lowercased() == rawValue
    }
}

/// How much a project lets its keys do.
public struct ProjectLimits: Sendable, Equatable {
    /// Profiles the public key may create a second, in bursts of up to ten times as many. The
    /// public key ships inside every app, so anyone can hold it; the secret key is not limited.
    public var sdkCreatesPerSecond: Int64

    public init(sdkCreatesPerSecond: Int64 = 1_000) {
        self.sdkCreatesPerSecond = sdkCreatesPerSecond
    }

    /// How many creations a burst may hold.
    public var sdkCreatesBurst: Int64 { sdkCreatesPerSecond * 10 }
}
