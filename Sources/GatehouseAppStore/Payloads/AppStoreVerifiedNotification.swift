/// A notification whose outer JWS and nested signed transaction and renewal info have all been
/// verified, each at its own `signedDate`, and decoded.
public struct AppStoreVerifiedNotification: Sendable, Equatable {
    public var notification: AppStoreNotification
    /// The decoded `data.signedTransactionInfo`, when the notification carries one.
    public var transaction: AppStoreTransaction?
    /// The decoded `data.signedRenewalInfo`, when the notification carries one.
    public var renewalInfo: AppStoreRenewalInfo?
    /// The notification's JWS as received (the `signedPayload`), for storing or replaying.
    public var signedPayload: String

    public init(
        notification: AppStoreNotification, transaction: AppStoreTransaction?, renewalInfo: AppStoreRenewalInfo?,
        signedPayload: String
    ) {
        self.notification = notification
        self.transaction = transaction
        self.renewalInfo = renewalInfo
        self.signedPayload = signedPayload
    }
}
