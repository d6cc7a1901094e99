import GatehouseAppStore
import GatehouseCore
import GatehouseRuntime
import GatehouseStripe
import GatehouseWire

/// Purchases, the store and promotional grants (PROTOCOL.md, "Purchases and the store").
enum PurchaseOperations {
    static let all: [Operation] = [report, restore, notify, grant, revoke]

    /// At most this many transactions in one `purchase.restore`.
    static let restoreTransactionsMax = 1000

    static let report = Operation(name: "purchase.report", roles: [.sdk, .server], body: .async { context throws(GatehouseError) in
        let fields = context.fields
        let id = try ProfileOperations.profileLookup(fields)
        let store = try fields.string("store")
        let outcome: Committed<PurchaseOutcome>
        if store == TestStore.appStoreName {
            let verified = AppStoreInput.transaction(fields, verifier: context.core.appStoreVerifier)
            outcome = try await context.project.reportPurchase(profile: id) { config, _ throws(GatehouseError) in
                try AppStoreInput.storeTransaction(verified, config: config)
            }
        } else {
            let transaction = try fields.object("transaction")
            outcome = try await context.project.reportPurchase(profile: id) { config, nowMs throws(GatehouseError) in
                try TestStore.requireEnabled(store, in: config)
                return try TestStore.transaction(transaction, config: config, nowMs: nowMs)
            }
        }
        return reply(document(outcome.value, context), outcome)
    })

    static let restore = Operation(name: "purchase.restore", roles: [.sdk, .server], body: .async { context throws(GatehouseError) in
        let fields = context.fields
        let id = try ProfileOperations.profileLookup(fields)
        let store = try fields.string("store")
        var outcome: Committed<PurchaseOutcome>
        var apple: AppleHistory.Report?
        if store == TestStore.appStoreName {
            let verified = AppStoreInput.transactions(fields, verifier: context.core.appStoreVerifier)
            outcome = try await context.project.restorePurchases(profile: id) { config, _ throws(GatehouseError) in
                try AppStoreInput.storeTransactions(verified, config: config)
            }
            (outcome, apple) = await AppleHistory.learn(posted: verified, restored: outcome, profile: id, context)
        } else {
            let transactions = try fields.objects("transactions", maxCount: restoreTransactionsMax)
            outcome = try await context.project.restorePurchases(profile: id) { config, nowMs throws(GatehouseError) in
                try TestStore.requireEnabled(store, in: config)
                var result: [StoreTransaction] = []
                for transaction in transactions { result.append(try TestStore.transaction(transaction, config: config, nowMs: nowMs)) }
                return result
            }
        }
        var result = document(outcome.value, context)
        result.append("transferred_from", .array(outcome.value.transferredFrom.map { .string($0.description) }))
        result.append("kept_by_other", .array(outcome.value.keptByOther.map { .string($0) }))
        if let apple { result.append("apple", apple.json) }
        return reply(result, outcome)
    })

    /// `store.notify`'s number in the op table, for the store endpoints' metrics.
    static let notifyNumber = Operations.number(of: "store.notify")

    static let notify = Operation(name: "store.notify", roles: [.server], body: .async { context throws(GatehouseError) in
        let fields = context.fields
        let store = try fields.string("store")
        let outcome: Committed<PurchaseOutcome>
        if store == TestStore.appStoreName {
            let verified = AppStoreInput.notification(fields, verifier: context.core.appStoreVerifier)
            outcome = try await context.project.notify { config, nowMs throws(GatehouseError) in
                try AppStoreInput.storeNotification(verified, config: config, nowMs: nowMs)
            }
        } else if store == TestStore.stripeName {
            let body = Array(try fields.string("payload").utf8)
            let signature = try fields.optionalString("stripe_signature")
            let event = StripeInput.event(body)
            outcome = try await context.project.notifyStripe { config, nowMs throws(GatehouseError) in
                try StripeInput.notice(body: body, signature: signature, event: event, config: config, nowMs: nowMs)
            }
        } else {
            let event = try fields.object("event")
            outcome = try await context.project.notify { config, nowMs throws(GatehouseError) in
                try TestStore.requireEnabled(store, in: config)
                return try TestStore.notification(event, config: config, nowMs: nowMs)
            }
        }
        return Reply([
            "applied": .bool(outcome.value.applied),
            "profile_id": .optional(outcome.value.owner) { .string($0.description) },
        ], after: outcome.lsn)
    })

    static let grant = Operation(name: "entitlement.grant", roles: [.server], body: .project { context throws(GatehouseError) in
        let fields = context.fields
        let id = try ProfileOperations.profileLookup(fields)
        let entitlement = try fields.string("entitlement")
        let end = try grantEnd(fields)
        return { project throws(GatehouseError) in
            let outcome = try project.grantEntitlement(profile: id, entitlement: entitlement, expiring: end)
            return reply(document(outcome.value, context), outcome)
        }
    })

    static let revoke = Operation(name: "entitlement.revoke", roles: [.server], body: .project { context throws(GatehouseError) in
        let fields = context.fields
        let id = try ProfileOperations.profileLookup(fields)
        let entitlement = try fields.string("entitlement")
        return { project throws(GatehouseError) in
            let outcome = try project.revokeEntitlement(profile: id, entitlement: entitlement)
            return reply(document(outcome.value, context), outcome)
        }
    })

    /// When a grant ends, reckoned from its start: `expires_ms` (null: for life), or one of
    /// RevenueCat's named durations (`duration`), which the RevenueCat-compatible REST passes on.
    private static func grantEnd(_ fields: Fields) throws(GatehouseError) -> @Sendable (Int64) -> Int64? {
        if let name = try fields.optionalString("duration") {
            guard fields.object["expires_ms"] == nil else { throw GatehouseError.badField("duration", "is given with expires_ms: name one") }
            guard let duration = PromotionalDuration(rawValue: name) else {
                let names = PromotionalDuration.allCases.map(\.rawValue).joined(separator: ", ")
                throw GatehouseError.badField("duration", "must be one of \(names)")
            }
            return { duration.end(fromMs: $0) }
        }
        guard fields.object["expires_ms"] != nil else { throw GatehouseError.badField("expires_ms", "is required (null: for life; or duration)") }
        let expiresMs = try fields.optionalInt("expires_ms", in: 0...(Int64(1) << 53))
        return { _ in expiresMs }
    }

    /// The answer of an op that shows the profile it acted on.
    private static func reply(_ result: JSONObject, _ outcome: Committed<PurchaseOutcome>) -> Reply {
        Reply(result, after: outcome.lsn, showing: outcome.value.view.map { ShownProfile(view: $0) })
    }

    private static func document(_ outcome: PurchaseOutcome, _ context: OperationContext) -> JSONObject {
        guard let view = outcome.view else { return [:] }
        return ProfileOperations.document(view, context)
    }
}
