import GatehouseAppStore
import GatehouseBase
import GatehouseCore
import GatehouseOutbound
import GatehouseRuntime
import GatehouseWire

/// What a `purchase.restore` of App Store transactions learns from Apple (DESIGN.md, "Asking
/// Apple"): when the project holds an In-App Purchase key, the transaction history of the
/// customer who made the first posted transaction. Each item Apple sends is judged as a posted
/// one is (verified, for the project's app, readable), and those that pass are restored by
/// ``Project/restorePurchases(profile:_:)`` again (a thousand at a time, as many as a request
/// may post), under the same ownership rules.
///
/// The wait for Apple is an `await` on the outbound client, outside the project's actor, so the
/// project's other requests go on meanwhile. Whatever goes wrong with Apple, the posted purchases
/// stay restored and the restore still answers ok; its `apple` member says what happened.
enum AppleHistory {
    /// The restore answer's `apple` member.
    struct Report: Sendable {
        /// Signed transactions Apple's history held.
        var transactions = 0
        /// Of those, the ones not restored: they did not verify, are for another app, or lack
        /// what a purchase needs.
        var skipped = 0
        /// Why Apple's history was not learned: an ``AppStoreServerAPIError/Code``, or the error
        /// code restoring it met; `nil`: it was learned.
        var error: String?

        var json: JSONValue {
            [
                "asked": true, "transactions": .int(Int64(transactions)), "skipped": .int(Int64(skipped)),
                "error": .optional(error, JSONValue.string),
            ]
        }
    }

    /// `restored`, with what Apple's history adds to it, and the report; `nil` for the report
    /// when Apple was not asked (no key, or nothing posted).
    static func learn(
        posted verified: Result<[AppStoreTransaction], GatehouseError>, restored: Committed<PurchaseOutcome>,
        profile: ProfileLookup, _ context: OperationContext
    ) async -> (Committed<PurchaseOutcome>, Report?) {
        guard case .success(let posted) = verified, let first = posted.first, let transactionID = first.transactionId else {
            return (restored, nil)
        }
        let config = await context.project.config().value
        guard let settings = config.stores.appStore, let key = settings.apiKey else { return (restored, nil) }
        var report = Report()
        let signed: [String]
        switch await history(of: transactionID, in: first, key: key, settings: settings, context.core) {
        case .success(let transactions):
            signed = transactions
        case .failure(let error):
            report.error = error.code.rawValue
            warn("apple.history_failed", error, context)
            return (restored, report)
        }
        report.transactions = signed.count
        let app = AppStoreAppIdentity(settings)
        let accepted = signed.compactMap { storeTransaction($0, app: app, verifier: context.core.appStoreVerifier) }
        report.skipped = signed.count - accepted.count
        if report.skipped > 0 {
            context.core.logger.warning("apple.history_items_skipped", metadata: [
                "project": "\(context.project.id)", "skipped": .init(report.skipped), "transactions": .init(signed.count),
            ])
        }
        var outcome = restored
        // A restore of as many as a request may post at a time, so no batch is larger than one
        // a client can cause.
        for start in stride(from: 0, to: accepted.count, by: AppStoreInput.restoreTransactionsMax) {
            let part = Array(accepted[start..<min(start + AppStoreInput.restoreTransactionsMax, accepted.count)])
            do {
                outcome = merged(outcome, try await restore(part, judgedFor: app, profile: profile, context))
            } catch {
                report.error = error.code.rawValue
                warn("apple.history_not_restored", error, context)
                break
            }
        }
        return (outcome, report)
    }

    /// Restores `transactions` as the project is configured now, which must still be for `app`.
    private static func restore(
        _ transactions: [StoreTransaction], judgedFor app: AppStoreAppIdentity, profile: ProfileLookup, _ context: OperationContext
    ) async throws(GatehouseError) -> Committed<PurchaseOutcome> {
        try await context.project.restorePurchases(profile: profile) { config, _ throws(GatehouseError) in
            // They were judged against the app as it was configured when Apple was asked.
            guard config.stores.appStore.map(AppStoreAppIdentity.init) == app else {
                throw GatehouseError(.conflict, "stores.app_store changed while Apple was asked")
            }
            return transactions
        }
    }

    /// Every signed transaction of the customer, from the environment of the posted one.
    private static func history(
        of transactionID: String, in transaction: AppStoreTransaction, key: InAppPurchaseKey, settings: AppStoreSettings,
        _ core: ServerCore
    ) async -> Result<[String], AppStoreServerAPIError> {
        let client: AppStoreServerAPIClient
        do {
            client = try core.appStoreAPI.client(for: key, bundleID: settings.bundleID)
        } catch {
            return .failure(AppStoreServerAPIError(code: .unauthorized, message: "cannot use the In-App Purchase key: \(error)"))
        }
        let environment = transaction.environment ?? (settings.environment == .production ? .production : .sandbox)
        do {
            return .success(try await client.transactionHistory(transactionId: transactionID, environment: environment))
        } catch {
            return .failure(error)
        }
    }

    /// One of Apple's items as a posted one would be taken, or `nil` when it would be refused.
    private static func storeTransaction(_ jws: String, app: AppStoreAppIdentity, verifier: AppStoreVerifier)
        -> StoreTransaction?
    {
        do {
            let transaction = try verifier.verifyTransaction(jws: jws)
            try app.check(transaction)
            return try transaction.storeTransaction()
        } catch {
            return nil
        }
    }

    /// The answer after two restores: the document as the later left it, and what either
    /// transferred or left with another profile.
    private static func merged(_ posted: Committed<PurchaseOutcome>, _ learned: Committed<PurchaseOutcome>)
        -> Committed<PurchaseOutcome>
    {
        var outcome = learned.value
        outcome.view = learned.value.view ?? posted.value.view
        outcome.transferredFrom = unique(posted.value.transferredFrom + learned.value.transferredFrom)
        outcome.keptByOther = unique(posted.value.keptByOther + learned.value.keptByOther)
        return Committed(outcome, lsn: max(posted.lsn, learned.lsn))
    }

    private static func unique<T: Hashable>(_ items: [T]) -> [T] {
        var seen = Set<T>()
        return items.filter { seen.insert($0).inserted }
    }

    /// The error, never the key or a token: neither is in an error's text.
    private static func warn(_ event: String, _ error: some Error, _ context: OperationContext) {
        context.core.logger.warning(event, metadata: ["project": "\(context.project.id)", "error": "\(error)"])
    }
}
