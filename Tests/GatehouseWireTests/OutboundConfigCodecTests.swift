import GatehouseCore
import GatehouseWire
import Testing

// `webhooks` and `integrations` in a config document (PROTOCOL.md, "Configuration").

/// 32 bytes of `0x01`…, as standard base64.
private let secret = "whsec_" + "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="
private let oldSecret = "whsec_" + "ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3"

private let outboundDocument = """
    {
      "webhooks": [
        {"id": "backend", "url": "https://hooks.example.com/rc", "secret": "\(secret)",
         "previous_secret": "\(oldSecret)", "authorization": "Bearer abc",
         "events": ["INITIAL_PURCHASE", "RENEWAL"]},
        {"id": "audit", "url": "http://127.0.0.1:8080/in"}
      ],
      "integrations": {"onesignal": {
        "app_id": "5eb5a37e-b458-11e3-ac11-000c2940e62c", "api_key": "os_v2_app_key",
        "url": "https://push.example.com/notifications",
        "notifications": {"RENEWAL": {"title": "Thanks", "message": "Renewed"},
                          "BILLING_ISSUE": {"title": "Payment", "message": "Please update your card"}}
      }}
    }
    """

private let outboundConfig = ProjectConfig(
    webhooks: [
        WebhookSettings(
            id: "backend", url: "https://hooks.example.com/rc", secret: secret, previousSecret: oldSecret,
            authorization: "Bearer abc", events: ["INITIAL_PURCHASE", "RENEWAL"]),
        WebhookSettings(id: "audit", url: "http://127.0.0.1:8080/in"),
    ],
    integrations: IntegrationSettings(
        oneSignal: OneSignalSettings(
            appID: "5eb5a37e-b458-11e3-ac11-000c2940e62c", apiKey: "os_v2_app_key",
            url: "https://push.example.com/notifications",
            notifications: [
                OneSignalNotification(type: .renewal, title: "Thanks", message: "Renewed"),
                OneSignalNotification(type: .billingIssue, title: "Payment", message: "Please update your card"),
            ]))
)

private func document() throws -> JSONObject {
    try #require(try JSONParser.parse(outboundDocument).objectValue)
}

/// The document with `edit` applied to its first webhook, or its OneSignal settings.
private func withWebhook(_ edit: (inout JSONObject) -> Void) throws -> JSONObject {
    var json = try document()
    var webhooks = try #require(json["webhooks"]?.arrayValue)
    var first = try #require(webhooks[0].objectValue)
    edit(&first)
    webhooks[0] = .object(first)
    json["webhooks"] = .array(webhooks)
    return json
}

private func withOneSignal(_ edit: (inout JSONObject) -> Void) throws -> JSONObject {
    var json = try document()
    var oneSignal = try #require(json["integrations"]?.objectValue?["onesignal"]?.objectValue)
    edit(&oneSignal)
    json["integrations"] = ["onesignal": .object(oneSignal)]
    return json
}

@Suite struct OutboundConfigCodecTests {
    @Test func webhooksAndIntegrationsDecode() throws {
        #expect(try ProjectConfig(json: document()) == outboundConfig)
    }

