// The rules of the config's `webhooks` and `integrations` (DESIGN.md, "Outbound delivery"):
// each failure is `bad_request` naming the field's wire path (`webhooks[1].secret`,
// `integrations.onesignal.notifications.RENEWAL.title`). Whether a URL may be `http://` or
// reach a private address is the server's flag, checked by the server, not here.

extension ProjectConfig.Limits {
    public static let webhooksMax = 20
    /// `[a-z0-9][a-z0-9_-]{0,63}`: no dot, so no id is OneSignal's target name.
    public static let webhookIDCharacters: ClosedRange<Int> = 1...64
    public static let urlBytes = 2_048
    /// The bytes a webhook secret decodes to.
    public static let webhookSecretBytes: ClosedRange<Int> = 24...64
    /// The bytes of a secret the server makes (the Standard Webhooks default).
    public static let madeSecretBytes = 32
    public static let authorizationCharacters: ClosedRange<Int> = 1...1_000
    public static let oneSignalAppIDCharacters: ClosedRange<Int> = 1...100
    public static let oneSignalAPIKeyCharacters: ClosedRange<Int> = 1...500
    public static let pushTextCharacters: ClosedRange<Int> = 1...200
}

extension ProjectConfig {
    /// The prefix of a webhook secret, as Standard Webhooks spell one.
    public static let webhookSecretPrefix = "whsec_"

    func checkOutbound() throws(GatehouseError) {
        try Self.checkCount(webhooks.count, at: "webhooks", max: Limits.webhooksMax)
        var ids = Set<String>()
        for (index, webhook) in webhooks.enumerated() {
            let path = "webhooks[\(index)]"
            try Self.checkWebhookID(webhook.id, at: "\(path).id")
            try Self.insertUnique(webhook.id, into: &ids, at: "\(path).id")
            try Self.checkURL(webhook.url, at: "\(path).url")
            if let secret = webhook.secret { try Self.checkSecret(secret, at: "\(path).secret") }
            if let previous = webhook.previousSecret { try Self.checkSecret(previous, at: "\(path).previous_secret") }
            if let authorization = webhook.authorization {
                try Self.checkLength(authorization, at: "\(path).authorization", Limits.authorizationCharacters)
                try Self.checkHeaderValue(authorization, at: "\(path).authorization", refusing: ["\r", "\n", "\0"], "CR, LF or NUL")
            }
            if let events = webhook.events { try Self.checkEventTypes(events, at: "\(path).events") }
        }
        if let oneSignal = integrations.oneSignal { try Self.checkOneSignal(oneSignal, at: "integrations.onesignal") }
    }

    private static func checkOneSignal(_ settings: OneSignalSettings, at path: String) throws(GatehouseError) {
        try checkText(settings.appID, at: "\(path).app_id", length: Limits.oneSignalAppIDCharacters)
        if let apiKey = settings.apiKey {
            try checkLength(apiKey, at: "\(path).api_key", Limits.oneSignalAPIKeyCharacters)
            try checkHeaderValue(apiKey, at: "\(path).api_key", refusing: ["\r", "\n"], "CR or LF")
        }
        if let url = settings.url { try checkURL(url, at: "\(path).url") }
        var types = Set<String>()
        for notification in settings.notifications {
            let notificationPath = "\(path).notifications.\(notification.type.rawValue)"
            guard notification.type != .test else { throw .badField(notificationPath, "TEST events are never pushed") }
            try insertUnique(notification.type.rawValue, into: &types, at: notificationPath)
            try checkLength(notification.title, at: "\(notificationPath).title", Limits.pushTextCharacters)
            try checkLength(notification.message, at: "\(notificationPath).message", Limits.pushTextCharacters)
        }
    }

    /// A webhook's `events`: at least one known type, each once. `TEST` goes only to the webhook
    /// `webhook.test` names, whatever its list says, so naming it would promise nothing.
    private static func checkEventTypes(_ events: [String], at path: String) throws(GatehouseError) {
        guard !events.isEmpty else { throw .badField(path, "must name at least one event type (leave it out for all)") }
        var seen = Set<String>()
        for (index, name) in events.enumerated() {
            let field = "\(path)[\(index)]"
            guard let type = EventType(rawValue: name), type != .test else {
                throw .badField(field, "unknown event type \(quoted(name))")
            }
            try insertUnique(name, into: &seen, at: field)
        }
    }
}

