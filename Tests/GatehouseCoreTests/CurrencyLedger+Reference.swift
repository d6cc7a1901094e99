@testable import GatehouseCore

/// The ledger's walks in the plain form snapshots were once written from: whole values, built
/// and sorted. The tests hold the stored-form walks the snapshot writer uses to these.
extension CurrencyLedger {
    /// Every history, oldest entry first, in profile then currency order.
    func forEachHistory(_ body: (ProfileID, String, [CurrencyEntry]) -> Void) {
        let codes = lists.codes
        let ordered = lists.lists.sorted { a, b in
            if a.key.profile != b.key.profile { return a.key.profile < b.key.profile }
            return codes[a.key.currency] < codes[b.key.currency]
        }
        for list in ordered {
            body(list.key.profile, codes[list.key.currency], lists.all(of: list))
        }
    }

    /// Every term grant ordered by term.
    var termGrantsByTerm: [TermGrant] { grants.sortedByTerm }
}

extension TermGrantTable {
    /// Every grant ordered by term as `String`s order (bytes, for ASCII terms).
    var sortedByTerm: [TermGrant] {
        let all = self.all
        return text.sortedPositionsComparingWhole(of: grants.map(\.term)).map { all[$0] }
    }
}
