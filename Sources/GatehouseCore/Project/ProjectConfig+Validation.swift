// The rules a configuration must meet before it replaces the old one. Every failure is
// `bad_request` naming the offending field by its wire path (`products[1].entitlements[0]`), so
// an operator can find it in the document they sent.

extension ProjectConfig {
    /// Checks ids, sizes, uniqueness, references and settings; throws the first problem found.
    public func validate() throws(GatehouseError) {
        try checkSizes()
        let entitlementIDs = try checkEntitlements()
        let currencyCodes = try checkCurrencies()
        let productIDs = try checkProducts(entitlementIDs: entitlementIDs, currencyCodes: currencyCodes)
        try checkOfferings(productIDs: productIDs)
        try checkSettings()
        try checkOutbound()
        try checkWeb(productIDs: productIDs)
    }

    private func checkSizes() throws(GatehouseError) {
        try Self.checkCount(entitlements.count, at: "entitlements", max: Limits.entitlementsMax)
        try Self.checkCount(products.count, at: "products", max: Limits.productsMax)
        try Self.checkCount(currencies.count, at: "currencies", max: Limits.currenciesMax)
        try Self.checkCount(offerings.count, at: "offerings", max: Limits.offeringsMax)
    }

    private func checkEntitlements() throws(GatehouseError) -> Set<String> {
        var ids = Set<String>()
        for (index, entitlement) in entitlements.enumerated() {
            let field = "entitlements[\(index)].id"
            try Self.checkID(entitlement.id, at: field)
            try Self.insertUnique(entitlement.id, into: &ids, at: field)
        }
        return ids
    }

    private func checkCurrencies() throws(GatehouseError) -> Set<String> {
        var codes = Set<String>()
        for (index, currency) in currencies.enumerated() {
            let path = "currencies[\(index)]"
            try Self.checkCurrencyCode(currency.code, at: "\(path).code")
            try Self.insertUnique(currency.code, into: &codes, at: "\(path).code")
            try Self.checkText(currency.name, at: "\(path).name", length: Limits.idCharacters)
        }
        return codes
    }

    private func checkProducts(entitlementIDs: Set<String>, currencyCodes: Set<String>) throws(GatehouseError)
        -> Set<String>
    {
        var ids = Set<String>()
        for (index, product) in products.enumerated() {
            let path = "products[\(index)]"
            try Self.checkID(product.id, at: "\(path).id")
            try Self.insertUnique(product.id, into: &ids, at: "\(path).id")
            try Self.checkReferences(
                product.entitlements, at: "\(path).entitlements", kind: "entitlement", known: entitlementIDs)
            try Self.checkGrants(of: product, at: path, currencyCodes: currencyCodes)
        }
        return ids
    }

    private func checkOfferings(productIDs: Set<String>) throws(GatehouseError) {
        var ids = Set<String>()
        var defaultID: String?
        for (index, offering) in offerings.enumerated() {
            let path = "offerings[\(index)]"
            try Self.checkID(offering.id, at: "\(path).id")
            try Self.insertUnique(offering.id, into: &ids, at: "\(path).id")
            if offering.isDefault {
                if let defaultID {
                    throw .badField(
                        "\(path).is_default", "only one offering may be the default, and \(Self.quoted(defaultID)) is")
                }
                defaultID = offering.id
            }
            try Self.checkTexts(of: offering, at: path)
            try Self.checkPackages(of: offering, at: path, productIDs: productIDs)
        }
    }

    private func checkSettings() throws(GatehouseError) {
        try Self.checkRange(gracePeriodMs, at: "grace_period_ms", Limits.gracePeriodMs)
        try Self.checkRange(limits.sdkCreatesPerSecond, at: "limits.sdk_creates_per_second", Limits.sdkCreatesPerSecond)
        guard let appStore = stores.appStore else { return }
        let path = "stores.app_store"
        try Self.checkText(appStore.bundleID, at: "\(path).bundle_id", length: Limits.bundleIDCharacters)
        if let appAppleID = appStore.appAppleID {
            try Self.checkRange(appAppleID, at: "\(path).app_apple_id", Limits.appAppleID)
        }
        if let apiKey = appStore.apiKey { try Self.checkAPIKey(apiKey, at: "\(path).api") }
    }

