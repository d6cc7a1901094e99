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

    /// Histories or grants gathered at a time before they are lent: enough for the loads to
    /// overlap, few enough for what they gather to stay in the cache.
    static let gatheredPerBatch = 256

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
    ///
    /// The lists lie in no order the entries and their refs share, so each list costs cache
    /// misses: a batch of lists has its newest entries and their refs gathered first, in loops
    /// of independent loads whose misses overlap, and is then written from the cache. One list
    /// at a time waited for its entry, then for its ref (a third of the ledger's encoding).
    func forEachInOrder(_ history: (ProfileID, String, Int) -> Void, entry: (CurrencyLedger.LentEntry) -> Void) {
        let ordered = listsInOrder
        // Positions of one list's older entries, newest first as the links run.
        var chain: [UInt32] = []
        var newest: [Stored] = []
        for start in stride(from: 0, to: ordered.count, by: CurrencyLedger.gatheredPerBatch) {
            let batch = ordered[start..<min(start + CurrencyLedger.gatheredPerBatch, ordered.count)]
            newest.removeAll(keepingCapacity: true)
            for list in batch { newest.append(entries[Int(list.newest)]) }
            var refs = TextArena()
            let refOffsets = newest.map { refs.append($0.ref, from: text) }
            for (list, (last, lastRef)) in zip(batch, zip(newest, refOffsets)) {
                history(list.key.profile, codes[list.key.currency], Int(list.count))
                chain.removeAll(keepingCapacity: true)
                var position = last.previous
                while position != Self.none {
                    chain.append(position)
                    position = entries[Int(position)].previous
                }
                for position in chain.reversed() { lend(entries[Int(position)], ref: entries[Int(position)].ref, in: text, to: entry) }
                lend(last, ref: lastRef, in: refs, to: entry)
            }
        }
    }

    private func lend(_ stored: Stored, ref: Int, in arena: TextArena, to entry: (CurrencyLedger.LentEntry) -> Void) {
        stored.transaction.withUTF8(in: text) { transactionID in
            arena.withUTF8(at: ref) { ref in
                entry(CurrencyLedger.LentEntry(transactionID: transactionID, amount: stored.amount, balance: stored.balance,
                                               source: stored.source, ref: ref, atMs: stored.atMs))
            }
        }
    }
}

extension TermGrantTable {
    /// Every grant ordered by term (`String` order, bytes for ASCII terms): `grant`, then `line`
    /// for each of its lines. Like the histories (``CurrencyHistories/forEachInOrder(_:entry:)``), a batch of
    /// grants has its records and texts gathered before it is written.
    func forEachByTerm(_ grant: (CurrencyLedger.LentTermGrant) -> Void, line: (TermGrant.Line) -> Void) {
        let order = text.sortedPositions(of: grants.map(\.term))
        var gathered: [Stored] = []
        for start in stride(from: 0, to: order.count, by: CurrencyLedger.gatheredPerBatch) {
            gathered.removeAll(keepingCapacity: true)
            for slot in order[start..<min(start + CurrencyLedger.gatheredPerBatch, order.count)] { gathered.append(grants[slot]) }
            var texts = TextArena()
            let places = gathered.map { (term: texts.append($0.term, from: text), purchaseID: texts.append($0.purchaseID, from: text)) }
            for (stored, place) in zip(gathered, places) {
                texts.withUTF8(at: place.term) { term in
                    texts.withUTF8(at: place.purchaseID) { purchaseID in
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
}

extension TransactionName {
    /// The id's UTF-8 bytes, lent for the call: the arena's own for a spelled id.
    func withUTF8<Result>(in arena: TextArena, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        guard index != Self.spelled else { return arena.withUTF8(at: Int(sequence), body) }
        return Self.withSpelling(sequence: sequence, index: index, body)
    }
}
