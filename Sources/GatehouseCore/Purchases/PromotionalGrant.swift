/// An entitlement the project's backend gave directly (`entitlement.grant`), not bought in a
/// store: for life when `expiresMs` is `nil`, otherwise until `expiresMs` (exclusive).
/// `entitlement.revoke` marks it revoked; it is kept so the entitlement stays listed. A profile
/// holds at most one grant per entitlement: a new grant replaces the old one.
public struct PromotionalGrant: Sendable, Equatable {
    public let entitlementID: String
    public let grantedMs: Int64
    /// `nil`: for life.
    public let expiresMs: Int64?
    public var revoked: Bool
    /// The server has reported its expiry (`EXPIRATION`), so the timer no longer waits for it.
    public var lapsed: Bool

    public init(entitlementID: String, grantedMs: Int64, expiresMs: Int64?, revoked: Bool = false, lapsed: Bool = false) {
        self.entitlementID = entitlementID
        self.grantedMs = grantedMs
        self.expiresMs = expiresMs
        self.revoked = revoked
        self.lapsed = lapsed
    }

    /// Not revoked and, unless for life, `nowMs` before `expiresMs`.
    public func isLive(nowMs: Int64) -> Bool {
        guard !revoked else { return false }
        guard let expiresMs else { return true }
        return nowMs < expiresMs
    }

    /// When the timer must report the grant's expiry; `nil` once reported, revoked, or for life.
    public var nextDeadlineMs: Int64? {
        guard !revoked, !lapsed else { return nil }
        return expiresMs
    }

    /// Which of two grants of one entitlement a merge keeps: a live one over a revoked one, then
    /// the one lasting longer (for life is longest), then the newer.
    static func keeps(_ a: PromotionalGrant, over b: PromotionalGrant) -> Bool {
        if a.revoked != b.revoked { return !a.revoked }
        switch (a.expiresMs, b.expiresMs) {
        case (nil, .some): return true
        case (.some, nil): return false
        case (let x?, let y?) where x != y: return x > y
        default: return a.grantedMs >= b.grantedMs
        }
    }
}
