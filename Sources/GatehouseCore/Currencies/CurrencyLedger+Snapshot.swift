/// What a snapshot reads of a ledger: its histories and term grants in the order a snapshot
/// writes them, each part lent straight from the dense tables (``CurrencyHistories``,
/// ``TermGrantTable``). Building a `CurrencyEntry` array per history and a `TermGrant` per term
/// (strings and arrays of their own, a million of each) took most of the ledger's encoding.
extension CurrencyLedger {
    /// One history entry as the ledger stores it; its text is lent for the call only.
    public struct LentEntry {
        public let transactionID: UnsafeBufferPointer<UInt8>
        public let amount: Int64
        public let balance: Int64
        public let source: CurrencySource
        public let ref: UnsafeBufferPointer<UInt8>
        public let atMs: Int64
    }

    /// One term grant as the ledger stores it, without its lines; its text is lent for the call
    /// only.
    public struct LentTermGrant {
        public let term: UnsafeBufferPointer<UInt8>
        public let store: String
        public let purchaseID: UnsafeBufferPointer<UInt8>
        public let profile: ProfileID?
        public let lineCount: Int

        /// Also for a whole `TermGrant`'s parts, so one writer serves both.
        public init(term: UnsafeBufferPointer<UInt8>, store: String, purchaseID: UnsafeBufferPointer<UInt8>, profile: ProfileID?,
                    lineCount: Int)
        {
            self.term = term
            self.store = store
            self.purchaseID = purchaseID
            self.profile = profile
            self.lineCount = lineCount
        }
    }

    /// Every history in profile then currency order (as ``forEachHistory(_:)``): `history` with
    /// its profile, currency and number of entries, then `entry` for each entry, oldest first.
    public func forEachStoredHistory(_ history: (ProfileID, String, Int) -> Void, entry: (LentEntry) -> Void) {
        lists.forEachInOrder(history, entry: entry)
    }

    /// How many terms have a grant.
    public var termGrantCount: Int { grants.count }

    /// Every term grant ordered by term (as ``termGrantsByTerm``): `grant`, then `line` for each
    /// of its lines in order.
    public func forEachStoredTermGrant(_ grant: (LentTermGrant) -> Void, line: (TermGrant.Line) -> Void) {
        grants.forEachByTerm(grant, line: line)
    }
}

extension CurrencyHistories {
    /// The lists ordered by profile, then by currency code as `String`s order (each code's rank
    /// is found once, not compared as a string at every step of the sort).
    var listsInOrder: [List] {
        let codes = codes.codes
        var rank = [Int](repeating: 0, count: codes.count)
        for (place, number) in codes.indices.sorted(by: { codes[$0] < codes[$1] }).enumerated() { rank[number] = place }
        return lists.sorted { a, b in
            a.key.profile != b.key.profile ? a.key.profile < b.key.profile : rank[Int(a.key.currency)] < rank[Int(b.key.currency)]
        }
    }

    /// Every list in ``listsInOrder``: `history`, then `entry` for each of its entries, oldest
    /// first.
    func forEachInOrder(_ history: (ProfileID, String, Int) -> Void, entry: (CurrencyLedger.LentEntry) -> Void) {
        // Positions of one list's entries, newest first as the links run.
        var chain: [UInt32] = []
        for list in listsInOrder {
            history(list.key.profile, codes[list.key.currency], Int(list.count))
            chain.removeAll(keepingCapacity: true)
            var position = list.newest
            while position != Self.none {
                chain.append(position)
                position = entries[Int(position)].previous
            }
            for position in chain.reversed() {
                let stored = entries[Int(position)]
                stored.transaction.withUTF8(in: text) { transactionID in
                    text.withUTF8(at: stored.ref) { ref in
                        entry(CurrencyLedger.LentEntry(transactionID: transactionID, amount: stored.amount, balance: stored.balance,
                                                       source: stored.source, ref: ref, atMs: stored.atMs))
                    }
                }
            }
        }
    }
}

extension TermGrantTable {
    /// Every grant ordered by term (as ``sortedByTerm``): `grant`, then `line` for each of its
    /// lines.
    func forEachByTerm(_ grant: (CurrencyLedger.LentTermGrant) -> Void, line: (TermGrant.Line) -> Void) {
        for slot in text.sortedPositions(of: grants.map(\.term)) {
            let stored = grants[slot]
            text.withUTF8(at: stored.term) { term in
                text.withUTF8(at: stored.purchaseID) { purchaseID in
                    grant(CurrencyLedger.LentTermGrant(term: term, store: stores[stored.store], purchaseID: purchaseID,
                                                       profile: stored.owned ? stored.profile : nil,
                                                       lineCount: Int(stored.lineCount)))
                }
            }
            for number in 0..<Int(stored.lineCount) {
                let stored = number == 0 ? stored.firstLine : moreLines[stored.moreLines + number - 1]
                line(TermGrant.Line(currency: currencies[stored.currency], granted: stored.granted, owedBack: stored.owedBack,
                                    takenBack: stored.takenBack))
            }
        }
    }
}

extension TransactionName {
    /// The id's UTF-8 bytes, lent for the call: the arena's own for a spelled id.
    func withUTF8<Result>(in arena: TextArena, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        guard index != Self.spelled else { return arena.withUTF8(at: Int(sequence), body) }
        var spelling = Self.spell(sequence: sequence, index: index)
        return spelling.withUTF8(body)
    }
}
