import GatehouseBase
import GatehouseCore
import Testing

// The rules of `stores.stripe` and `web` (DESIGN.md, "Web purchases and redemption links").

private let valid = ProjectConfig(
    products: [ProductDefinition(id: "pro", type: .subscription)],
    stores: StoreSettings(
        stripe: StripeSettings(webhookSecrets: ["whsec_abc123", "whsec_OLD_9"], secretKey: "sk_live_51xyz",
                               prices: [StripePrice(priceID: "price_1Pro", productID: "pro")])),
    web: WebSettings(appName: "Scanner", appScheme: "scanner", supportEmail: "help@example.com",
                     appStoreURL: "https://apps.apple.com/app/id1", playStoreURL: "https://play.google.com/store/apps/details?id=x")
)

private func validWith(_ change: (inout ProjectConfig) -> Void) -> ProjectConfig {
    var config = valid
    change(&config)
    return config
}

private func expectRefused(_ config: ProjectConfig, at field: String, sourceLocation: SourceLocation = #_sourceLocation) {
    expectConfigRefused(config, at: field, replacing: valid, sourceLocation: sourceLocation)
}

@Suite struct WebConfigValidationTests {
    @Test func aValidConfigPasses() throws {
        try valid.validate()
        try validWith { $0.stores.stripe?.secretKey = "rk_test_restricted" }.validate()
        try validWith { $0.web?.successMode = .redirect; $0.web?.redirectURL = "https://example.com/done" }.validate()
        try ProjectConfig(web: WebSettings(appName: "Just the pages")).validate()
    }

    @Test func stripeNeedsTheWebSettings() {
        expectRefused(validWith { $0.web = nil }, at: "web")
    }

    @Test func stripeNeedsASecretAndAtMostFour() {
        expectRefused(validWith { $0.stores.stripe?.webhookSecrets = [] }, at: "stores.stripe.webhook_secrets")
        expectRefused(validWith { $0.stores.stripe?.webhookSecrets = (0...4).map { "whsec_s\($0)x1234" } }, at: "stores.stripe.webhook_secrets")
    }

    @Test(arguments: ["sk_abc123", "whsec_", "whsec_a b1234", "whsec_é12345", "whsec_" + String(repeating: "a", count: 251)])
    func badWebhookSecretsAreRefused(secret: String) {
        expectRefused(validWith { $0.stores.stripe?.webhookSecrets[1] = secret }, at: "stores.stripe.webhook_secrets[1]")
    }

    @Test(arguments: ["pk_live_51xyz", "sk_", "sk_live\n51xyz", "whsec_abc123"])
    func badSecretKeysAreRefused(key: String) {
        expectRefused(validWith { $0.stores.stripe?.secretKey = key }, at: "stores.stripe.secret_key")
    }

    @Test func aPriceMustNameAKnownProductOnce() {
        expectRefused(validWith { $0.stores.stripe?.prices[0].productID = "gold" }, at: "stores.stripe.prices.price_1Pro")
        expectRefused(validWith { $0.stores.stripe?.prices.append(StripePrice(priceID: "price_1Pro", productID: "pro")) },
                      at: "stores.stripe.prices.price_1Pro")
        expectRefused(validWith { $0.stores.stripe?.prices[0].priceID = "price 1" }, at: "stores.stripe.prices.price 1")
    }

    @Test(arguments: ["", " Scanner", String(repeating: "x", count: 101), "Scan\u{7}ner"])
    func badAppNamesAreRefused(name: String) {
        expectRefused(validWith { $0.web?.appName = name }, at: "web.app_name")
    }

    @Test(arguments: ["Scanner", "1scan", "scan ner", "scan/ner", "https", "javascript", "", String(repeating: "a", count: 65)])
    func badSchemesAreRefused(scheme: String) {
        expectRefused(validWith { $0.web?.appScheme = scheme }, at: "web.app_scheme")
    }

    @Test(arguments: ["scanner", "com.example.scanner", "gh-0123456789", "a+b-c.d"])
    func schemesAsRFC3986SpellsThemPass(scheme: String) throws {
        try validWith { $0.web?.appScheme = scheme }.validate()
    }

    @Test(arguments: ["help", "@example.com", "help@", "help@example", "a@b@example.com", "Help <help@example.com>", "he lp@example.com"])
    func badSupportEmailsAreRefused(email: String) {
        expectRefused(validWith { $0.web?.supportEmail = email }, at: "web.support_email")
    }

    @Test func storeLinksAndTheRedirectAreHTTPS() {
        expectRefused(validWith { $0.web?.appStoreURL = "http://apps.apple.com/app/id1" }, at: "web.app_store_url")
        expectRefused(validWith { $0.web?.playStoreURL = "javascript:alert(1)" }, at: "web.play_store_url")
        expectRefused(validWith { $0.web?.redirectURL = "ftp://example.com" }, at: "web.redirect_url")
    }

    @Test func redirectModeNeedsARedirectURL() {
        expectRefused(validWith { $0.web?.successMode = .redirect }, at: "web.redirect_url")
    }

    @Test(arguments: [0, 721] as [Int64])
    func linkHoursOutOfRangeAreRefused(hours: Int64) {
        expectRefused(validWith { $0.web?.redemptionLinkHours = hours }, at: "web.redemption_link_hours")
    }

    @Test func theDefaultSchemeIsGhAndTenHexDigitsOfTheProjectIDsHash() throws {
        let id = try ProjectID(validating: "acme")
        // `printf acme | sha256sum` starts 822b33ad87.
        let expected = "gh-822b33ad87"
        #expect(WebSettings.defaultScheme(projectID: id) == expected)
        #expect(WebSettings(appName: "A").scheme(projectID: id) == expected)
        #expect(WebSettings(appName: "A", appScheme: "scanner").scheme(projectID: id) == "scanner")
    }

    @Test func pricesAndProductsLookEachOtherUp() {
        let stripe = StripeSettings(webhookSecrets: ["whsec_a1234567"], prices: [
            StripePrice(priceID: "price_a", productID: "pro"), StripePrice(priceID: "price_b", productID: "pro"),
        ])
        #expect(stripe.product(forPrice: "price_b") == "pro")
        #expect(stripe.product(forPrice: "price_c") == nil)
        #expect(stripe.price(forProduct: "pro") == "price_a")
    }
}