    /// The identifiers as text an operator copied, the private key shaped like a `.p8` file.
    /// Whether libcrypto can read the key is the server's check: this module has no crypto.
    private static func checkAPIKey(_ key: InAppPurchaseKey, at path: String) throws(GatehouseError) {
        try checkText(key.issuerID, at: "\(path).issuer_id", length: Limits.apiKeyIDCharacters)
        try checkText(key.keyID, at: "\(path).key_id", length: Limits.apiKeyIDCharacters)
        guard let pem = key.privateKeyPEM else { return }
        let field = "\(path).private_key"
        guard Limits.privateKeyBytes.contains(pem.utf8.count) else {
            throw .badField(field, "must be \(Limits.privateKeyBytes.lowerBound)–\(Limits.privateKeyBytes.upperBound) bytes")
        }
        guard isPrivateKeyBlock(pem) else {
            throw .badField(field, "must be the .p8 file's text: one -----BEGIN PRIVATE KEY----- block (PKCS#8 PEM)")
        }
    }

    /// ASCII text that, without the whitespace around it, is one `PRIVATE KEY` block's armour.
    private static func isPrivateKeyBlock(_ pem: String) -> Bool {
        guard pem.utf8.allSatisfy({ $0 < 0x80 }) else { return false }
        var text = Substring(pem)
        while text.first?.isWhitespace == true { text.removeFirst() }
        while text.last?.isWhitespace == true { text.removeLast() }
        let begin = "-----BEGIN PRIVATE KEY-----"
        let end = "-----END PRIVATE KEY-----"
        return text.hasPrefix(begin) && text.hasSuffix(end) && text.utf8.count > begin.utf8.count + end.utf8.count
    }
}

// MARK: The stored key

extension ProjectConfig {
    /// This config, with the private key of `stored` put back where this one names the same
    /// In-App Purchase key without its private key: `config.get` never shows it, so a config
    /// read, edited and put back keeps it. Naming another key without one is `bad_request`.
    public func keepingPrivateKey(of stored: ProjectConfig) throws(GatehouseError) -> ProjectConfig {
        guard let key = stores.appStore?.apiKey, key.privateKeyPEM == nil else { return self }
        guard let storedKey = stored.stores.appStore?.apiKey, storedKey.isSameKey(as: key) else {
            throw .badField(
                "stores.app_store.api.private_key",
                "is required: the project holds no key with this key_id and issuer_id to keep")
        }
        var config = self
        config.stores.appStore?.apiKey?.privateKeyPEM = storedKey.privateKeyPEM
        return config
    }
}

// MARK: Nested lists

extension ProjectConfig {
    private static func checkGrants(of product: ProductDefinition, at path: String, currencyCodes: Set<String>)
        throws(GatehouseError)
    {
        try checkCount(product.grants.count, at: "\(path).grants", max: Limits.grantsPerProductMax)
        var granted = Set<String>()
        for (index, grant) in product.grants.enumerated() {
            let grantPath = "\(path).grants[\(index)]"
            guard currencyCodes.contains(grant.currency) else {
                throw .badField("\(grantPath).currency", "unknown currency \(quoted(grant.currency))")
            }
            try insertUnique(grant.currency, into: &granted, at: "\(grantPath).currency")
            try checkRange(grant.amount, at: "\(grantPath).amount", Limits.grantAmount)
            // One-time products have no renewals, so such a grant could never fire.
            if grant.on.firesOnRenewal, product.type != .subscription {
                let problem = "needs a subscription product, and this one is \(quoted(product.type.rawValue))"
                throw .badField("\(grantPath).on", "\(quoted(grant.on.rawValue)) \(problem)")
            }
        }
    }

