/// An entitlement the project's backend gave directly (`entitlement.grant`), not bought in a
/// store: for life when `expiresMs` is `nil`, otherwise until `expiresMs` (exclusive).
/// `entitlement.revoke` marks it revoked; it is kept so the entitlement stays listed.
public struct PromotionalGrant: Sendable, Equatable {
    public let entitlementID: String
    public let grantedMs: Int64
    /// `nil`: for life.
    public let expiresMs: Int64?
    public var revoked: Bool

    public init(entitlementID: String, grantedMs: Int64, expiresMs: Int64?, revoked: Bool = false) {
        self.entitlementID = entitlementID
        self.grantedMs = grantedMs
        self.expiresMs = expiresMs
        self.revoked = revoked
    }

    /// Not revoked and, unless for life, `nowMs` before `expiresMs`.
    public func isLive(nowMs: Int64) -> Bool {
        guard !revoked else { return false }
        guard let expiresMs else { return true }
        return nowMs < expiresMs
    }
}
