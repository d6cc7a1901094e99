import GatehouseBase
import GatehouseCore
import Testing

// The rules of `webhooks` and `integrations`, and the secrets a `config.put` keeps or gets.

private let secret = "whsec_" + "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="

private let valid = ProjectConfig(
    webhooks: [
        WebhookSettings(
            id: "backend", url: "https://hooks.example.com/rc?x=1", secret: secret, authorization: "Bearer abc",
            events: ["INITIAL_PURCHASE", "RENEWAL"]),
        WebhookSettings(id: "a0_-z", url: "http://[::1]:8080/in"),
    ],
    integrations: IntegrationSettings(
        oneSignal: OneSignalSettings(
            appID: "app", apiKey: "key",
            notifications: [OneSignalNotification(type: .renewal, title: "Thanks", message: "Renewed")]))
)

private func validWith(_ change: (inout ProjectConfig) -> Void) -> ProjectConfig {
    var config = valid
    change(&config)
    return config
}

/// Expects `bad_request` naming `field` (``expectConfigRefused(_:at:replacing:sourceLocation:)``).
private func expectRefused(_ config: ProjectConfig, at field: String, sourceLocation: SourceLocation = #_sourceLocation) {
    expectConfigRefused(config, at: field, replacing: valid, sourceLocation: sourceLocation)
}

@Suite struct OutboundConfigValidationTests {
    @Test func aValidConfigPasses() throws {
        try valid.validate()
    }

    @Test(arguments: ["", "Backend", "_x", "-x", "a.b", "a b", "é", String(repeating: "a", count: 65)])
    func badWebhookIDsAreRefused(id: String) {
        expectRefused(validWith { $0.webhooks[1].id = id }, at: "webhooks[1].id")
    }

    @Test func aWebhookIDOfSixtyFourCharactersPasses() throws {
        try validWith { $0.webhooks[1].id = String(repeating: "a", count: 64) }.validate()
    }

    @Test func aRepeatedWebhookIDIsRefused() {
        expectRefused(validWith { $0.webhooks[1].id = "backend" }, at: "webhooks[1].id")
    }

    @Test func moreThanTwentyWebhooksAreRefused() throws {
        let twenty = (0..<20).map { WebhookSettings(id: "w\($0)", url: "https://example.com") }
        try ProjectConfig(webhooks: twenty).validate()
        expectRefused(ProjectConfig(webhooks: twenty + [WebhookSettings(id: "w20", url: "https://example.com")]), at: "webhooks")
    }

    @Test(arguments: [
        "", "example.com", "ftp://example.com", "https://", "https:///path", "https://:443/", "https://a b.com",
        "https://example.com/\u{7}", "https://user:pw@example.com/", "https://example.com:0/", "https://example.com:65536",
        "https://example.com:8a/", "https://[::1/", "HTTPS://example.com",
        "https://example.com/" + String(repeating: "a", count: 2_029),
    ])
    func badURLsAreRefused(url: String) {
        expectRefused(validWith { $0.webhooks[0].url = url }, at: "webhooks[0].url")
        expectRefused(validWith { $0.integrations.oneSignal?.url = url }, at: "integrations.onesignal.url")
    }

    @Test(arguments: [
        "https://example.com", "http://localhost:9/x", "https://example.com:65535/a?b#c",
        "https://example.com/" + String(repeating: "a", count: 2_028),
    ])
    func goodURLsPass(url: String) throws {
        try validWith { $0.webhooks[0].url = url }.validate()
    }

    @Test(arguments: [
        "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=",  // no prefix
        "whsec_",
        "whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhc=",  // 23 bytes
        "whsec_" + String(repeating: "AAAA", count: 22),  // 66 bytes
        "whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyB=",  // unused bits set
        "whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHy==",  // more padding than the length needs
        "whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA==",
        "whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQV-hcYGRobHB0eHyA=",  // the URL alphabet
        "whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQV hcYGRobHB0eHyA=",
        "whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=A",  // padding inside
        "whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eH",  // 4n+1 characters
        "WHSEC_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=",
    ])
    func badSecretsAreRefused(secret: String) {
        expectRefused(validWith { $0.webhooks[0].secret = secret }, at: "webhooks[0].secret")
        expectRefused(validWith { $0.webhooks[1].previousSecret = secret }, at: "webhooks[1].previous_secret")
    }