    private static func checkTexts(of offering: OfferingDefinition, at path: String) throws(GatehouseError) {
        if let description = offering.description {
            try checkLength(description, at: "\(path).description", Limits.offeringDescriptionCharacters)
        }
        if let metadata = offering.metadataJSON, metadata.utf8.count > Limits.offeringMetadataBytes {
            throw .badField("\(path).metadata", "must take at most \(Limits.offeringMetadataBytes) bytes as compact JSON")
        }
    }

    private static func checkPackages(of offering: OfferingDefinition, at path: String, productIDs: Set<String>)
        throws(GatehouseError)
    {
        try checkCount(offering.packages.count, at: "\(path).packages", max: Limits.packagesPerOfferingMax)
        var ids = Set<String>()
        for (index, package) in offering.packages.enumerated() {
            let packagePath = "\(path).packages[\(index)]"
            try checkID(package.id, at: "\(packagePath).id")
            try insertUnique(package.id, into: &ids, at: "\(packagePath).id")
            guard productIDs.contains(package.product) else {
                throw .badField("\(packagePath).product", "unknown product \(quoted(package.product))")
            }
        }
    }

    /// Each name must be known and named once (`products[1].entitlements[0]`).
    private static func checkReferences(_ names: [String], at path: String, kind: String, known: Set<String>)
        throws(GatehouseError)
    {
        var seen = Set<String>()
        for (index, name) in names.enumerated() {
            let field = "\(path)[\(index)]"
            guard known.contains(name) else { throw .badField(field, "unknown \(kind) \(quoted(name))") }
            try insertUnique(name, into: &seen, at: field)
        }
    }
}

// MARK: Single values

extension ProjectConfig {
    /// Entitlement, product, offering and package ids.
    static func checkID(_ id: String, at field: String) throws(GatehouseError) {
        try checkText(id, at: field, length: Limits.idCharacters)
    }

    /// Text people typed: bounded, printable, and with no whitespace at either end that would
    /// make two ids look the same.
    static func checkText(_ text: String, at field: String, length: ClosedRange<Int>) throws(GatehouseError) {
        try checkLength(text, at: field, length)
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw .badField(field, "must not contain control characters")
        }
        if text.first?.isWhitespace == true || text.last?.isWhitespace == true {
            throw .badField(field, "must not start or end with whitespace")
        }
    }

    /// Same wording as the decoder's length check.
    static func checkLength(_ text: String, at field: String, _ length: ClosedRange<Int>) throws(GatehouseError) {
        guard length.contains(text.count) else {
            throw .badField(field, "must be \(length.lowerBound)–\(length.upperBound) characters")
        }
    }

    static func checkCurrencyCode(_ code: String, at field: String) throws(GatehouseError) {
        let length = Limits.currencyCodeCharacters
        guard length.contains(code.count), code.unicodeScalars.allSatisfy(isCurrencyCodeScalar) else {
            throw .badField(
                field, "must be \(length.lowerBound)–\(length.upperBound) characters of A–Z, a–z, 0–9 and _")
        }
    }

    private static func isCurrencyCodeScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "_": true
        default: false
        }
    }

    /// Same wording as the decoder's range check, so a message does not depend on where the
    /// value came from.
    private static func checkRange(_ value: Int64, at field: String, _ range: ClosedRange<Int64>) throws(GatehouseError)
    {
        guard range.contains(value) else {
            throw .badField(field, "out of range \(range.lowerBound)…\(range.upperBound)")
        }
    }

    static func checkCount(_ count: Int, at field: String, max: Int) throws(GatehouseError) {
        guard count <= max else { throw .badField(field, "has more than \(max) items") }
    }

    static func insertUnique(_ value: String, into seen: inout Set<String>, at field: String)
        throws(GatehouseError)
    {
        guard seen.insert(value).inserted else { throw .badField(field, "repeats \(quoted(value))") }
    }

    /// A value as a Swift string literal, so quotes and odd characters in it stay visible.
    static func quoted(_ value: String) -> String {
        value.debugDescription
    }
}
