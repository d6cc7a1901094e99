import GatehouseBase
import GatehouseCore

/// Binary forms of domain values, for log records and snapshots (docs/data-format.md, "Runtime
/// payloads"). Enums are written as their wire names, so a reordered Swift enum can never change
/// what old bytes mean; a name this build does not know is damage.
extension ByteWriting {
    mutating func writeEnum<E: RawRepresentable>(_ value: E) where E.RawValue == String {
        writeString(value.rawValue)
    }
}

extension ByteReader {
    mutating func readEnum<E: RawRepresentable>(_ type: E.Type) throws(ByteReaderError) -> E where E.RawValue == String {
        let start = offset
        let raw = try readString()
        guard let value = E(rawValue: raw) else { throw ByteReaderError.invalid("\(E.self) \"\(raw)\"", at: start) }
        return value
    }
}

/// A project config (docs/data-format.md, "Config"). The layout has a version of its own, which
/// the record or state around it implies: change tag 1 and state versions 1–3 hold version 1,
/// change tag 17 and state versions 4 and 5 hold version 2, which added each offering's
/// description and metadata and the project's limits; change tag 20 and state version 6 hold
/// version 3, which added the App Store's In-App Purchase key; change tag 21 and state version 7
/// hold version 4, which added the webhooks and the OneSignal integration; change tag 24 and state
/// version 8 hold version 5, which added `stores.stripe` and `web`. Only the newest is written.
enum ConfigCoding {
    static let version: UInt64 = 5

    static func write(_ config: ProjectConfig, into writer: inout ByteWriter) {
        writer.writeArray(config.entitlements) { $0.writeString($1.id) }
        writer.writeArray(config.products) { writer, product in
            writer.writeString(product.id)
            writer.writeEnum(product.type)
            writer.writeArray(product.entitlements) { $0.writeString($1) }
            writer.writeArray(product.grants) { writer, grant in
                writer.writeString(grant.currency)
                writer.writeVarInt(grant.amount)
                writer.writeEnum(grant.on)
            }
        }
        writer.writeArray(config.currencies) { writer, currency in
            writer.writeString(currency.code)
            writer.writeString(currency.name)
        }
        writer.writeArray(config.offerings) { writer, offering in
            writer.writeString(offering.id)
            writer.writeBool(offering.isDefault)
            writer.writeArray(offering.packages) { writer, package in
                writer.writeString(package.id)
                writer.writeEnum(package.type)
                writer.writeString(package.product)
            }
            writer.writeOptional(offering.description) { $0.writeString($1) }
            writer.writeOptional(offering.metadataJSON) { $0.writeString($1) }
        }
        writer.writeEnum(config.login)
        writer.writeEnum(config.restore)
        writer.writeVarInt(config.gracePeriodMs)
        writer.writeBool(config.stores.test)
        writer.writeOptional(config.stores.appStore) { writer, appStore in
            writer.writeString(appStore.bundleID)
            writer.writeEnum(appStore.environment)
            writer.writeOptional(appStore.appAppleID) { $0.writeVarInt($1) }
            writer.writeOptional(appStore.apiKey) { writer, key in
                guard let pem = key.privateKeyPEM else { preconditionFailure("a project's config holds its key's private key") }
                writer.writeString(key.issuerID)
                writer.writeString(key.keyID)
                writer.writeString(pem)
            }
        }
        writer.writeVarInt(config.limits.sdkCreatesPerSecond)
        writeOutbound(config, into: &writer)
        writeWeb(config, into: &writer)
    }

    /// Layout 5's Stripe settings (with their secrets) and web settings.
    private static func writeWeb(_ config: ProjectConfig, into writer: inout ByteWriter) {
        writer.writeOptional(config.stores.stripe) { writer, stripe in
            writer.writeArray(stripe.webhookSecrets) { $0.writeString($1) }
            writer.writeOptional(stripe.secretKey) { $0.writeString($1) }
            writer.writeArray(stripe.prices) { writer, price in
                writer.writeString(price.priceID)
                writer.writeString(price.productID)
            }
            writer.writeBool(stripe.livemode)
        }
        writer.writeOptional(config.web) { writer, web in
            writer.writeString(web.appName)
            for text in [web.appScheme, web.supportEmail, web.appStoreURL, web.playStoreURL] {
                writer.writeOptional(text) { $0.writeString($1) }
            }
            writer.writeVarInt(web.redemptionLinkHours)
            writer.writeEnum(web.successMode)
            writer.writeOptional(web.redirectURL) { $0.writeString($1) }
        }
    }

