import GatehouseCore
import GatehouseWire
import Testing

// `stores.stripe` and `web` in a config document (PROTOCOL.md, "Configuration"; DESIGN.md, "Web
// purchases and redemption links").

private let webDocument = """
    {
      "products": [{"id": "pro_monthly", "type": "subscription"}, {"id": "lifetime", "type": "non_consumable"}],
      "stores": {"stripe": {
        "webhook_secrets": ["whsec_new0123", "whsec_old0123"], "secret_key": "sk_test_51abc",
        "prices": {"price_1Monthly": "pro_monthly", "price_1Life": "lifetime"}, "livemode": true
      }},
      "web": {
        "app_name": "Scanner", "app_scheme": "scanner", "support_email": "help@example.com",
        "app_store_url": "https://apps.apple.com/app/id1", "play_store_url": "https://play.google.com/store/apps/details?id=x",
        "redemption_link_hours": 48, "success_mode": "redirect", "redirect_url": "https://example.com/thanks"
      }
    }
    """

private let webConfig = ProjectConfig(
    products: [ProductDefinition(id: "pro_monthly", type: .subscription), ProductDefinition(id: "lifetime", type: .nonConsumable)],
    stores: StoreSettings(
        stripe: StripeSettings(
            webhookSecrets: ["whsec_new0123", "whsec_old0123"], secretKey: "sk_test_51abc",
            prices: [StripePrice(priceID: "price_1Monthly", productID: "pro_monthly"), StripePrice(priceID: "price_1Life", productID: "lifetime")],
            livemode: true)),
    web: WebSettings(
        appName: "Scanner", appScheme: "scanner", supportEmail: "help@example.com", appStoreURL: "https://apps.apple.com/app/id1",
        playStoreURL: "https://play.google.com/store/apps/details?id=x", redemptionLinkHours: 48, successMode: .redirect,
        redirectURL: "https://example.com/thanks")
)

private func document(_ edit: (inout JSONObject) -> Void = { _ in }) throws -> JSONObject {
    var json = try #require(try JSONParser.parse(webDocument).objectValue)
    edit(&json)
    return json
}

private func withStripe(_ edit: (inout JSONObject) -> Void) throws -> JSONObject {
    try document { json in
        var stores = json["stores"]?.objectValue ?? [:]
        var stripe = stores["stripe"]?.objectValue ?? [:]
        edit(&stripe)
        stores["stripe"] = .object(stripe)
        json["stores"] = .object(stores)
    }
}

private func withWeb(_ edit: (inout JSONObject) -> Void) throws -> JSONObject {
    try document { json in
        var web = json["web"]?.objectValue ?? [:]
        edit(&web)
        json["web"] = .object(web)
    }
}

@Suite struct WebConfigCodecTests {
    @Test func stripeAndWebDecode() throws {
        #expect(try ProjectConfig(json: document()) == webConfig)
    }

    @Test func theyRoundTripThroughText() throws {
        let text = JSONWriter.string(webConfig.json)
        let reparsed = try ProjectConfig(json: #require(try JSONParser.parse(text).objectValue))
        #expect(reparsed == webConfig)
        #expect(JSONWriter.string(reparsed.json) == text)
    }

    @Test func theSecretKeysFormShowsStripesSecretsAndThePricesInOrder() throws {
        let json = try #require(webConfig.json.objectValue)
        let expected: JSONValue = [
            "test": false, "app_store": nil,
            "stripe": [
                "webhook_secrets": ["whsec_new0123", "whsec_old0123"], "secret_key": "sk_test_51abc",
                "prices": ["price_1Monthly": "pro_monthly", "price_1Life": "lifetime"], "livemode": true,
            ],
        ]
        #expect(json["stores"] == expected)
        #expect(json["web"]?.objectValue?["redemption_link_hours"] == 48)
    }

    @Test func theSDKFormShowsNoStripeSecret() throws {
        let sdk = try #require(webConfig.sdkJSON.objectValue)
        let text = JSONWriter.string(webConfig.sdkJSON)
        for hidden in ["whsec_new0123", "whsec_old0123", "sk_test_51abc"] { #expect(!text.contains(hidden)) }
        #expect(sdk["stores"]?.objectValue?["stripe"] == ["prices": ["price_1Monthly": "pro_monthly", "price_1Life": "lifetime"], "livemode": true])
        #expect(sdk["web"] == webConfig.json.objectValue?["web"])
    }

    @Test func defaultsFillWhatIsLeftOut() throws {
        let config = try ProjectConfig(json: document { json in
            json["stores"] = ["stripe": ["webhook_secrets": ["whsec_only0123"]]]
            json["web"] = ["app_name": "Scanner"]
        })
        #expect(config.stores.stripe == StripeSettings(webhookSecrets: ["whsec_only0123"]))
        #expect(config.web == WebSettings(appName: "Scanner"))
        #expect(config.web?.redemptionLinkHours == 24)
        #expect(config.web?.successMode == .page)
    }

    @Test(arguments: [
        (["stores", "stripe", "webhook_secret"], "stores.stripe.webhook_secret"),
        (["stores", "stripe", "live_mode"], "stores.stripe.live_mode"),
        (["web", "appname"], "web.appname"),
        (["web", "success"], "web.success"),
    ] as [([String], String)])
    func unknownKeysAreRefusedAtAnyDepth(path: [String], field: String) throws {
        var json = try document()
        if path[0] == "stores" {
            json = try withStripe { $0[path[2]] = "x" }
        } else {
            json = try withWeb { $0[path[1]] = "x" }
        }
        expectRefused(json, at: field)
    }

    @Test func wrongTypesAreNamedByPath() throws {
        expectRefused(try withStripe { $0["webhook_secrets"] = "whsec_a0123456" }, at: "stores.stripe.webhook_secrets")
        expectRefused(try withStripe { $0["webhook_secrets"] = [1] }, at: "stores.stripe.webhook_secrets[0]")
        expectRefused(try withStripe { $0["secret_key"] = 5 }, at: "stores.stripe.secret_key")
        expectRefused(try withStripe { $0["prices"] = ["price_1Life"] }, at: "stores.stripe.prices")
        expectRefused(try withStripe { $0["prices"] = ["price_1Life": 1] }, at: "stores.stripe.prices.price_1Life")
        expectRefused(try withStripe { $0["livemode"] = "yes" }, at: "stores.stripe.livemode")
        expectRefused(try withWeb { $0["app_name"] = 1 }, at: "web.app_name")
        expectRefused(try withWeb { $0["redemption_link_hours"] = "24" }, at: "web.redemption_link_hours")
        expectRefused(try withWeb { $0["success_mode"] = "popup" }, at: "web.success_mode")
        expectRefused(try document { $0["web"] = "Scanner" }, at: "web")
    }

    @Test func requiredFieldsAreNamed() throws {
        expectRefused(try withStripe { $0["webhook_secrets"] = nil }, at: "stores.stripe.webhook_secrets")
        expectRefused(try withWeb { $0["app_name"] = nil }, at: "web.app_name")
    }
}
