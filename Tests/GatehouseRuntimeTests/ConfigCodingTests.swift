import GatehouseBase
import GatehouseCore
@testable import GatehouseRuntime
import GatehouseStorage
import Testing

/// The config's five layouts (docs/data-format.md, "Config"): version 1, in change tag 1 and
/// state versions 1–3; version 2, in change tag 17 and state versions 4 and 5, which adds
/// offerings' descriptions and metadata and the project's limits; version 3, in change tag 20 and
/// state version 6, which adds the App Store's In-App Purchase key; version 4, in change tag 21
/// and state version 7, which adds the webhooks and OneSignal; version 5, in change tag 24 and
/// state version 8, which is written and adds Stripe and the web settings. A change here is a
/// format change.
@Suite struct ConfigLayoutGoldenBytes {
    static func str(_ text: String) -> String { PurchaseRecordGoldenBytes.str(text) }

    /// A config with an offering, in the fields every layout holds.
    static let config = ProjectConfig(
        products: [ProductDefinition(id: "m", type: .subscription)],
        offerings: [OfferingDefinition(id: "o", isDefault: true, packages: [PackageDefinition(id: "p", type: .monthly, product: "m")])]
    )

    /// `config` with the offering's description and metadata and a limit, which versions 2 and 3
    /// hold.
    static var configWithTexts: ProjectConfig {
        var config = Self.config
        config.offerings[0].description = "For all"
        config.offerings[0].metadataJSON = #"{"k":1}"#
        config.limits.sdkCreatesPerSecond = 25
        return config
    }

    /// Shaped like a `.p8` file's text, which is all a snapshot's config is checked for.
    static let pem = "-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----\n"

    /// `configWithTexts` with the App Store enabled and an In-App Purchase key, which only
    /// version 3 holds.
    static var configWithKey: ProjectConfig {
        var config = Self.configWithTexts
        config.stores.appStore = AppStoreSettings(
            bundleID: "b", environment: .sandbox, apiKey: InAppPurchaseKey(issuerID: "i", keyID: "k", privateKeyPEM: pem))
        return config
    }

    /// Shaped like a generated webhook secret: `whsec_` and the base64 of 24 bytes.
    static let secret = "whsec_" + String(repeating: "AQEB", count: 8)
    static let previousSecret = "whsec_" + String(repeating: "AgIC", count: 8)

    /// `configWithKey` with two webhooks (one with every optional field, one with none but a
    /// previous secret) and OneSignal, which only version 4 holds.
    static var configWithOutbound: ProjectConfig {
        var config = Self.configWithKey
        config.webhooks = [
            WebhookSettings(id: "orders", url: "https://hooks.example.com/rc", secret: secret, authorization: "Bearer t",
                            events: ["INITIAL_PURCHASE", "RENEWAL"]),
            WebhookSettings(id: "audit", url: "https://audit.example.com/in", secret: secret, previousSecret: previousSecret),
        ]
        config.integrations.oneSignal = OneSignalSettings(
            appID: "5eb5a37e-b458-11e3-ac11-000c2940e62c", apiKey: "os_v2_app_key", url: "https://push.example.com/notifications",
            notifications: [OneSignalNotification(type: .renewal, title: "Renewed", message: "Thanks!"),
                            OneSignalNotification(type: .expiration, title: "Expired", message: "Come back")])
        return config
    }

    /// `configWithOutbound` with Stripe (two secrets, a key, a price) and the web settings, which
    /// only version 5 holds.
    static var configWithWeb: ProjectConfig {
        var config = Self.configWithOutbound
        config.stores.stripe = StripeSettings(
            webhookSecrets: ["whsec_new", "whsec_old"], secretKey: "sk_test_k", prices: [StripePrice(priceID: "price_1", productID: "m")],
            livemode: true)
        config.web = WebSettings(appName: "Scanner", appScheme: "scanner", supportEmail: "help@example.com",
                                 redemptionLinkHours: 48, successMode: .redirect, redirectURL: "https://example.com/done")
        return config
    }