    private static func readWeb(_ reader: inout ByteReader, into config: inout ProjectConfig) throws(ByteReaderError) {
        config.stores.stripe = try reader.readOptional { reader throws(ByteReaderError) in
            StripeSettings(
                webhookSecrets: try reader.readArray { reader throws(ByteReaderError) in try reader.readString() },
                secretKey: try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() },
                prices: try reader.readArray { reader throws(ByteReaderError) in
                    StripePrice(priceID: try reader.readString(), productID: try reader.readString())
                },
                livemode: try reader.readBool())
        }
        config.web = try reader.readOptional { reader throws(ByteReaderError) in
            let appName = try reader.readString()
            var texts: [String?] = []
            for _ in 0..<4 { texts.append(try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() }) }
            return WebSettings(
                appName: appName, appScheme: texts[0], supportEmail: texts[1], appStoreURL: texts[2], playStoreURL: texts[3],
                redemptionLinkHours: try reader.readVarInt(), successMode: try reader.readEnum(WebSettings.SuccessMode.self),
                redirectURL: try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() })
        }
    }

    /// Layout 4's webhooks and OneSignal settings, with their secrets: a project's config always
    /// holds them (a `config.put` that leaves one out keeps the stored one or gets a new one).
    private static func writeOutbound(_ config: ProjectConfig, into writer: inout ByteWriter) {
        writer.writeArray(config.webhooks) { writer, webhook in
            guard let secret = webhook.secret else { preconditionFailure("a project's config holds each webhook's secret") }
            writer.writeString(webhook.id)
            writer.writeString(webhook.url)
            writer.writeString(secret)
            writer.writeOptional(webhook.previousSecret) { $0.writeString($1) }
            writer.writeOptional(webhook.authorization) { $0.writeString($1) }
            writer.writeOptional(webhook.events) { writer, events in writer.writeArray(events) { $0.writeString($1) } }
        }
        writer.writeOptional(config.integrations.oneSignal) { writer, oneSignal in
            guard let apiKey = oneSignal.apiKey else { preconditionFailure("a project's config holds OneSignal's API key") }
            writer.writeString(oneSignal.appID)
            writer.writeString(apiKey)
            writer.writeOptional(oneSignal.url) { $0.writeString($1) }
            writer.writeArray(oneSignal.notifications) { writer, notification in
                writer.writeEnum(notification.type)
                writer.writeString(notification.title)
                writer.writeString(notification.message)
            }
        }
    }

    /// Reads a config laid out as `version` (1 to 5).
    static func read(_ reader: inout ByteReader, version: UInt64) throws(ByteReaderError) -> ProjectConfig {
        precondition((1...Self.version).contains(version), "a config version the caller vouched for")
        var config = ProjectConfig()
        config.entitlements = try reader.readArray { reader throws(ByteReaderError) in EntitlementDefinition(id: try reader.readString()) }
        config.products = try reader.readArray { reader throws(ByteReaderError) in
            ProductDefinition(
                id: try reader.readString(),
                type: try reader.readEnum(ProductType.self),
                entitlements: try reader.readArray { reader throws(ByteReaderError) in try reader.readString() },
                grants: try reader.readArray { reader throws(ByteReaderError) in
                    CurrencyGrant(currency: try reader.readString(), amount: try reader.readVarInt(),
                                  on: try reader.readEnum(GrantTrigger.self))
                }
            )
        }
        config.currencies = try reader.readArray { reader throws(ByteReaderError) in
            CurrencyDefinition(code: try reader.readString(), name: try reader.readString())
        }
        config.offerings = try reader.readArray { reader throws(ByteReaderError) in
            try readOffering(&reader, version: version)
        }
        config.login = try reader.readEnum(LoginMode.self)
        config.restore = try reader.readEnum(RestoreMode.self)
        config.gracePeriodMs = try reader.readVarInt()
        config.stores.test = try reader.readBool()
        config.stores.appStore = try reader.readOptional { reader throws(ByteReaderError) in
            try readAppStore(&reader, version: version)
        }
        if version >= 2 { config.limits.sdkCreatesPerSecond = try reader.readVarInt() }
        if version >= 4 { try readOutbound(&reader, into: &config) }
        if version >= 5 { try readWeb(&reader, into: &config) }
        return config
    }

    private static func readOutbound(_ reader: inout ByteReader, into config: inout ProjectConfig) throws(ByteReaderError) {
        config.webhooks = try reader.readArray { reader throws(ByteReaderError) in
            WebhookSettings(
                id: try reader.readString(), url: try reader.readString(), secret: try reader.readString(),
                previousSecret: try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() },
                authorization: try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() },
                events: try reader.readOptional { reader throws(ByteReaderError) in
                    try reader.readArray { reader throws(ByteReaderError) in try reader.readString() }
                })
        }
        config.integrations.oneSignal = try reader.readOptional { reader throws(ByteReaderError) in
            OneSignalSettings(
                appID: try reader.readString(), apiKey: try reader.readString(),
                url: try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() },
                notifications: try reader.readArray { reader throws(ByteReaderError) in
                    OneSignalNotification(type: try reader.readEnum(EventType.self), title: try reader.readString(),
                                          message: try reader.readString())
                })
        }
    }

    private static func readAppStore(_ reader: inout ByteReader, version: UInt64) throws(ByteReaderError) -> AppStoreSettings {
        var appStore = AppStoreSettings(
            bundleID: try reader.readString(),
            environment: try reader.readEnum(AppStoreEnvironment.self),
            appAppleID: try reader.readOptional { reader throws(ByteReaderError) in try reader.readVarInt() }
        )
        guard version >= 3 else { return appStore }
        appStore.apiKey = try reader.readOptional { reader throws(ByteReaderError) in
            InAppPurchaseKey(issuerID: try reader.readString(), keyID: try reader.readString(), privateKeyPEM: try reader.readString())
        }
        return appStore
    }

    private static func readOffering(_ reader: inout ByteReader, version: UInt64) throws(ByteReaderError)
        -> OfferingDefinition
    {
        var offering = OfferingDefinition(
            id: try reader.readString(),
            isDefault: try reader.readBool(),
            packages: try reader.readArray { reader throws(ByteReaderError) in
                PackageDefinition(id: try reader.readString(), type: try reader.readEnum(PackageType.self),
                                  product: try reader.readString())
            }
        )
        guard version >= 2 else { return offering }
        offering.description = try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() }
        offering.metadataJSON = try reader.readOptional { reader throws(ByteReaderError) in try reader.readString() }
        return offering
    }
}

enum DigestCoding {
    static func write(_ digest: SecretDigest, into writer: inout ByteWriter) {
        writer.writeRaw(digest.bytes)
    }

    static func read(_ reader: inout ByteReader) throws(ByteReaderError) -> SecretDigest {
        let start = reader.offset
        let bytes = try reader.readRaw(32)
        guard let digest = SecretDigest(bytes: bytes) else { throw ByteReaderError.invalid("key digest", at: start) }
        return digest
    }
}
