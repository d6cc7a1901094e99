/// The promotional grants of a project's profiles, at most one a profile and entitlement: they
/// lie in one ``ChunkedArray``, found by profile through a ``ListedKeyIndex`` (a profile holds a
/// few). A snapshot's capture costs the next grant a chunk, where a dictionary of dictionaries
/// (one heap table a granted profile) was copied whole by it; a campaign granting a million
/// profiles an entitlement is one entry and one index bucket each.
///
/// Removing a grant moves the last one into its place and re-points that one's entry.
struct GrantTable: Sendable {
    private struct Held: Sendable {
        let profile: ProfileID
        var grant: PromotionalGrant
    }

    private var held = ChunkedArray<Held>()
    private var byProfile = ListedKeyIndex<ProfileIDSlotHashing>()

    init() {}

    var count: Int { held.count }
    var isEmpty: Bool { held.isEmpty }

    /// The grants of `profile`, ordered by entitlement.
    func grants(of profile: ProfileID) -> [PromotionalGrant] {
        positions(of: profile).map { held[$0].grant }.sorted { $0.entitlementID < $1.entitlementID }
    }

    func grant(of profile: ProfileID, entitlement: String) -> PromotionalGrant? {
        position(of: profile, entitlement: entitlement).map { held[$0].grant }
    }

    /// Every grant with its profile, by profile, then entitlement (the order storage writes).
    var all: [(profile: ProfileID, grant: PromotionalGrant)] {
        held.map { ($0.profile, $0.grant) }.sorted {
            $0.profile != $1.profile ? $0.profile < $1.profile : $0.grant.entitlementID < $1.grant.entitlementID
        }
    }

    // MARK: Changes

    /// Stores `grant` for `profile`, replacing the profile's grant of the same entitlement.
    mutating func store(_ grant: PromotionalGrant, for profile: ProfileID) {
        if let position = position(of: profile, entitlement: grant.entitlementID) {
            held[position].grant = grant
            return
        }
        held.append(Held(profile: profile, grant: grant))
        byProfile.insert(profile, at: held.count - 1)
    }

    /// Takes every grant of `profile` out; answers them, ordered by entitlement.
    mutating func removeAll(of profile: ProfileID) -> [PromotionalGrant] {
        // From the back, so the last grant moved into a gap is never one still to be removed.
        let positions = positions(of: profile).sorted(by: >)
        let removed = positions.map { held[$0].grant }
        for position in positions {
            byProfile.remove(profile, at: position)
            let last = held.count - 1
            if position != last {
                byProfile.move(held[last].profile, from: last, to: position)
                held.swapAt(position, last)
            }
            held.removeLast()
        }
        return removed.sorted { $0.entitlementID < $1.entitlementID }
    }

    private func positions(of profile: ProfileID) -> [Int] {
        var positions: [Int] = []
        byProfile.forEachPosition(of: profile, listedBy: { held[$0].profile == profile }) { positions.append($0) }
        return positions
    }

    private func position(of profile: ProfileID, entitlement: String) -> Int? {
        byProfile.position(of: profile) { held[$0].profile == profile && held[$0].grant.entitlementID == entitlement }
    }
}

extension GrantTable: Equatable {
    /// The same grants of the same profiles, wherever each lies.
    static func == (lhs: GrantTable, rhs: GrantTable) -> Bool {
        lhs.count == rhs.count && lhs.held.allSatisfy { rhs.grant(of: $0.profile, entitlement: $0.grant.entitlementID) == $0.grant }
    }
}