    /// Entitlements and products, then currencies.
    static let start = "00" + "01" + str("m") + str("subscription") + "00" + "00" + "00"
    /// The offering's id, is-default and packages.
    static let offering = str("o") + "01" + "01" + str("p") + str("monthly") + str("m")
    /// The offering's description and metadata, after its packages (versions 2 and 3).
    static let offeringTexts = "01" + str("For all") + "01" + str(#"{"k":1}"#)
    /// Login, restore, grace period, test store, App Store.
    static let settings = str("alias") + str("transfer") + "00" + "00" + "00"
    /// The same with the App Store: bundle id, environment, no App Apple ID, then (version 3) the
    /// key: issuer id, key id, private key.
    static let appStoreSettings = str("alias") + str("transfer") + "00" + "00" + "01" + str("b") + str("sandbox") + "00"
    static let settingsWithKey = appStoreSettings + "01" + str("i") + str("k") + str(pem)

    static let version1 = start + "01" + offering + settings
    /// The limits (25, zigzag 50) follow the settings.
    static let version2 = start + "01" + offering + offeringTexts + settings + "32"
    /// No description, no metadata, the default limit (1000, zigzag 2000). Without the App Store,
    /// version 3 lays it out alike.
    static let version2WithoutTexts = start + "01" + offering + "00" + "00" + settings + "d00f"
    static let version3 = start + "01" + offering + offeringTexts + settingsWithKey + "32"
    /// Version 3's fields, then no webhooks and no OneSignal.
    static let version4 = version3 + "00" + "00"
    /// The webhooks: id, url, secret, previous secret, authorization, events (optional array);
    /// then OneSignal (optional): app id, API key, url (optional), notifications (type name,
    /// title, message).
    static let outbound = "02"
        + str("orders") + str("https://hooks.example.com/rc") + str(secret) + "00" + "01" + str("Bearer t")
        + "01" + "02" + str("INITIAL_PURCHASE") + str("RENEWAL")
        + str("audit") + str("https://audit.example.com/in") + str(secret) + "01" + str(previousSecret) + "00" + "00"
        + "01" + str("5eb5a37e-b458-11e3-ac11-000c2940e62c") + str("os_v2_app_key") + "01" + str("https://push.example.com/notifications")
        + "02" + str("RENEWAL") + str("Renewed") + str("Thanks!") + str("EXPIRATION") + str("Expired") + str("Come back")
    static let version4WithOutbound = version3 + outbound
    /// Stripe (optional): webhook secrets, secret key (optional), prices (price, product),
    /// livemode; then web (optional): app name, scheme, support email, App Store and Play URLs
    /// (each optional), link hours (48, zigzag 96), success mode, redirect URL (optional).
    static let web = "01" + "02" + str("whsec_new") + str("whsec_old") + "01" + str("sk_test_k") + "01" + str("price_1") + str("m") + "01"
        + "01" + str("Scanner") + "01" + str("scanner") + "01" + str("help@example.com") + "00" + "00" + "60" + str("redirect")
        + "01" + str("https://example.com/done")
    static let version5WithWeb = version4WithOutbound + web

    /// Incarnation 5, at 0 ms, one change.
    static let batchStart = "05" + "00" + "01"

    static func record(tag: String, _ config: String) throws -> WALRecord {
        WALRecord(kind: 16, payload: try #require(Hex.decode(Self.batchStart + tag + config)))
    }

    @Test func configReplacedIsWrittenWithTag24InLayout5() {
        let record = RuntimeRecord.projectChanged(5, .init([.configReplaced(Self.configWithWeb)], atMs: 0)).logRecord
        #expect(Hex.encode(record.payload) == Self.batchStart + "18" + Self.version5WithWeb)
        let outbound = RuntimeRecord.projectChanged(5, .init([.configReplaced(Self.configWithOutbound)], atMs: 0)).logRecord
        #expect(Hex.encode(outbound.payload) == Self.batchStart + "18" + Self.version4WithOutbound + "00" + "00")
        let plain = RuntimeRecord.projectChanged(5, .init([.configReplaced(Self.config)], atMs: 0)).logRecord
        #expect(Hex.encode(plain.payload) == Self.batchStart + "18" + Self.version2WithoutTexts + "00" + "00" + "00" + "00")
    }

    @Test func configReplacedRecordsOfEveryLayoutRead() throws {
        #expect(try RuntimeRecord(Self.record(tag: "18", Self.version5WithWeb))
            == .projectChanged(5, .init([.configReplaced(Self.configWithWeb)], atMs: 0)))
        #expect(try RuntimeRecord(Self.record(tag: "15", Self.version4WithOutbound))
            == .projectChanged(5, .init([.configReplaced(Self.configWithOutbound)], atMs: 0)))
        #expect(try RuntimeRecord(Self.record(tag: "15", Self.version4)) == .projectChanged(5, .init([.configReplaced(Self.configWithKey)], atMs: 0)))
        #expect(try RuntimeRecord(Self.record(tag: "14", Self.version3)) == .projectChanged(5, .init([.configReplaced(Self.configWithKey)], atMs: 0)))
        #expect(try RuntimeRecord(Self.record(tag: "11", Self.version2)) == .projectChanged(5, .init([.configReplaced(Self.configWithTexts)], atMs: 0)))
        #expect(try RuntimeRecord(Self.record(tag: "01", Self.version1)) == .projectChanged(5, .init([.configReplaced(Self.config)], atMs: 0)))
    }

