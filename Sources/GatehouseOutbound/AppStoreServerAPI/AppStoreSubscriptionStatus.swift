/// One subscription's latest state as Get All Subscription Statuses reports it (an item of a
/// group's `lastTransactions`). The two signed fields are JWS the caller verifies.
public struct AppStoreSubscriptionStatus: Sendable, Equatable {
    /// The subscription group of the item.
    public var subscriptionGroupIdentifier: String?
    public var originalTransactionId: String?
    /// Apple's status: 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
    public var status: Int?
    /// The latest transaction (a JWS).
    public var signedTransactionInfo: String?
    /// The renewal info (a JWS).
    public var signedRenewalInfo: String?

    public init(
        subscriptionGroupIdentifier: String? = nil, originalTransactionId: String? = nil, status: Int? = nil,
        signedTransactionInfo: String? = nil, signedRenewalInfo: String? = nil
    ) {
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.originalTransactionId = originalTransactionId
        self.status = status
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }
}