    @Test func webhooksAndIntegrationsRoundTripThroughText() throws {
        let text = JSONWriter.string(outboundConfig.json)
        let reparsed = try ProjectConfig(json: #require(try JSONParser.parse(text).objectValue))
        #expect(reparsed == outboundConfig)
        #expect(JSONWriter.string(reparsed.json) == text)
    }

    @Test func theSecretKeysFormShowsEverySecretInOrder() throws {
        let json = try #require(outboundConfig.json.objectValue)
        #expect(Array(json.keys.suffix(2)) == ["webhooks", "integrations"])
        let expectedWebhooks: JSONValue = [
            [
                "id": "backend", "url": "https://hooks.example.com/rc", "secret": .string(secret),
                "previous_secret": .string(oldSecret), "authorization": "Bearer abc",
                "events": ["INITIAL_PURCHASE", "RENEWAL"],
            ],
            [
                "id": "audit", "url": "http://127.0.0.1:8080/in", "secret": nil, "previous_secret": nil,
                "authorization": nil, "events": nil,
            ],
        ]
        #expect(json["webhooks"] == expectedWebhooks)
        let expectedIntegrations: JSONValue = [
            "onesignal": [
                "app_id": "5eb5a37e-b458-11e3-ac11-000c2940e62c", "api_key": "os_v2_app_key",
                "url": "https://push.example.com/notifications",
                "notifications": [
                    "RENEWAL": ["title": "Thanks", "message": "Renewed"],
                    "BILLING_ISSUE": ["title": "Payment", "message": "Please update your card"],
                ],
            ]
        ]
        #expect(json["integrations"] == expectedIntegrations)
    }

    @Test func theSDKFormHasNoWebhooksNorIntegrations() throws {
        let sdk = try #require(outboundConfig.sdkJSON.objectValue)
        #expect(sdk["webhooks"] == nil)
        #expect(sdk["integrations"] == nil)
        let text = JSONWriter.string(outboundConfig.sdkJSON)
        for hidden in [secret, oldSecret, "Bearer abc", "os_v2_app_key", "hooks.example.com"] {
            #expect(!text.contains(hidden))
        }
        var full = try #require(outboundConfig.json.objectValue)
        full["webhooks"] = nil
        full["integrations"] = nil
        #expect(Array(sdk.keys) == Array(full.keys.filter { $0 != "webhooks" && $0 != "integrations" }))
    }

    @Test func aWebhookWithoutEventsIsForEveryType() throws {
        let config = try ProjectConfig(json: document())
        #expect(config.webhooks[1].events == nil)
        #expect(config.webhooks[1].wants(.refund))
        #expect(!config.webhooks[0].wants(.refund))
    }

    @Test(
        arguments: [
            (["webhooks", "0", "secrt"], "webhooks[0].secrt"),
            (["integrations", "pushy"], "integrations.pushy"),
            (["integrations", "onesignal", "appid"], "integrations.onesignal.appid"),
            (["integrations", "onesignal", "notifications", "RENEWAL", "body"],
             "integrations.onesignal.notifications.RENEWAL.body"),
        ] as [([String], String)])
    func unknownKeysAreRefusedAtAnyDepth(path: [String], field: String) throws {
        var json = try document()
        json = set(.object(json), at: path[...], to: "x").objectValue!
        expectRefused(json, at: field)
    }

    @Test func wrongTypesAreNamedByPath() throws {
        expectRefused(try withWebhook { $0["url"] = 5 }, at: "webhooks[0].url")
        expectRefused(try withWebhook { $0["events"] = "RENEWAL" }, at: "webhooks[0].events")
        expectRefused(try withWebhook { $0["events"] = [1] }, at: "webhooks[0].events[0]")
        expectRefused(try withWebhook { $0["authorization"] = true }, at: "webhooks[0].authorization")
        expectRefused(try withOneSignal { $0["notifications"] = [] }, at: "integrations.onesignal.notifications")
        expectRefused(
            try withOneSignal { $0["notifications"] = ["RENEWAL": "hi"] }, at: "integrations.onesignal.notifications.RENEWAL")
        expectRefused(
            try withOneSignal { $0["notifications"] = ["RENEWAL": ["title": 1, "message": "m"]] },
            at: "integrations.onesignal.notifications.RENEWAL.title")
        var json = try document()
        json["webhooks"] = ["x"]
        expectRefused(json, at: "webhooks[0]")
        json["webhooks"] = nil
        json["integrations"] = ["onesignal": "x"]
        expectRefused(json, at: "integrations.onesignal")
    }

    @Test func requiredFieldsAreNamed() throws {
        expectRefused(try withWebhook { $0["id"] = nil }, at: "webhooks[0].id")
        expectRefused(try withWebhook { $0["url"] = nil }, at: "webhooks[0].url")
        expectRefused(try withOneSignal { $0["app_id"] = nil }, at: "integrations.onesignal.app_id")
        expectRefused(
            try withOneSignal { $0["notifications"] = ["RENEWAL": ["title": "t"]] },
            at: "integrations.onesignal.notifications.RENEWAL.message")
    }

    @Test func aNotificationForAnUnknownTypeIsRefused() throws {
        expectRefused(
            try withOneSignal { $0["notifications"] = ["RENEWED": ["title": "t", "message": "m"]] },
            at: "integrations.onesignal.notifications.RENEWED")
    }

    @Test func moreThanTwentyWebhooksAreRefused() throws {
        let webhooks: [JSONValue] = (0...20).map { ["id": .string("w\($0)"), "url": "https://example.com"] }
        expectRefused(["webhooks": .array(webhooks)], at: "webhooks")
    }
}

private func set(_ json: JSONValue, at path: ArraySlice<String>, to value: JSONValue) -> JSONValue {
    guard let key = path.first else { return value }
    if let index = Int(key), var array = json.arrayValue {
        array[index] = set(array[index], at: path.dropFirst(), to: value)
        return .array(array)
    }
    var object = json.objectValue ?? [:]
    object[key] = set(object[key] ?? .object([:]), at: path.dropFirst(), to: value)
    return .object(object)
}