    /// Each layout read as another is refused, never misread: version 1's bytes end early where
    /// version 2 reads on, version 2's have bytes left over for version 1; version 3's key is
    /// left over for version 2, and version 2's limits are no key for version 3; version 4's
    /// webhooks are left over for version 3, and version 3's bytes end early for version 4;
    /// version 5's web settings are left over for version 4, whose bytes end early for version 5.
    @Test func aLayoutReadAsAnotherIsRefused() throws {
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(Self.record(tag: "15", Self.version5WithWeb)) }
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(Self.record(tag: "18", Self.version4WithOutbound)) }
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(Self.record(tag: "14", Self.version4)) }
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(Self.record(tag: "14", Self.version4WithOutbound)) }
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(Self.record(tag: "15", Self.version3)) }
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(Self.record(tag: "11", Self.version1)) }
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(Self.record(tag: "01", Self.version2)) }
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(Self.record(tag: "11", Self.version3)) }
        let version2WithAppStore = Self.start + "01" + Self.offering + Self.offeringTexts + Self.appStoreSettings + "32"
        #expect(throws: ByteReaderError.self) { try RuntimeRecord(Self.record(tag: "14", version2WithAppStore)) }
    }

    static func state(_ config: ProjectConfig) -> ProjectState {
        ProjectState(id: try! ProjectID(validating: "acme"), name: "Acme", createdMs: 0,
                     keys: KeyDigests(publicKey: SecretDigest(bytes: [UInt8](repeating: 0xAA, count: 32))!,
                                      secretKey: SecretDigest(bytes: [UInt8](repeating: 0xBB, count: 32))!),
                     keyGenerations: [.public: 1, .secret: 1], config: config, sequence: 1, configCursor: 1,
                     profiles: ProfileDirectory(), events: EventLog(), purchases: PurchaseBook())
    }

    /// A state version `version` body holding `config` (hex) in its head, with no profiles,
    /// events, purchases or balances (and from version 7 an empty outbox, from version 8 no pending
    /// web purchases, from version 9 no Stripe links or refunds).
    static func body(version: String, config: String) -> String {
        let head = str("acme") + str("Acme") + "00" + String(repeating: "aa", count: 32) + String(repeating: "bb", count: 32)
            + "01" + "01" + config + "01" + "01" + "00" + "00" + (version >= "07" ? "00" + "00" : "") + (version >= "08" ? "00" : "")
            + (version >= "09" ? String(repeating: "00", count: 6) : "")
        let sections = [head, "00" + "00", RecordGoldenBytes.emptyBook, RecordGoldenBytes.emptyLedger]
        return version + sections.map { Version3Fixtures.varint($0.count / 2) }.joined() + sections.joined()
    }

    @Test func stateVersions4And5HoldLayout2() throws {
        for version in ["04", "05"] {
            let body = try #require(Hex.decode(Self.body(version: version, config: Self.version2)))
            #expect(try Version3Fixtures.decodeBothWays(body) == Self.state(Self.configWithTexts))
        }
    }

    @Test func stateVersion6HoldsLayout3() throws {
        let old = try #require(Hex.decode(Self.body(version: "06", config: Self.version3)))
        let decoded = try Version3Fixtures.decodeBothWays(old)
        #expect(decoded == Self.state(Self.configWithKey))
        #expect(Hex.encode(StateCoding.encode(decoded)) == Self.body(version: "09", config: Self.version4 + "00" + "00"))
    }

    @Test func stateVersion7HoldsLayout4() throws {
        let old = try #require(Hex.decode(Self.body(version: "07", config: Self.version4WithOutbound)))
        let decoded = try Version3Fixtures.decodeBothWays(old)
        #expect(decoded == Self.state(Self.configWithOutbound))
        #expect(Hex.encode(StateCoding.encode(decoded)) == Self.body(version: "09", config: Self.version4WithOutbound + "00" + "00"))
    }

    @Test func stateVersions8And9HoldLayout5() throws {
        let golden = Self.body(version: "09", config: Self.version5WithWeb)
        #expect(Hex.encode(StateCoding.encode(Self.state(Self.configWithWeb))) == golden)
        #expect(try Version3Fixtures.decodeBothWays(try #require(Hex.decode(golden))) == Self.state(Self.configWithWeb))
        // Version 8 ends the head after the pending web purchases: no links are read.
        let version8 = try #require(Hex.decode(Self.body(version: "08", config: Self.version5WithWeb)))
        #expect(try Version3Fixtures.decodeBothWays(version8) == Self.state(Self.configWithWeb))
    }

    @Test func stateVersion4StillReadsAndIsWrittenAsVersion9() throws {
        let old = try #require(Hex.decode(Self.body(version: "04", config: Self.version2)))
        let decoded = try Version3Fixtures.decodeBothWays(old)
        #expect(decoded == Self.state(Self.configWithTexts))
        #expect(Hex.encode(StateCoding.encode(decoded)) == Self.body(version: "09", config: Self.version2 + "00" + "00" + "00" + "00"))
    }

    @Test func stateVersion3WithAnOfferingStillReads() throws {
        let old = try #require(Hex.decode(Self.body(version: "03", config: Self.version1)))
        let decoded = try Version3Fixtures.decodeBothWays(old)
        #expect(decoded == Self.state(Self.config))
        // Written again, it is version 9: the offering with no description or metadata, the
        // default limits, no App Store, no webhooks, no OneSignal, no Stripe, no web settings.
        #expect(Hex.encode(StateCoding.encode(decoded)) == Self.body(version: "09", config: Self.version2WithoutTexts + "00" + "00" + "00" + "00"))
    }

    /// A snapshot's key is checked like a `config.put`'s: one that is not a `.p8` file's text is
    /// damage, never a config to run with.
    @Test func aSnapshotWhosePrivateKeyIsNotAPEMBlockIsRefused() {
        var config = Self.configWithKey
        config.stores.appStore?.apiKey?.privateKeyPEM = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg"
        #expect(throws: ByteReaderError.self) { try StateCoding.decode(StateCoding.encode(Self.state(config))) }
    }
}

