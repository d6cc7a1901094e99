/// The grants of store terms, densely: one record per term in an array (a term is never
/// forgotten), its term and purchase id in a ``TextArena``, its store and currencies as numbers,
/// its first line inline and any others in a shared array; a ``TextKeyIndex`` finds a term.
/// A `[String: TermGrant]` held about 270 bytes a grant (a heap string for the term, an array
/// for the lines) and rehashed every term at each doubling.
///
/// A grant stored again (a claim, a refund) is changed in place: its purchase id and extra
/// lines reuse their room when they fit.
struct TermGrantTable: Sendable {
    struct Line: Sendable {
        let granted: Int64
        let owedBack: Int64
        let takenBack: Int64
        let currency: UInt16
    }

    struct Stored: Sendable {
        /// Offsets in ``text``.
        let term: Int
        var purchaseID: Int
        /// Meaningful only when ``owned``.
        var profile: ProfileID
        var firstLine: Line
        /// Where lines 2… start in ``moreLines``, or -1.
        var moreLines: Int
        var lineCount: UInt16
        var store: UInt16
        var owned: Bool
    }

    private(set) var grants = ChunkedArray<Stored>()
    private(set) var moreLines: [Line] = []
    private var index = TextKeyIndex()
    private(set) var text = TextArena()
    private(set) var currencies = CodeList()
    private(set) var stores = CodeList()

    init() {}

    var count: Int { grants.count }

    subscript(term: String) -> TermGrant? {
        slot(of: term).map { grant(at: $0) }
    }

    /// Every grant, in the order the terms were first stored.
    var all: [TermGrant] { grants.indices.map { grant(at: $0) } }

    private func slot(of term: String) -> Int? {
        var bytes = term
        return bytes.withUTF8 { utf8 in find(term, utf8, hash: TextKeyIndex.hash(term, utf8)).position }
    }

    private func find(_ term: String, _ utf8: UnsafeBufferPointer<UInt8>, hash: UInt32) -> (position: Int?, bucket: Int) {
        index.find(term, utf8, hash: hash, in: text) { grants[$0].term }
    }

    private func grant(at slot: Int) -> TermGrant {
        let stored = grants[slot]
        var lines: [TermGrant.Line] = []
        lines.reserveCapacity(Int(stored.lineCount))
        for number in 0..<Int(stored.lineCount) {
            let line = number == 0 ? stored.firstLine : moreLines[stored.moreLines + number - 1]
            lines.append(TermGrant.Line(currency: currencies[line.currency], granted: line.granted, owedBack: line.owedBack,
                                        takenBack: line.takenBack))
        }
        return TermGrant(term: text.string(at: stored.term),
                         purchase: PurchaseKey(store: stores[stored.store], id: text.string(at: stored.purchaseID)),
                         profile: stored.owned ? stored.profile : nil, lines: lines)
    }

    // MARK: Changes

    /// Stores a grant under its term, replacing what the term held.
    mutating func store(_ grant: TermGrant) {
        var bytes = grant.term
        bytes.withUTF8 { utf8 in
            let hash = TextKeyIndex.hash(grant.term, utf8)
            let (position, bucket) = find(grant.term, utf8, hash: hash)
            if let position {
                replace(at: position, with: grant)
                return
            }
            precondition(grants.count < Int(UInt32.max) - 1, "too many term grants")
            index.insert(hash: hash, position: grants.count, at: bucket)
            let term = text.append(utf8: utf8)
            grants.append(Stored(term: term, purchaseID: text.append(grant.purchase.id), profile: ProfileID(high: 0, low: 0, tag: 0),
                                 firstLine: Line(granted: 0, owedBack: 0, takenBack: 0, currency: 0), moreLines: -1, lineCount: 0,
                                 store: 0, owned: false))
            fill(grants.count - 1, with: grant)
        }
    }

    /// Room for `count` grants in all, allocated once (a ledger read back).
    mutating func reserveCapacity(_ count: Int) {
        grants.reserveCapacity(count)
        index.reserveCapacity(count)
    }

    private mutating func replace(at slot: Int, with grant: TermGrant) {
        var id = grant.purchase.id
        let sameID = id.withUTF8 { text.hasBytes(at: grants[slot].purchaseID, $0) }
        if !sameID { grants[slot].purchaseID = text.append(grant.purchase.id) }
        fill(slot, with: grant)
    }

    /// Everything but the term and the purchase id; extra lines overwrite the old ones when they
    /// fit, else go to the end of ``moreLines``.
    private mutating func fill(_ slot: Int, with grant: TermGrant) {
        precondition(grant.lines.count <= Int(UInt16.max), "too many lines in a term grant")
        let lines = grant.lines.map { line in
            Line(granted: line.granted, owedBack: line.owedBack, takenBack: line.takenBack, currency: currencies.intern(line.currency))
        }
        var stored = grants[slot]
        stored.store = stores.intern(grant.purchase.store)
        stored.owned = grant.profile != nil
        stored.profile = grant.profile ?? ProfileID(high: 0, low: 0, tag: 0)
        stored.firstLine = lines.first ?? Line(granted: 0, owedBack: 0, takenBack: 0, currency: 0)
        if lines.count > 1 {
            if stored.moreLines < 0 || lines.count > Int(stored.lineCount) {
                stored.moreLines = moreLines.count
                moreLines.append(contentsOf: lines.dropFirst())
            } else {
                for (number, line) in lines.dropFirst().enumerated() { moreLines[stored.moreLines + number] = line }
            }
        }
        stored.lineCount = UInt16(lines.count)
        grants[slot] = stored
    }
}