    @Test(arguments: [
        "whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcY",  // 24 bytes, no padding needed
        "whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA",  // 32 bytes, padding left out
        "whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=",
        "whsec_" + String(repeating: "AAAA", count: 21) + "AA==",  // 64 bytes
        "whsec_++//" + String(repeating: "AAAA", count: 7),
    ])
    func goodSecretsPass(secret: String) throws {
        try validWith { $0.webhooks[0].secret = secret }.validate()
    }

    @Test(arguments: ["", "a\rb", "a\nb", "a\0b", String(repeating: "a", count: 1_001)])
    func badAuthorizationsAreRefused(authorization: String) {
        expectRefused(validWith { $0.webhooks[0].authorization = authorization }, at: "webhooks[0].authorization")
    }

    @Test func anAuthorizationOfAThousandCharactersPasses() throws {
        try validWith { $0.webhooks[0].authorization = String(repeating: "a", count: 1_000) }.validate()
    }

    @Test func badEventListsAreRefused() {
        expectRefused(validWith { $0.webhooks[0].events = [] }, at: "webhooks[0].events")
        expectRefused(validWith { $0.webhooks[0].events = ["RENEWAL", "RENEWED"] }, at: "webhooks[0].events[1]")
        expectRefused(validWith { $0.webhooks[0].events = ["TEST"] }, at: "webhooks[0].events[0]")
        expectRefused(validWith { $0.webhooks[0].events = ["renewal"] }, at: "webhooks[0].events[0]")
        expectRefused(validWith { $0.webhooks[0].events = ["RENEWAL", "RENEWAL"] }, at: "webhooks[0].events[1]")
    }

    @Test func everyTypeButTestMayBeListed() throws {
        let types = EventType.allCases.filter { $0 != .test }.map(\.rawValue)
        try validWith { $0.webhooks[0].events = types }.validate()
    }

    @Test func badOneSignalSettingsAreRefused() {
        let path = "integrations.onesignal"
        expectRefused(validWith { $0.integrations.oneSignal?.appID = "" }, at: "\(path).app_id")
        expectRefused(validWith { $0.integrations.oneSignal?.appID = String(repeating: "a", count: 101) }, at: "\(path).app_id")
        expectRefused(validWith { $0.integrations.oneSignal?.apiKey = "" }, at: "\(path).api_key")
        expectRefused(validWith { $0.integrations.oneSignal?.apiKey = String(repeating: "k", count: 501) }, at: "\(path).api_key")
        expectRefused(validWith { $0.integrations.oneSignal?.apiKey = "a\nb" }, at: "\(path).api_key")
        expectRefused(validWith { $0.integrations.oneSignal?.apiKey = "a\rb" }, at: "\(path).api_key")
    }

    @Test func badNotificationsAreRefused() {
        let path = "integrations.onesignal.notifications"
        let renewal = OneSignalNotification(type: .renewal, title: "t", message: "m")
        expectRefused(validWith { $0.integrations.oneSignal?.notifications[0].title = "" }, at: "\(path).RENEWAL.title")
        expectRefused(
            validWith { $0.integrations.oneSignal?.notifications[0].message = String(repeating: "m", count: 201) },
            at: "\(path).RENEWAL.message")
        expectRefused(
            validWith { $0.integrations.oneSignal?.notifications = [OneSignalNotification(type: .test, title: "t", message: "m")] },
            at: "\(path).TEST")
        expectRefused(validWith { $0.integrations.oneSignal?.notifications.append(renewal) }, at: "\(path).RENEWAL")
    }

    @Test func pushTextsOfTwoHundredCharactersPass() throws {
        let text = String(repeating: "é", count: 200)
        try validWith { $0.integrations.oneSignal?.notifications[0] = OneSignalNotification(type: .expiration, title: text, message: text) }
            .validate()
    }
}

