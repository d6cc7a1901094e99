public import GatehouseCore

/// The lengths RevenueCat's promotional endpoint takes by name (its `duration`), and the name a
/// grant shows under in the subscriber object, `rc_promo_<entitlement>_<name>` (HTTP.md).
///
/// RevenueCat counts every one of them in whole days, the month ones included: monthly is 31
/// days, two months 61, three months 92, six months 183, a year 365, whatever the calendar says.
/// So do these, so that a backend moving from RevenueCat gets the same end for the same request.
/// `lifetime` is Gatehouse's grant for life (no end), where RevenueCat writes 200 years.
///
/// The name a grant shows is derived from its start and end, as the inverse of
/// ``end(fromMs:)``: the duration whose end from the grant's start is exactly the grant's end,
/// `lifetime` without an end, ``customName`` for any other end (an `end_time_ms` grant).
public enum PromotionalDuration: String, Sendable, CaseIterable {
    case daily
    case threeDay = "three_day"
    case weekly
    case monthly
    case twoMonth = "two_month"
    case threeMonth = "three_month"
    case sixMonth = "six_month"
    case yearly
    case lifetime

    /// What a grant whose end matches no named duration shows.
    public static let customName = "custom"

    private static let dayMs: Int64 = 86_400_000

    /// `nil` for `lifetime`.
    public var lengthMs: Int64? {
        switch self {
        case .daily: Self.dayMs
        case .threeDay: 3 * Self.dayMs
        case .weekly: 7 * Self.dayMs
        case .monthly: 31 * Self.dayMs
        case .twoMonth: 61 * Self.dayMs
        case .threeMonth: 92 * Self.dayMs
        case .sixMonth: 183 * Self.dayMs
        case .yearly: 365 * Self.dayMs
        case .lifetime: nil
        }
    }

    /// When a grant of this duration made at `startMs` ends; `nil` (for life) for `lifetime`.
    /// An end past `Int64.max` is `Int64.max`.
    public func end(fromMs startMs: Int64) -> Int64? {
        guard let lengthMs else { return nil }
        let (end, overflowed) = startMs.addingReportingOverflow(lengthMs)
        return overflowed ? .max : end
    }

    /// The duration a grant from `startMs` to `endMs` (`nil`: for life) was made with; `nil` when
    /// no duration ends there.
    public init?(startMs: Int64, endMs: Int64?) {
        guard let endMs else {
            self = .lifetime
            return
        }
        guard let match = Self.allCases.first(where: { $0.end(fromMs: startMs) == endMs }) else { return nil }
        self = match
    }

    /// `rc_promo_<entitlement>_<duration>`, the product identifier `grant` shows under.
    public static func productIdentifier(of grant: PromotionalGrant) -> String {
        let name = PromotionalDuration(startMs: grant.grantedMs, endMs: grant.expiresMs)?.rawValue ?? customName
        return "rc_promo_\(grant.entitlementID)_\(name)"
    }
}
