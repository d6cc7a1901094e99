import GatehouseBase
@testable import GatehouseCore
import Testing

// The grants of a project's profiles lie in one chunked array found by profile; a removal moves
// the last grant into the gap. What it answers must be what a dictionary of dictionaries did.
@Suite struct GrantTableBehaviour {
    private static func id(_ n: Int) -> ProfileID { ProfileID(high: UInt64(n), low: UInt64(n) &* 31, tag: 7) }

    private static func grant(_ entitlement: String, _ ms: Int64) -> PromotionalGrant {
        PromotionalGrant(entitlementID: entitlement, grantedMs: ms, expiresMs: ms + 1_000)
    }

    private static func expectSame(_ table: GrantTable, _ model: [ProfileID: [String: PromotionalGrant]], profiles: Int) {
        #expect(table.count == model.values.reduce(0) { $0 + $1.count })
        for n in 0..<profiles {
            let expected = (model[id(n)] ?? [:]).values.sorted { $0.entitlementID < $1.entitlementID }
            #expect(table.grants(of: id(n)) == expected)
            for entitlement in ["a", "b", "c"] {
                let expectedGrant: PromotionalGrant? = model[id(n)]?[entitlement]
                #expect(table.grant(of: id(n), entitlement: entitlement) == expectedGrant)
            }
        }
        var all: [(profile: ProfileID, grant: PromotionalGrant)] = []
        for (profile, byEntitlement) in model {
            for grant in byEntitlement.values { all.append((profile, grant)) }
        }
        all.sort { $0.profile != $1.profile ? $0.profile < $1.profile : $0.grant.entitlementID < $1.grant.entitlementID }
        let listed = table.all
        #expect(listed.map(\.profile) == all.map(\.profile))
        #expect(listed.map(\.grant) == all.map(\.grant))
    }

    @Test(arguments: [1, 2, 3])
    func randomGrantsAndRemovalsMatchADictionary(seed: UInt64) {
        var random = RandomSourceGenerator(SeededRandomSource(seed: seed))
        let profiles = 40
        var table = GrantTable()
        var model: [ProfileID: [String: PromotionalGrant]] = [:]
        var captured: [(GrantTable, [ProfileID: [String: PromotionalGrant]])] = []
        for step in 0..<2_000 {
            let profile = Self.id(Int.random(in: 0..<profiles, using: &random))
            if Int.random(in: 0..<5, using: &random) > 0 {
                // A new grant, or one replacing the profile's grant of that entitlement.
                let grant = Self.grant(["a", "b", "c"].randomElement(using: &random)!, Int64(step))
                table.store(grant, for: profile)
                model[profile, default: [:]][grant.entitlementID] = grant
            } else {
                let removed = table.removeAll(of: profile)
                #expect(removed == (model.removeValue(forKey: profile) ?? [:]).values.sorted { $0.entitlementID < $1.entitlementID })
            }
            if step.isMultiple(of: 200) {
                Self.expectSame(table, model, profiles: profiles)
                captured.append((table, model))
            }
        }
        Self.expectSame(table, model, profiles: profiles)
        // Copies taken along the way (as a snapshot's capture takes one) still answer as then.
        for (copy, then) in captured { Self.expectSame(copy, then, profiles: profiles) }
    }

    @Test func tablesWithTheSameGrantsAreEqualWhereverTheyLie() {
        var forward = GrantTable()
        var backward = GrantTable()
        for n in 0..<10 { forward.store(Self.grant("a", Int64(n)), for: Self.id(n)) }
        for n in (0..<10).reversed() { backward.store(Self.grant("a", Int64(n)), for: Self.id(n)) }
        #expect(forward == backward)
        backward.store(Self.grant("a", 99), for: Self.id(3))
        #expect(forward != backward)
    }
}
