import GatehouseBase

// Selling on the web (DESIGN.md, "Web purchases and redemption links"): the config's
// `stores.stripe` and `web`.

/// `stores.stripe`: the project takes Stripe's events and makes Checkout links.
public struct StripeSettings: Sendable, Equatable {
    /// The signing secrets of the project's Stripe webhook endpoint (`whsec_…`, as Stripe shows
    /// them): an event signed with any of them is taken, so a secret is rotated by listing both.
    public var webhookSecrets: [String]
    /// The API key Checkout Sessions are made with (`sk_…` or a restricted `rk_…`); `nil`: the
    /// project takes Stripe's events but makes no purchase links.
    public var secretKey: String?
    /// Which product each Stripe price sells, in the order the config lists them.
    public var prices: [StripePrice]
    /// Whether the project takes live-mode events (`true`) or test-mode ones.
    public var livemode: Bool

    public init(webhookSecrets: [String], secretKey: String? = nil, prices: [StripePrice] = [], livemode: Bool = false) {
        self.webhookSecrets = webhookSecrets
        self.secretKey = secretKey
        self.prices = prices
        self.livemode = livemode
    }

    /// The product a Stripe price sells, if the config names the price.
    public func product(forPrice priceID: String) -> String? {
        prices.first { $0.priceID == priceID }?.productID
    }

    /// The price that sells a product, for a purchase link (the first the config lists).
    public func price(forProduct productID: String) -> String? {
        prices.first { $0.productID == productID }?.priceID
    }
}

/// One entry of `stores.stripe.prices`: `{<Stripe price id>: <product id>}`.
public struct StripePrice: Sendable, Equatable {
    public var priceID: String
    public var productID: String

    public init(priceID: String, productID: String) {
        self.priceID = priceID
        self.productID = productID
    }
}

/// `web`: how the pages, the email and the links a web buyer gets present the app.
public struct WebSettings: Sendable, Equatable {
    public enum SuccessMode: String, Sendable, Equatable, CaseIterable {
        /// Checkout returns to Gatehouse's own success page.
        case page
        /// Checkout returns to `redirect_url`, which gets `redemption_url`.
        case redirect
    }

    public var appName: String
    /// The app's URL scheme for the deep link; `nil`: ``defaultScheme(projectID:)``.
    public var appScheme: String?
    /// The email's `Reply-To`.
    public var supportEmail: String?
    public var appStoreURL: String?
    public var playStoreURL: String?
    public var redemptionLinkHours: Int64
    public var successMode: SuccessMode
    /// Required with `success_mode: redirect`.
    public var redirectURL: String?

    public static let defaultRedemptionLinkHours: Int64 = 24

    public init(
        appName: String, appScheme: String? = nil, supportEmail: String? = nil, appStoreURL: String? = nil,
        playStoreURL: String? = nil, redemptionLinkHours: Int64 = Self.defaultRedemptionLinkHours,
        successMode: SuccessMode = .page, redirectURL: String? = nil
    ) {
        self.appName = appName
        self.appScheme = appScheme
        self.supportEmail = supportEmail
        self.appStoreURL = appStoreURL
        self.playStoreURL = playStoreURL
        self.redemptionLinkHours = redemptionLinkHours
        self.successMode = successMode
        self.redirectURL = redirectURL
    }

    /// The scheme of the project's deep links: the configured one, else `gh-` and the first
    /// 10 hex digits of the SHA-256 of the project id, which is the same on every server.
    public func scheme(projectID: ProjectID) -> String {
        appScheme ?? Self.defaultScheme(projectID: projectID)
    }

    /// The scheme of the deep links of a project whose config has `settings` (none: the default).
    public static func scheme(of settings: WebSettings?, projectID: ProjectID) -> String {
        settings?.scheme(projectID: projectID) ?? defaultScheme(projectID: projectID)
    }

    public static func defaultScheme(projectID: ProjectID) -> String {
        "gh-" + String(SHA256.hex(projectID.description).prefix(10))
    }
}