// MARK: Single values

extension ProjectConfig {
    private static func checkWebhookID(_ id: String, at field: String) throws(GatehouseError) {
        let utf8 = Array(id.utf8)
        guard Limits.webhookIDCharacters.contains(utf8.count), let first = utf8.first, isIDByte(first, leading: true),
            utf8.allSatisfy({ isIDByte($0, leading: false) })
        else {
            throw .badField(field, "must be 1–64 characters of a–z, 0–9, _ and -, starting with a letter or digit")
        }
    }

    private static func isIDByte(_ byte: UInt8, leading: Bool) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "_"), UInt8(ascii: "-"): !leading
        default: false
        }
    }

    /// An absolute `https://` or `http://` URL with a host (and at most a port), bounded, with
    /// nothing in it a request line or a log could misread.
    static func checkURL(_ url: String, at field: String) throws(GatehouseError) {
        guard url.utf8.count <= Limits.urlBytes else { throw .badField(field, "must be at most \(Limits.urlBytes) bytes") }
        guard !url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F || $0.properties.generalCategory == .control })
        else { throw .badField(field, "must not contain spaces or control characters") }
        guard let scheme = ["https://", "http://"].first(where: { url.utf8.starts(with: $0.utf8) }) else {
            throw .badField(field, "must be an absolute https:// or http:// URL")
        }
        let authority = url.dropFirst(scheme.count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.contains("@") else { throw .badField(field, "must not hold credentials (use authorization)") }
        guard hasHost(authority) else { throw .badField(field, "must name a host") }
    }

    /// A host, an IPv6 literal in brackets or a name, then at most `:` and a port of 1–65535.
    private static func hasHost(_ authority: Substring) -> Bool {
        var host = authority
        var port: Substring?
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { return false }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { return false }
                port = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            port = authority[authority.index(after: colon)...]
        }
        if let port {
            guard let number = Int(port), (1...65_535).contains(number), port.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                return false
            }
        }
        return !host.isEmpty
    }

    private static func checkSecret(_ secret: String, at field: String) throws(GatehouseError) {
        let bytes = Limits.webhookSecretBytes
        guard secret.utf8.starts(with: webhookSecretPrefix.utf8),
            let decoded = decodedBase64Count(secret.utf8.dropFirst(webhookSecretPrefix.utf8.count)), bytes.contains(decoded)
        else {
            throw .badField(
                field, "must be \(webhookSecretPrefix) and standard base64 of \(bytes.lowerBound)–\(bytes.upperBound) bytes")
        }
    }

    /// How many bytes `text` decodes to as canonical standard base64 (padding optional, unused
    /// bits zero), or `nil` when it is not: a check of the secret's shape, so a secret that
    /// passes is one every Standard Webhooks library decodes to the same key.
    private static func decodedBase64Count(_ text: Substring.UTF8View) -> Int? {
        let padding = text.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        let values = text.dropLast(padding).map(base64Value)
        // Padding, when there is any, fills the last group of four; a lone sixth of a byte is no byte.
        guard padding <= 2, padding == 0 || text.count % 4 == 0, !values.isEmpty, values.count % 4 != 1,
            let last = values.last ?? nil, !values.contains(nil)
        else { return nil }
        let unusedBits: UInt8 = [0, 0, 0x0F, 0x03][values.count % 4]
        guard last & unusedBits == 0 else { return nil }
        return values.count * 6 / 8
    }

    private static func base64Value(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }

    /// Text sent as a header's value: one line, so it cannot add a header of its own.
    private static func checkHeaderValue(
        _ value: String, at field: String, refusing scalars: [Unicode.Scalar], _ names: String
    ) throws(GatehouseError) {
        guard !value.unicodeScalars.contains(where: scalars.contains) else {
            throw .badField(field, "must not contain \(names)")
        }
    }
}
