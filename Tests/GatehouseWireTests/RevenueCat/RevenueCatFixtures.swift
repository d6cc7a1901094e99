import GatehouseBase
import GatehouseCore
import GatehouseWire
import Testing

// A project driven by the domain's own rules, as its actor drives them, whose profiles the
// RevenueCat bodies are written from: the bodies are checked against states the rules really
// reach, not against hand-built holdings.

/// `pro` comes from two subscriptions, a non-consumable or a grant; `premium` from its own
/// subscription; `extra` only from grants; a consumable grants nothing.
enum RCCatalogue {
    static let config = ProjectConfig(
        entitlements: [EntitlementDefinition(id: "pro"), EntitlementDefinition(id: "premium"), EntitlementDefinition(id: "extra")],
        products: [
            ProductDefinition(id: "pro_monthly", type: .subscription, entitlements: ["pro"]),
            ProductDefinition(id: "pro_yearly", type: .subscription, entitlements: ["pro"]),
            ProductDefinition(id: "premium_monthly", type: .subscription, entitlements: ["premium"]),
            ProductDefinition(id: "lifetime", type: .nonConsumable, entitlements: ["pro"]),
            ProductDefinition(id: "coins", type: .consumable, grants: [CurrencyGrant(currency: "GOLD_COIN", amount: 10, on: .purchase)]),
        ],
        currencies: [CurrencyDefinition(code: "GOLD_COIN", name: "Gold coin")],
        gracePeriodMs: 0, stores: StoreSettings(test: true))

    static let dayMs: Int64 = 86_400_000
    /// 2026-11-29T10:00:00.000Z.
    static let startMs: Int64 = 1_795_946_400_000

    static func subscription(
        _ original: String, id: String? = nil, product: String = "pro_monthly", store: String = "app_store",
        purchasedMs: Int64 = startMs, expiresMs: Int64 = startMs + 30 * dayMs, periodType: SubscriptionPeriodType = .normal,
        environment: StoreEnvironment = .sandbox, familyShared: Bool = false
    ) -> StoreTransaction {
        StoreTransaction(
            store: store, kind: .subscription, transactionID: id ?? original, originalTransactionID: original,
            productID: product, purchasedMs: purchasedMs, expiresMs: expiresMs, token: nil, price: 9.99, currency: "USD",
            periodType: periodType, environment: environment, familyShared: familyShared)
    }

    static func oneTime(_ id: String, product: String = "lifetime", store: String = "app_store", purchasedMs: Int64 = startMs)
        -> StoreTransaction
    {
        StoreTransaction(
            store: store, kind: .oneTime, transactionID: id, originalTransactionID: id, productID: product,
            purchasedMs: purchasedMs, expiresMs: 0, token: nil, price: 29.99, currency: "USD", periodType: .normal,
            environment: .production)
    }

    static func term(_ id: String, purchasedMs: Int64, expiresMs: Int64) -> SubscriptionTerm {
        SubscriptionTerm(transactionID: id, purchasedMs: purchasedMs, expiresMs: expiresMs, price: 9.99)
    }
}

/// A project as its actor holds it: each rule decides on the current state at `nowMs` and its
/// batch is applied. The clock moves only when a test moves it.
struct RCWorld {
    private(set) var state: ProjectState
    let random = SeededRandomSource(seed: 19)
    var nowMs: Int64 = RCCatalogue.startMs
    private var notifications = 0

    init(config: ProjectConfig = RCCatalogue.config) {
        state = ProjectState(
            id: try! ProjectID(validating: "acme"), name: "Acme", createdMs: 0,
            keys: KeyDigests(publicKey: SecretDigest(secret: "pk"), secretKey: SecretDigest(secret: "sk")))
        apply(ProjectState.ChangeBatch([.configReplaced(config)], atMs: 0))
    }

    mutating func apply(_ batch: ProjectState.ChangeBatch) {
        guard !batch.changes.isEmpty else { return }
        state.apply(batch)
    }

    mutating func create(_ customerUserID: String? = nil) throws -> ProfileID {
        let decision = try state.createProfile(customerUserID: customerUserID, token: nil, nowMs: nowMs, random: random)
        apply(decision.batch)
        return decision.profileID
    }