/// Offerings' descriptions and metadata survive the log and snapshots as they came.
@Suite struct OfferingTextsCoding {
    static var config: ProjectConfig {
        var config = ConfigLayoutGoldenBytes.configWithTexts
        config.offerings[0].description = "Ünïcode, \"quoted\"\nand long: " + String(repeating: "x", count: 900)
        config.offerings[0].metadataJSON = ##"{"colors":{"bg":"#fff"},"n":[1,2.5,null],"s":"ü"}"##
        config.offerings.append(OfferingDefinition(id: "bare"))
        return config
    }

    @Test func aConfigWithTextsRoundTripsThroughARecordAndASnapshot() throws {
        let record = RuntimeRecord.projectChanged(3, .init([.configReplaced(Self.config)], atMs: 9))
        #expect(try RuntimeRecord(record.logRecord) == record)
        let state = ConfigLayoutGoldenBytes.state(Self.config)
        #expect(try StateCoding.decode(StateCoding.encode(state)).config == Self.config)
    }

    /// A snapshot whose offering breaks a bound is refused like any invalid config.
    @Test func aSnapshotWithOversizedMetadataIsRefused() {
        var config = Self.config
        config.offerings[0].metadataJSON = #"{"k":""# + String(repeating: "x", count: ProjectConfig.Limits.offeringMetadataBytes) + #""}"#
        let bytes = StateCoding.encode(ConfigLayoutGoldenBytes.state(config))
        #expect(throws: ByteReaderError.self) { try StateCoding.decode(bytes) }
    }
}
