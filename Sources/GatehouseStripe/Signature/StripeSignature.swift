public import GatehouseCore
import GatehouseBase

/// Checks a `Stripe-Signature` header as Stripe's own libraries do: `t=<unix seconds>,v1=<hex>`
/// (several `v1` during a secret's rotation, other schemes such as `v0` ignored), where `v1` is
/// the lowercase hex HMAC-SHA256 of `"<t>.<raw body>"` keyed with the secret string's UTF-8
/// bytes as written (`whsec_…` included, nothing decoded).
public enum StripeSignature {
    /// Stripe's `Webhook.DEFAULT_TOLERANCE`.
    public static let defaultToleranceSeconds: Int64 = 300

    /// Passes when some secret of `secrets` signed `body` under some `v1` of `header`, compared
    /// in constant time, and `t` is at most `toleranceSeconds` before `nowSeconds`. A `t` in the
    /// future passes, as in Stripe's libraries: the tolerance bounds replays, not clock skew.
    /// Each refusal is `invalid_signature` saying which rule failed, never naming a secret.
    public static func verify(
        header: String?, body: some Collection<UInt8>, secrets: [String], nowSeconds: Int64,
        toleranceSeconds: Int64 = defaultToleranceSeconds
    ) throws(GatehouseError) {
        precondition(toleranceSeconds >= 0, "a tolerance is a length of time")
        guard let header else { throw refusal("no Stripe-Signature header") }
        let parsed = try StripeSignatureHeader(parsing: header)
        guard !parsed.signatures.isEmpty else { throw refusal("no signature with scheme v1") }
        guard !secrets.isEmpty else { throw refusal("no webhook secret to check against") }
        let signedPayload = signedPayload(timestamp: parsed.timestamp, body: body)
        var matched = false
        // Every pair is compared, so the time taken does not tell which secret or entry matched.
        for secret in secrets {
            let expected = Array(Hex.encode(HMACSHA256.code(key: Array(secret.utf8), message: signedPayload)).utf8)
            for signature in parsed.signatures where constantTimeEquals(expected, signature.utf8) {
                matched = true
            }
        }
        guard matched else { throw refusal("no signature matches the payload") }
        guard parsed.timestamp >= nowSeconds - toleranceSeconds else {
            throw refusal("timestamp is more than \(toleranceSeconds) s old")
        }
    }

    /// The `v1` value `secret` gives `body` signed at `timestamp` (for a sender, or a test's).
    public static func signature(timestamp: Int64, body: some Collection<UInt8>, secret: String) -> String {
        Hex.encode(HMACSHA256.code(key: Array(secret.utf8), message: signedPayload(timestamp: timestamp, body: body)))
    }

    private static func signedPayload(timestamp: Int64, body: some Collection<UInt8>) -> [UInt8] {
        var payload = Array("\(timestamp).".utf8)
        payload.append(contentsOf: body)
        return payload
    }

    static func refusal(_ rule: String) -> GatehouseError {
        GatehouseError(.invalidSignature, "Stripe-Signature: \(rule)")
    }
}

/// The parts of a `Stripe-Signature` header that count: the one `t` and every `v1`.
struct StripeSignatureHeader {
    let timestamp: Int64
    let signatures: [Substring]

    init(parsing header: String) throws(GatehouseError) {
        var timestamps: [Substring] = []
        var signatures: [Substring] = []
        for item in header.split(separator: ",", omittingEmptySubsequences: false) {
            guard let equals = item.firstIndex(of: "=") else { continue }
            let value = item[item.index(after: equals)...]
            switch item[..<equals] {
            case "t": timestamps.append(value)
            case "v1": signatures.append(value)
            default: continue
            }
        }
        guard timestamps.count == 1, let timestamp = Self.seconds(timestamps[0]) else {
            throw StripeSignature.refusal("bad timestamp: expected one t=<unix seconds>")
        }
        self.timestamp = timestamp
        self.signatures = signatures
    }

    /// Decimal digits only: `Int64("+5")` would take a sign Stripe never writes.
    private static func seconds(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int64(text)
    }
}