    mutating func identify(_ id: ProfileID, _ customerUserID: String) throws {
        apply(try state.identify(profile: id, customerUserID: customerUserID, token: nil, nowMs: nowMs, random: random).batch)
    }

    mutating func report(_ id: ProfileID, _ transaction: StoreTransaction) throws {
        apply(try state.reportPurchase(profile: id, transaction: transaction, nowMs: nowMs).batch)
    }

    mutating func restore(_ id: ProfileID, _ transactions: [StoreTransaction]) throws {
        apply(try state.restorePurchases(profile: id, transactions: transactions, nowMs: nowMs).batch)
    }

    /// A store notification about `original`, dated `atMs` (default: now).
    mutating func notify(_ original: String, store: String = "app_store", atMs: Int64? = nil, _ event: SubscriptionEvent) throws {
        notifications += 1
        let notification = StoreNotification(
            store: store, notificationID: "n\(notifications)", originalTransactionID: original, atMs: atMs ?? nowMs,
            event: .change(event))
        apply(try state.notify(notification, nowMs: nowMs).batch)
    }

    mutating func grant(_ id: ProfileID, _ entitlement: String, expiresMs: Int64?) throws {
        apply(try state.grantEntitlement(profile: id, entitlement: entitlement, expiresMs: expiresMs, nowMs: nowMs).batch)
    }

    mutating func revoke(_ id: ProfileID, _ entitlement: String) throws {
        apply(try state.revokeEntitlement(profile: id, entitlement: entitlement, nowMs: nowMs).batch)
    }

    /// The clock moves to `atMs` and what fell due expires, as the project's timer does.
    mutating func advance(to atMs: Int64) {
        nowMs = atMs
        apply(state.expireDue(nowMs: atMs))
    }

    func profile(_ id: ProfileID) -> Profile {
        guard let profile = state.profiles.profile(id) else { preconditionFailure("no profile \(id)") }
        return profile
    }

    func holdings(_ id: ProfileID) -> ProjectState.Holdings { state.holdings(of: id, nowMs: nowMs) }

    func body(_ id: ProfileID, attributes: [(key: String, value: String, updatedMs: Int64)]? = nil) -> JSONObject {
        CustomerInfoDocument.json(
            profile: profile(id), purchases: CustomerInfoPurchases(state: state, profileID: id, nowMs: nowMs),
            config: state.config, nowMs: nowMs, originalAppUserID: id.description, attributes: attributes)
    }

    func subscriber(_ id: ProfileID) -> JSONObject { body(id)["subscriber"]?.objectValue ?? JSONObject() }
}

extension JSONObject {
    /// The object at `path` (keys, one per level); fails the test when there is none.
    func object(_ path: String...) throws -> JSONObject {
        var object = self
        for key in path {
            object = try #require(object[key]?.objectValue, "no object at \(path)")
        }
        return object
    }

    /// Epoch milliseconds of the ISO 8601 date at `key`; `nil` for `null`.
    func dateMs(_ key: String) throws -> Int64? {
        let value = try #require(self[key], "no member \(key)")
        if value.isNull { return nil }
        let text = try #require(value.stringValue, "\(key) is not a string")
        guard let ms = ISO8601Text.ms(text) else {
            Issue.record("\(key) is not an ISO 8601 date: \(text)")
            throw NotADate()
        }
        return ms
    }
}

struct NotADate: Error {}

/// Reads back `YYYY-MM-DDTHH:MM:SS.sssZ`, the one form the bodies write.
enum ISO8601Text {
    static func ms(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 24, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54, bytes[13] == 0x3A, bytes[16] == 0x3A,
            bytes[19] == 0x2E, bytes[23] == 0x5A
        else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            guard range.allSatisfy({ (0x30...0x39).contains(bytes[$0]) }) else { return nil }
            return range.reduce(0) { $0 * 10 + Int64(bytes[$1] - 0x30) }
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19), let milli = number(20..<23),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        return ((daysSinceEpoch(year: year, month: month, day: day) * 24 + hour) * 60 + minute) * 60_000 + second * 1_000 + milli
    }

    /// Howard Hinnant's `days_from_civil`.
    static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
