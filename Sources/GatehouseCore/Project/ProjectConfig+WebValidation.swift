// The rules of the config's `stores.stripe` and `web` (DESIGN.md, "Web purchases and redemption
// links"): each failure is `bad_request` naming the field's wire path.

extension ProjectConfig.Limits {
    /// Secrets listed at once: the current one and those being rotated out.
    public static let stripeWebhookSecretsMax = 4
    public static let stripeSecretCharacters: ClosedRange<Int> = 8...256
    public static let stripePricesMax = 1_000
    public static let stripeIDCharacters: ClosedRange<Int> = 1...255
    public static let appNameCharacters: ClosedRange<Int> = 1...100
    /// RFC 3986's scheme grammar, lowercase, bounded.
    public static let appSchemeCharacters: ClosedRange<Int> = 1...64
    public static let emailCharacters: ClosedRange<Int> = 3...254
    public static let redemptionLinkHours: ClosedRange<Int64> = 1...(24 * 30)
}

extension ProjectConfig {
    /// The prefix of a Stripe webhook signing secret.
    public static let stripeWebhookSecretPrefix = "whsec_"

    func checkWeb(productIDs: Set<String>) throws(GatehouseError) {
        if let stripe = stores.stripe {
            try checkStripe(stripe, at: "stores.stripe", productIDs: productIDs)
            guard web != nil else { throw .badField("web", "is required with stores.stripe: web buyers get its pages and email") }
        }
        if let web { try Self.checkWebSettings(web, at: "web") }
    }

    private func checkStripe(_ stripe: StripeSettings, at path: String, productIDs: Set<String>) throws(GatehouseError) {
        guard !stripe.webhookSecrets.isEmpty else { throw .badField("\(path).webhook_secrets", "must list at least one secret") }
        try Self.checkCount(stripe.webhookSecrets.count, at: "\(path).webhook_secrets", max: Limits.stripeWebhookSecretsMax)
        for (index, secret) in stripe.webhookSecrets.enumerated() {
            try Self.checkStripeSecret(secret, at: "\(path).webhook_secrets[\(index)]", prefixes: [Self.stripeWebhookSecretPrefix])
        }
        if let key = stripe.secretKey { try Self.checkStripeSecret(key, at: "\(path).secret_key", prefixes: ["sk_", "rk_"]) }
        try Self.checkCount(stripe.prices.count, at: "\(path).prices", max: Limits.stripePricesMax)
        var priceIDs = Set<String>()
        for price in stripe.prices {
            let field = "\(path).prices.\(price.priceID)"
            try Self.checkStripeID(price.priceID, at: field)
            try Self.insertUnique(price.priceID, into: &priceIDs, at: field)
            guard productIDs.contains(price.productID) else {
                throw .badField(field, "names unknown product \(Self.quoted(price.productID))")
            }
        }
    }

    private static func checkWebSettings(_ web: WebSettings, at path: String) throws(GatehouseError) {
        try checkText(web.appName, at: "\(path).app_name", length: Limits.appNameCharacters)
        if let scheme = web.appScheme { try checkScheme(scheme, at: "\(path).app_scheme") }
        if let email = web.supportEmail { try checkEmail(email, at: "\(path).support_email") }
        if let url = web.appStoreURL { try checkSecureURL(url, at: "\(path).app_store_url") }
        if let url = web.playStoreURL { try checkSecureURL(url, at: "\(path).play_store_url") }
        guard Limits.redemptionLinkHours.contains(web.redemptionLinkHours) else {
            let range = Limits.redemptionLinkHours
            throw .badField("\(path).redemption_link_hours", "out of range \(range.lowerBound)…\(range.upperBound)")
        }
        if let url = web.redirectURL { try checkSecureURL(url, at: "\(path).redirect_url") }
        if web.successMode == .redirect, web.redirectURL == nil {
            throw .badField("\(path).redirect_url", "is required with success_mode redirect")
        }
    }

    /// A secret as Stripe shows it: its prefix, then letters, digits and `_`.
    private static func checkStripeSecret(_ secret: String, at field: String, prefixes: [String]) throws(GatehouseError) {
        guard prefixes.contains(where: { secret.hasPrefix($0) }), Limits.stripeSecretCharacters.contains(secret.utf8.count),
            secret.utf8.allSatisfy(isStripeIDByte)
        else {
            let names = prefixes.joined(separator: " or ")
            throw .badField(field, "must be a Stripe secret starting with \(names), of letters, digits and _")
        }
    }

    /// A Stripe object id such as `price_1Pq…`.
    private static func checkStripeID(_ id: String, at field: String) throws(GatehouseError) {
        guard Limits.stripeIDCharacters.contains(id.utf8.count), id.utf8.allSatisfy(isStripeIDByte) else {
            throw .badField(field, "must be a Stripe id of letters, digits and _")
        }
    }

    private static func isStripeIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"):
            true
        default: false
        }
    }

    /// A scheme as RFC 3986 spells one, lowercase (iOS and Android compare schemes without case,
    /// and a deep link is matched on it), and never one a browser gives a meaning of its own.
    private static func checkScheme(_ scheme: String, at field: String) throws(GatehouseError) {
        let utf8 = Array(scheme.utf8)
        let valid = Limits.appSchemeCharacters.contains(utf8.count) && utf8.first.map(isLowercaseLetter) == true
            && utf8.allSatisfy { isLowercaseLetter($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
        guard valid else { throw .badField(field, "must be a URL scheme: a–z first, then a–z, 0–9, +, - and .") }
        guard !["http", "https", "javascript", "data", "file", "mailto", "about", "blob"].contains(scheme) else {
            throw .badField(field, "must be the app's own scheme, not \(quoted(scheme))")
        }
    }

    private static func isLowercaseLetter(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) }

    /// An address an email can go to: one `@`, a non-empty local part and a dotted domain, no
    /// spaces, angle brackets or control characters (it goes into a header).
    static func checkEmail(_ email: String, at field: String) throws(GatehouseError) {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        let valid = Limits.emailCharacters.contains(email.count) && parts.count == 2 && !parts[0].isEmpty
            && parts[1].contains(".") && !parts[1].hasPrefix(".") && !parts[1].hasSuffix(".")
            && !email.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F || "<>\",;()[]\\".unicodeScalars.contains($0) }
        guard valid else { throw .badField(field, "must be an email address such as support@example.com") }
    }

    /// Pages link to it: https only.
    private static func checkSecureURL(_ url: String, at field: String) throws(GatehouseError) {
        try checkURL(url, at: field)
        guard url.hasPrefix("https://") else { throw .badField(field, "must be an https:// URL") }
    }
}
