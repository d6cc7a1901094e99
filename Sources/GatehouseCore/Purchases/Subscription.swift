/// The life of a subscription (DESIGN.md, "Subscription life and entitlements").
public enum SubscriptionStatus: String, Sendable, Equatable, CaseIterable {
    case active
    /// A billing issue inside the grace period: still entitled until `graceExpiresMs`.
    case grace
    /// A billing issue with no grace: no access while the store retries.
    case billingRetry = "billing_retry"
    case expired
    case refunded
    case revoked
}

public enum SubscriptionPeriodType: String, Sendable, Equatable, CaseIterable {
    case normal
    case trial
    case intro
}

public enum StoreEnvironment: String, Sendable, Equatable, CaseIterable {
    case sandbox
    case production
}

/// One paid (or free) period of a subscription: the first purchase or a renewal.
public struct SubscriptionTerm: Sendable, Equatable {
    public let transactionID: String
    public let purchasedMs: Int64
    /// Moves only later, by a renewal-date extension (``SubscriptionEvent/extend(_:)``).
    public internal(set) var expiresMs: Int64
    /// In the store's currency units.
    public let price: Double
    /// 0 (not refunded) … 1 (fully refunded).
    public var refundedFraction: Double

    public init(transactionID: String, purchasedMs: Int64, expiresMs: Int64, price: Double, refundedFraction: Double = 0) {
        self.transactionID = transactionID
        self.purchasedMs = purchasedMs
        self.expiresMs = expiresMs
        self.price = price
        self.refundedFraction = refundedFraction
    }

    public var isPaid: Bool { price > 0 }
    public var isRefunded: Bool { refundedFraction > 0 }

    /// Terms are kept in this order; the last is the current term.
    static func precedes(_ a: SubscriptionTerm, _ b: SubscriptionTerm) -> Bool {
        (a.expiresMs, a.purchasedMs, a.transactionID) < (b.expiresMs, b.purchasedMs, b.transactionID)
    }
}

/// A store subscription, keyed by store and original transaction id; its renewals are its terms.
///
/// Each part of the state remembers the store date of the notification that last set it, so a
/// late or out-of-order notification never rolls a newer state back: `willRenew` (cancel and
/// uncancel), `productID` (plan changes), the status (billing, recovery, expiry, refund of the
/// current term, revoke) and each term's refund are last-writer-wins by store date, and terms
/// are a set keyed by transaction id.
///
/// Deduplication by notification id is the caller's (the runtime keeps the ids it has seen);
/// `apply` is nevertheless idempotent for every event, so a repeat changes nothing.
public struct Subscription: Sendable, Equatable {
    public let store: String
    public let originalTransactionID: String
    public internal(set) var productID: String
    public internal(set) var status: SubscriptionStatus
    /// The end of the current (latest) term.
    public internal(set) var expiresMs: Int64
    /// Set while in `grace`.
    public internal(set) var graceExpiresMs: Int64?
    public internal(set) var willRenew: Bool
    public internal(set) var periodType: SubscriptionPeriodType
    public let environment: StoreEnvironment
    /// A family member's copy (App Store family sharing): it entitles, but never grants currency.
    public let familyShared: Bool
    /// Every known term, ordered by expiry; the last is the current one.
    public internal(set) var terms: [SubscriptionTerm]
    /// The store date of the newest notification seen (applied or found stale).
    public internal(set) var lastEventMs: Int64
    /// While `refunded`: the status to return to if the refund is reversed.
    public internal(set) var statusBeforeRefund: SubscriptionStatus?

    // The store dates that order each part of the state.
    public internal(set) var statusMs: Int64
    public internal(set) var willRenewMs: Int64
    public internal(set) var productMs: Int64
    /// The grace expiry the store named, if it named one; otherwise grace follows `expiresMs`.
    public internal(set) var storeGraceExpiresMs: Int64?
    /// Refunds and reversals by transaction id, kept even for a term not yet known.
    public internal(set) var refundMarks: [String: RefundMark]

    public struct RefundMark: Sendable, Equatable {
        public var fraction: Double
        public var atMs: Int64

        public init(fraction: Double, atMs: Int64) {
            self.fraction = fraction
            self.atMs = atMs
        }
    }

    /// Every stored field, for loading a snapshot or a log record.
    public init(
        store: String, originalTransactionID: String, productID: String, status: SubscriptionStatus, expiresMs: Int64,
        graceExpiresMs: Int64?, willRenew: Bool, periodType: SubscriptionPeriodType, environment: StoreEnvironment,
        terms: [SubscriptionTerm], lastEventMs: Int64, statusBeforeRefund: SubscriptionStatus?, statusMs: Int64,
        willRenewMs: Int64, productMs: Int64, storeGraceExpiresMs: Int64?, refundMarks: [String: RefundMark],
        familyShared: Bool = false
    ) {
        self.familyShared = familyShared
        self.store = store
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.status = status
        self.expiresMs = expiresMs
        self.graceExpiresMs = graceExpiresMs
        self.willRenew = willRenew
        self.periodType = periodType
        self.environment = environment
        self.terms = terms
        self.lastEventMs = lastEventMs
        self.statusBeforeRefund = statusBeforeRefund
        self.statusMs = statusMs
        self.willRenewMs = willRenewMs
        self.productMs = productMs
        self.storeGraceExpiresMs = storeGraceExpiresMs
        self.refundMarks = refundMarks
    }

    public var currentTerm: SubscriptionTerm? { terms.last }

    public func term(id transactionID: String) -> SubscriptionTerm? {
        terms.first { $0.transactionID == transactionID }
    }

    /// A subscription as its first purchase makes it: active until the term's end.
    public static func purchased(
        store: String, originalTransactionID: String, productID: String, term: SubscriptionTerm,
        periodType: SubscriptionPeriodType, environment: StoreEnvironment, atMs: Int64, familyShared: Bool = false
    ) -> SubscriptionTransition {
        let subscription = Subscription(
            store: store, originalTransactionID: originalTransactionID, productID: productID, status: .active,
            expiresMs: term.expiresMs, graceExpiresMs: nil, willRenew: true, periodType: periodType,
            environment: environment, terms: [term], lastEventMs: atMs, statusBeforeRefund: nil,
            statusMs: atMs, willRenewMs: atMs, productMs: atMs, storeGraceExpiresMs: nil, refundMarks: [:],
            familyShared: familyShared)
        return SubscriptionTransition(subscription: subscription, effects: [SubscriptionEffect(.initialPurchase)])
    }
}

/// A feed event a change produces, before the runtime gives it an id and a profile.
public struct SubscriptionEffect: Sendable, Equatable {
    public let type: EventType
    public let details: [EventDetail]

    public init(_ type: EventType, details: [EventDetail] = []) {
        self.type = type
        self.details = details
    }

    static let revoked = SubscriptionEffect(.expiration, details: [EventDetail("reason", .string("revoked"))])
}

/// What applying an event or the passing of time did.
public struct SubscriptionTransition: Sendable, Equatable {
    public let subscription: Subscription
    /// Empty when the event changed nothing a customer can see (a repeat, or a stale one).
    public let effects: [SubscriptionEffect]

    public var eventTypes: [EventType] { effects.map(\.type) }
}
