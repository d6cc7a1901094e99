public import GatehouseBase

// The delivery secrets a `config.put` may leave to the server: a webhook's `secret` (kept from
// the stored webhook of the same id, else made) and OneSignal's `api_key` (kept from the stored
// settings of the same app). A config read back with the secret key and put again therefore
// changes no secret, and the config the log holds always has every one.

extension ProjectConfig {
    /// This config, each webhook named without a `secret` given the stored webhook's of the
    /// same id, or else a new one: `whsec_` and base64 of ``Limits/madeSecretBytes`` from `random`.
    public func fillingWebhookSecrets(from stored: ProjectConfig, random: some RandomSource) -> ProjectConfig {
        var config = self
        for index in config.webhooks.indices where config.webhooks[index].secret == nil {
            let id = config.webhooks[index].id
            config.webhooks[index].secret = stored.webhooks.first { $0.id == id }?.secret
                ?? Self.webhookSecretPrefix + Self.paddedBase64(random.randomBytes(count: Limits.madeSecretBytes))
        }
        return config
    }

    /// This config, with the stored OneSignal API key put back where this one names the same
    /// `app_id` without a key (as ``keepingPrivateKey(of:)`` does for Apple's key). Naming
    /// another app without one is `bad_request`.
    public func keepingOneSignalKey(of stored: ProjectConfig) throws(GatehouseError) -> ProjectConfig {
        guard let settings = integrations.oneSignal, settings.apiKey == nil else { return self }
        guard let storedSettings = stored.integrations.oneSignal, storedSettings.appID == settings.appID,
            let apiKey = storedSettings.apiKey
        else {
            throw .badField(
                "integrations.onesignal.api_key", "is required: the project holds no OneSignal key for this app_id to keep")
        }
        var config = self
        config.integrations.oneSignal?.apiKey = apiKey
        return config
    }

    /// Standard base64 with padding, the spelling Standard Webhooks secrets use.
    private static func paddedBase64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var output: [UInt8] = []
        for start in stride(from: 0, to: bytes.count, by: 3) {
            let count = min(3, bytes.count - start)
            var group: UInt32 = 0
            for offset in 0..<3 { group = group << 8 | (offset < count ? UInt32(bytes[start + offset]) : 0) }
            for position in 0..<4 {
                output.append(position <= count ? alphabet[Int(group >> UInt32(18 - 6 * position) & 0x3F)] : UInt8(ascii: "="))
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
