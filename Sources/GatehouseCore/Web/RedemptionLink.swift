import GatehouseBase

// Redemption links (DESIGN.md, "Web purchases and redemption links"): a purchase made on the
// web by a buyer the app did not name belongs to a web profile, and its link lets an app
// profile take it over.

/// A web purchase's redemption link as the state keeps it: whose purchase, which generation of
/// the link is current, and how its email and its redemption stand. The token itself is never
/// kept: it is derived from the project's link key, the purchase and the generation
/// (``RedemptionToken``).
public struct RedemptionLink: Sendable, Equatable {
    /// The web profile that bought (the purchase's owner until it is redeemed).
    public var webProfile: ProfileID
    /// The current link's generation, from 1; an older generation's token answers `expired`.
    public var generation: UInt32
    /// When the current generation was issued: it is valid for `redemption_link_hours` from then.
    public var issuedMs: Int64
    /// When an email was last owed for this purchase (at most one an hour).
    public var emailedMs: Int64?
    /// The email of the current generation still to send; `nil`: none is owed.
    public var mail: OwedMail?
    /// The app profile that redeemed the purchase; `nil`: not redeemed.
    public var redeemedBy: ProfileID?

    public init(webProfile: ProfileID, generation: UInt32, issuedMs: Int64, emailedMs: Int64? = nil, mail: OwedMail? = nil,
                redeemedBy: ProfileID? = nil)
    {
        self.webProfile = webProfile
        self.generation = generation
        self.issuedMs = issuedMs
        self.emailedMs = emailedMs
        self.mail = mail
        self.redeemedBy = redeemedBy
    }

    /// How long after one email another may be sent for the same purchase.
    public static let emailIntervalMs: Int64 = 3_600_000

    /// Whether the current generation is past `redemption_link_hours` at `nowMs`.
    public func isExpired(nowMs: Int64, hours: Int64) -> Bool {
        nowMs >= issuedMs + hours * 3_600_000
    }
}

/// An email the outbox owes (the link's current generation, to the web profile's `$email`): how
/// many attempts it has had, when the next is due, and how the last one failed.
public struct OwedMail: Sendable, Equatable {
    public var attempts: UInt16
    public var nextAttemptMs: Int64
    public var lastError: String?

    public init(attempts: UInt16 = 0, nextAttemptMs: Int64, lastError: String? = nil) {
        self.attempts = attempts
        self.nextAttemptMs = nextAttemptMs
        self.lastError = lastError
    }
}

/// A redemption token: `rdrt_` and the 43 characters of base64url (unpadded) of
/// HMAC-SHA256(link key, purchase store, purchase id, generation). The state finds a token by
/// its SHA-256 (``Digest``), then checks it against the token it derives again, in constant time.
public enum RedemptionToken {
    public static let prefix = "rdrt_"
    /// `rdrt_` and 43 characters.
    public static let length = prefix.utf8.count + 43
    /// The bytes of a project's link key.
    public static let keyLength = 32

    /// The SHA-256 of a token, as the state indexes it.
    public struct Digest: Sendable, Hashable {
        let words: (UInt64, UInt64, UInt64, UInt64)

        public init(token: String) {
            let hash = SHA256.hash(token)
            func word(_ at: Int) -> UInt64 { hash[at..<at + 8].reduce(0) { $0 << 8 | UInt64($1) } }
            words = (word(0), word(8), word(16), word(24))
        }

        public static func == (a: Digest, b: Digest) -> Bool { a.words == b.words }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(words.0)
            hasher.combine(words.1)
            hasher.combine(words.2)
            hasher.combine(words.3)
        }
    }

    /// The token of `key`'s link of `generation`, under the project's link key.
    public static func make(linkKey: [UInt8], purchase key: PurchaseKey, generation: UInt32) -> String {
        var message = Array(key.store.utf8)
        message.append(0)
        message += key.id.utf8
        message.append(0)
        message += String(generation).utf8
        return prefix + Base64.encode(HMACSHA256.code(key: linkKey, message: message), alphabet: .url, padded: false)
    }

    /// The deep link of `token`: `<scheme>://redeem_web_purchase?redemption_token=<token>`.
    public static func deepLink(_ token: String, scheme: String) -> String {
        "\(scheme)://redeem_web_purchase?redemption_token=\(token)"
    }

    /// The https link of `token`: `<public url>/pay/r/<token>` (a `/` ending the public URL dropped).
    public static func httpsLink(_ token: String, publicURL: String) -> String {
        (publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL) + "/pay/r/" + token
    }

    /// Whether `text` has a token's shape: the prefix and 43 base64url characters.
    public static func isWellFormed(_ text: String) -> Bool {
        guard text.utf8.count == length, text.hasPrefix(prefix) else { return false }
        return text.utf8.dropFirst(prefix.utf8.count).allSatisfy(isTokenByte)
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }
}

/// An email address as an expired redemption shows it: the first character of the local part,
/// the first and last of the domain's first label, a star for each character hidden, and the
/// rest of the domain as it is (`t***@e*****e.com` for `test@example.com`).
public enum ObfuscatedEmail {
    public static func make(_ address: String) -> String? {
        guard let at = address.lastIndex(of: "@") else { return nil }
        let local = address[..<at]
        let domain = address[address.index(after: at)...]
        guard let first = local.first, !domain.isEmpty else { return nil }
        let dot = domain.firstIndex(of: ".") ?? domain.endIndex
        let label = domain[..<dot]
        var hiddenLabel = ""
        if let head = label.first, let tail = label.last {
            let stars = String(repeating: "*", count: max(0, label.count - 2))
            hiddenLabel = label.count <= 2 ? String(label) : String(head) + stars + String(tail)
        }
        let hiddenLocal = String(first) + String(repeating: "*", count: local.count - 1)
        return hiddenLocal + "@" + hiddenLabel + String(domain[dot...])
    }
}
