public import GatehouseCore
import GatehouseWire

extension AppStoreTransaction {
    /// Ids (transaction, original transaction, product) are 1–128 characters, as the test store's.
    static let idLength = 1...128

    /// The verified transaction as the purchase rules take it (PROTOCOL.md, "Purchases and the
    /// store"). Call it only on a transaction that verified and matched the project's app.
    ///
    /// - kind: `Auto-Renewable Subscription` is a subscription, keyed by `originalTransactionId`;
    ///   every other `type` (consumable, non-consumable, non-renewing) is a one-time purchase,
    ///   keyed by `transactionId`. A subscription needs `expiresDate`.
    /// - price: `price` is in milliunits (10990 = 10.99); absent means 0, a free term.
    /// - token: `appAccountToken` when it is a UUID (anything else cannot name a profile and is
    ///   left out).
    /// - period type: a `FREE_TRIAL` offer (or an introductory offer at price 0) is `trial`,
    ///   another introductory offer (`offerType` 1) `intro`, everything else `normal`.
    /// - environment: `Production` is production, everything else sandbox.
    /// - family shared: `inAppOwnershipType` `FAMILY_SHARED` (such a copy entitles but never
    ///   grants currency).
    ///
    /// - Throws: `bad_request` naming the payload field when an id or date it needs is missing
    ///   or out of range: genuine App Store data always has them.
    public func storeTransaction() throws(GatehouseError) -> StoreTransaction {
        let transactionID = try Self.id(transactionId, "transactionId")
        let kind: StoreTransaction.Kind = type == .autoRenewableSubscription ? .subscription : .oneTime
        let originalID = try originalTransactionId.map { (id) throws(GatehouseError) in try Self.id(id, "originalTransactionId") }
        guard let purchasedMs = purchaseDate else { throw Self.missing("purchaseDate") }
        var expiresMs: Int64 = 0
        if kind == .subscription {
            guard let expiresDate else { throw Self.missing("expiresDate") }
            expiresMs = expiresDate
        }
        let price = Double(Swift.max(price ?? 0, 0)) / 1000
        return StoreTransaction(
            store: TestStore.appStoreName, kind: kind, transactionID: transactionID,
            originalTransactionID: originalID ?? transactionID, productID: try Self.id(productId, "productId"),
            purchasedMs: purchasedMs, expiresMs: expiresMs, token: appAccountToken.flatMap(AppAccountToken.init(parsing:)),
            price: price, currency: currency, periodType: periodType(price: price),
            environment: environment == .production ? .production : .sandbox,
            familyShared: inAppOwnershipType == .familyShared)
    }

    /// What kind of period the term is, from the offer it was bought with.
    func periodType(price: Double) -> SubscriptionPeriodType {
        if offerDiscountType == "FREE_TRIAL" { return .trial }
        guard offerType == 1 else { return .normal }
        return offerDiscountType == nil && price == 0 ? .trial : .intro
    }

    private static func id(_ value: String?, _ field: String) throws(GatehouseError) -> String {
        guard let value else { throw missing(field) }
        guard idLength.contains(value.count) else {
            throw .badField("signed transaction \(field)", "must be \(idLength.lowerBound)–\(idLength.upperBound) characters")
        }
        return value
    }

    private static func missing(_ field: String) -> GatehouseError {
        .badField("signed transaction \(field)", "is missing from the App Store's payload")
    }
}