// MARK: Secrets kept and made

@Suite struct OutboundSecretTests {
    @Test func aWebhookWithoutASecretKeepsTheStoredOneOfItsID() throws {
        let stored = stateHolding(valid)
        let put = validWith { $0.webhooks[0].secret = nil; $0.webhooks[0].url = "https://moved.example.com" }
        guard case .configReplaced(let installed) = try stored.replaceConfig(with: put, random: SeededRandomSource(seed: 1))
        else { Issue.record("expected a config change"); return }
        #expect(installed.webhooks[0].secret == secret)
        #expect(installed.webhooks[0].url == "https://moved.example.com")
    }

    @Test func aNewWebhookGetsASecretFromTheRandomSource() throws {
        let put = ProjectConfig(webhooks: [WebhookSettings(id: "new", url: "https://example.com")])
        let made = put.fillingWebhookSecrets(from: .empty, random: SeededRandomSource(seed: 7))
        let again = put.fillingWebhookSecrets(from: .empty, random: SeededRandomSource(seed: 7))
        let other = put.fillingWebhookSecrets(from: .empty, random: SeededRandomSource(seed: 8))
        let secret = try #require(made.webhooks[0].secret)
        #expect(secret.hasPrefix("whsec_"))
        #expect(secret.count == 6 + 44, "32 bytes, padded")
        #expect(secret.hasSuffix("="))
        #expect(again == made)
        #expect(other != made)
        try made.validate()
    }

    @Test func theMadeSecretSpellsTheRandomBytes() throws {
        // 32 bytes: 0x00 repeated gives "A…A=" (43 "A"s and one "="), whatever the source says.
        let zeros = ZeroRandomSource()
        let made = ProjectConfig(webhooks: [WebhookSettings(id: "z", url: "https://example.com")])
            .fillingWebhookSecrets(from: .empty, random: zeros)
        #expect(made.webhooks[0].secret == "whsec_" + String(repeating: "A", count: 43) + "=")
    }

    @Test func aGivenSecretIsKeptAsGiven() {
        let stored = valid
        let put = validWith { $0.webhooks[0].secret = "whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcY" }
        let filled = put.fillingWebhookSecrets(from: stored, random: SeededRandomSource(seed: 1))
        #expect(filled.webhooks[0] == put.webhooks[0])
    }

    @Test func aSecretOfAnotherIDIsNotTaken() throws {
        let put = validWith { $0.webhooks[0].id = "renamed"; $0.webhooks[0].secret = nil }
        let filled = put.fillingWebhookSecrets(from: valid, random: SeededRandomSource(seed: 1))
        #expect(try #require(filled.webhooks[0].secret) != secret)
    }

    @Test func oneSignalWithoutAKeyKeepsTheStoredKeyOfTheSameApp() throws {
        let put = validWith { $0.integrations.oneSignal?.apiKey = nil }
        #expect(try put.keepingOneSignalKey(of: valid) == valid)
        let state = stateHolding(valid)
        guard case .configReplaced(let installed) = try state.replaceConfig(with: put, random: SeededRandomSource(seed: 1))
        else { Issue.record("expected a config change"); return }
        #expect(installed.integrations.oneSignal?.apiKey == "key")
    }

    @Test func oneSignalWithoutAKeyAndNoneToKeepIsRefused() {
        let put = validWith { $0.integrations.oneSignal?.apiKey = nil }
        for stored in [ProjectConfig.empty, validWith { $0.integrations.oneSignal?.appID = "other" }] {
            let state = stateHolding(stored)
            do throws(GatehouseError) {
                _ = try state.replaceConfig(with: put, random: SeededRandomSource(seed: 1))
                Issue.record("expected the missing api_key to be refused")
            } catch {
                #expect(error.code == .badRequest)
                #expect(error.message.hasPrefix("integrations.onesignal.api_key: is required"))
            }
            #expect(state.config == stored)
        }
    }
}

/// Zeros: the secret's spelling can be checked by hand.
private struct ZeroRandomSource: RandomSource {
    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        for index in buffer.indices { buffer[index] = 0 }
    }
}
