import GatehouseBase

/// The `webhook-signature` of Standard Webhooks: `v1,` and base64 of HMAC-SHA256 over
/// `"<id>.<timestamp>.<body>"`, keyed with the bytes a `whsec_` secret encodes.
public enum StandardWebhookSignature {
    static let secretPrefix = "whsec_"

    /// The key a secret stands for: the base64 after `whsec_`; `nil` for anything else (the
    /// config refuses such a secret, so only a config written by another version gets here).
    public static func key(of secret: String) -> [UInt8]? {
        guard secret.hasPrefix(secretPrefix) else { return nil }
        guard let key = Base64.decode(Array(secret.utf8.dropFirst(secretPrefix.utf8.count)), alphabet: .standard), !key.isEmpty
        else { return nil }
        return key
    }

    /// One `v1,` signature of the delivery under `secret`.
    public static func signature(id: String, timestampSeconds: Int64, body: [UInt8], secret: String) throws(OutboundError)
        -> String
    {
        guard let key = key(of: secret) else {
            // The message never holds the secret: it ends up in logs and in `webhook.deliveries`.
            throw OutboundError(code: .invalidRequest, message: "a webhook secret is not whsec_ and base64")
        }
        let signed = Array("\(id).\(timestampSeconds).".utf8) + body
        return "v1," + Base64.encode(HMACSHA256.code(key: key, message: signed), alphabet: .standard, padded: true)
    }

    /// The header's value: one signature per secret, space-separated, in the order given (the
    /// current secret, then the previous one while a rotation lasts).
    public static func header(id: String, timestampSeconds: Int64, body: [UInt8], secrets: [String]) throws(OutboundError)
        -> String
    {
        var signatures: [String] = []
        for secret in secrets {
            signatures.append(try signature(id: id, timestampSeconds: timestampSeconds, body: body, secret: secret))
        }
        return signatures.joined(separator: " ")
    }
}
