import GatehouseAppStore
import GatehouseCore
import GatehouseWire

/// The App Store's signed data in a purchase op (PROTOCOL.md, "Purchases and the store").
///
/// Verifying is the costly part (an X.509 chain and ECDSA per JWS), so it runs in the op's
/// handler, before the project's actor is entered; its outcome, failure included, is held and
/// judged in the actor step against the project's config, in this order: the store must be
/// enabled (`bad_request`), the data must have verified (`invalid_signature`, or `bad_request`
/// for a missing or mistyped field), and it must be for the project's app (`wrong_app`). So a
/// project without `stores.app_store` always answers `bad_request`, and nothing changes on any
/// of these errors.
enum AppStoreInput {
    /// At most this many signed transactions in one `purchase.restore`.
    static let restoreTransactionsMax = 1000

    // MARK: Outside the actor

    /// `signed_transaction` (a JWS), verified.
    static func transaction(_ fields: Fields, verifier: AppStoreVerifier) -> Result<AppStoreTransaction, GatehouseError> {
        Result { () throws(GatehouseError) in try verify(try fields.string("signed_transaction"), verifier) }
    }

    /// `signed_transactions` (a list of JWS), each verified; the first failure fails them all.
    static func transactions(_ fields: Fields, verifier: AppStoreVerifier) -> Result<[AppStoreTransaction], GatehouseError> {
        Result { () throws(GatehouseError) in
            var result: [AppStoreTransaction] = []
            for jws in try fields.strings("signed_transactions", maxCount: restoreTransactionsMax) {
                result.append(try verify(jws, verifier))
            }
            return result
        }
    }

    /// `signed_payload`: the JWS Apple posts, Apple's whole body as text (`{"signedPayload":"…"}`)
    /// or that body as a JSON object; verified with the transaction and renewal info it carries.
    static func notification(_ fields: Fields, verifier: AppStoreVerifier)
        -> Result<AppStoreVerifiedNotification, GatehouseError>
    {
        Result { () throws(GatehouseError) in
            let body: String
            if case .object = fields.value("signed_payload") {
                body = try fields.object("signed_payload").string("signedPayload")
            } else {
                body = try fields.string("signed_payload")
            }
            do throws(AppStoreVerificationError) {
                return try verifier.decodeNotification(signedPayloadBody: body)
            } catch {
                throw error.gatehouseError
            }
        }
    }

    private static func verify(_ jws: String, _ verifier: AppStoreVerifier) throws(GatehouseError) -> AppStoreTransaction {
        do {
            return try verifier.verifyTransaction(jws: jws)
        } catch {
            throw error.gatehouseError
        }
    }

    // MARK: In the actor step

    static func storeTransaction(_ verified: Result<AppStoreTransaction, GatehouseError>, config: ProjectConfig)
        throws(GatehouseError) -> StoreTransaction
    {
        let app = try enabledApp(in: config)
        let transaction = try verified.get()
        try check { () throws(AppStoreVerificationError) in try app.check(transaction) }
        return try transaction.storeTransaction()
    }

    static func storeTransactions(_ verified: Result<[AppStoreTransaction], GatehouseError>, config: ProjectConfig)
        throws(GatehouseError) -> [StoreTransaction]
    {
        let app = try enabledApp(in: config)
        let transactions = try verified.get()
        for transaction in transactions {
            try check { () throws(AppStoreVerificationError) in try app.check(transaction) }
        }
        var result: [StoreTransaction] = []
        for transaction in transactions { result.append(try transaction.storeTransaction()) }
        return result
    }

    static func storeNotification(
        _ verified: Result<AppStoreVerifiedNotification, GatehouseError>, config: ProjectConfig, nowMs: Int64
    ) throws(GatehouseError) -> StoreNotification {
        let app = try enabledApp(in: config)
        let notification = try verified.get()
        try check { () throws(AppStoreVerificationError) in try app.check(notification) }
        return try notification.storeNotification(receivedAtMs: nowMs)
    }

    /// The project's app, once the store is known to be enabled.
    private static func enabledApp(in config: ProjectConfig) throws(GatehouseError) -> AppStoreAppIdentity {
        try TestStore.requireEnabled(TestStore.appStoreName, in: config)
        guard let settings = config.stores.appStore else {
            preconditionFailure("requireEnabled passed without stores.app_store")
        }
        return AppStoreAppIdentity(settings)
    }

    private static func check(_ body: () throws(AppStoreVerificationError) -> Void) throws(GatehouseError) {
        do {
            try body()
        } catch {
            throw error.gatehouseError
        }
    }
}
