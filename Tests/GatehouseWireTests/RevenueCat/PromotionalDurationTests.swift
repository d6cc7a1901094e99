import GatehouseCore
import GatehouseWire
import Testing

// HTTP.md, the promotional endpoint's `duration`, and the `rc_promo_<entitlement>_<duration>`
// name a grant shows under: the name is derived from the grant's start and end, as the inverse
// of the end the endpoint computes.

@Suite("Promotional durations")
struct PromotionalDurationTests {
    private static let dayMs: Int64 = 86_400_000
    private static let starts: [Int64] = [0, 1, 1_795_946_400_000, 1_795_946_400_123, 951_782_399_999, 4_102_444_800_000]

    @Test func theNamesAreRevenueCats() {
        #expect(PromotionalDuration.allCases.map(\.rawValue) == [
            "daily", "three_day", "weekly", "monthly", "two_month", "three_month", "six_month", "yearly", "lifetime",
        ])
    }

    @Test func lengthsAreRevenueCatsWholeDays() {
        let days = PromotionalDuration.allCases.compactMap { $0.lengthMs.map { $0 / Self.dayMs } }
        #expect(days == [1, 3, 7, 31, 61, 92, 183, 365])
        #expect(PromotionalDuration.allCases.allSatisfy { ($0.lengthMs ?? 0) % Self.dayMs == 0 })
        #expect(PromotionalDuration.lifetime.lengthMs == nil)
    }

    @Test func aMonthIsThirtyOneDaysWhateverTheCalendar() {
        // 2027-02-01T00:00:00Z: February has 28 days, the grant still lasts 31.
        let february: Int64 = 1_801_267_200_000
        #expect(PromotionalDuration.monthly.end(fromMs: february) == february + 31 * Self.dayMs)
    }

    @Test func theNameOfAGrantIsTheDurationItWasMadeWith() {
        for start in Self.starts {
            for duration in PromotionalDuration.allCases {
                #expect(PromotionalDuration(startMs: start, endMs: duration.end(fromMs: start)) == duration, "\(duration) from \(start)")
            }
        }
    }

    @Test func anEndNoDurationReachesIsCustom() {
        let start: Int64 = 1_795_946_400_000
        #expect(PromotionalDuration(startMs: start, endMs: start + 31 * Self.dayMs + 1) == nil)
        #expect(PromotionalDuration(startMs: start, endMs: start + 31 * Self.dayMs - 1) == nil)
        #expect(PromotionalDuration(startMs: start, endMs: start + 30 * Self.dayMs) == nil)
        #expect(PromotionalDuration(startMs: start, endMs: start) == nil)
        #expect(PromotionalDuration(startMs: start, endMs: start - Self.dayMs) == nil)
    }

    @Test func aGrantForLifeIsLifetimeAndHasNoEnd() {
        #expect(PromotionalDuration.lifetime.end(fromMs: 1_795_946_400_000) == nil)
        #expect(PromotionalDuration(startMs: 1_795_946_400_000, endMs: nil) == .lifetime)
    }

    @Test func anEndPastTheLastInstantIsTheLastInstant() {
        #expect(PromotionalDuration.yearly.end(fromMs: .max - 1) == .max)
    }

    @Test func aGrantShowsAsRcPromoWithItsEntitlementAndDuration() {
        let start: Int64 = 1_795_946_400_000
        #expect(PromotionalDuration.productIdentifier(of: PromotionalGrant(entitlementID: "pro", grantedMs: start,
                                                                          expiresMs: start + 7 * Self.dayMs)) == "rc_promo_pro_weekly")
        #expect(PromotionalDuration.productIdentifier(of: PromotionalGrant(entitlementID: "Team Pro", grantedMs: start,
                                                                          expiresMs: start + 5)) == "rc_promo_Team Pro_custom")
        #expect(PromotionalDuration.productIdentifier(of: PromotionalGrant(entitlementID: "pro", grantedMs: start,
                                                                          expiresMs: nil)) == "rc_promo_pro_lifetime")
    }
}
