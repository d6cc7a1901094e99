/// A purchase as the book holds it: found by its key, with its owner and the app account token
/// it carries.
public protocol KeyedPurchase: Sendable, Equatable {
    var key: PurchaseKey { get }
    var owner: ProfileID? { get set }
    var token: AppAccountToken? { get }
}

extension HeldSubscription: KeyedPurchase {}
extension HeldPurchase: KeyedPurchase {}

/// The purchases of one kind, each stored once in an array and found by key, by owner, or by the
/// token of unowned ones through indexes of positions (a ``SlotIndex`` and ``HolderLists``):
/// about 20 bytes of index a purchase, where a dictionary from key to purchase spent a bucket
/// holding both, twice over. A purchase keeps its slot for life: the book never removes one, so
/// the timer queue can name a subscription by its slot.
///
/// Read-only outside the book. Equality compares the purchases by key, not their slots: a table
/// rebuilt from a snapshot (sorted by key) equals the one that wrote it.
public struct PurchaseTable<Held: KeyedPurchase>: Sendable, Equatable {
    /// Every purchase, in slot order (the order the book learnt them): not an order to show.
    public private(set) var values = ChunkedArray<Held>()
    private var byKey = SlotIndex<PurchaseKey>()
    private var holders = HolderLists<Held>()

    init() {}

    public var count: Int { values.count }
    public var isEmpty: Bool { values.isEmpty }

    public subscript(key: PurchaseKey) -> Held? {
        slot(of: key).map { values[$0] }
    }

    public static func == (a: PurchaseTable, b: PurchaseTable) -> Bool {
        a.count == b.count && a.values.allSatisfy { b[$0.key] == $0 }
    }

    // MARK: For the book

    /// What the key index reads from a purchase (a function, not a key path: a key path would be
    /// applied through the runtime, copying the whole purchase at every probe).
    private static func key(_ held: Held) -> PurchaseKey { held.key }

    func slot(of key: PurchaseKey) -> Int? {
        byKey.position(of: key, in: values, key: Self.key)
    }

    subscript(slot slot: Int) -> Held { values[slot] }

    func slots(ownedBy owner: ProfileID) -> [Int] { holders.positions(ownedBy: owner, in: values) }

    func slots(heldUnder token: AppAccountToken) -> [Int] { holders.positions(heldUnder: token, in: values) }

    func ownsAny(_ owner: ProfileID) -> Bool { holders.ownsAny(owner, in: values) }

    /// Inserts a purchase or replaces the one with its key; answers its slot and what it replaced.
    @discardableResult
    mutating func store(_ held: Held) -> (slot: Int, previous: Held?) {
        guard let slot = slot(of: held.key) else {
            guard let slot = insert(held) else { preconditionFailure("a key the table did not hold") }
            return (slot, nil)
        }
        let previous = values[slot]
        change(slot, movesHolder: previous.owner != held.owner || previous.token != held.token) { $0 = held }
        return (slot, previous)
    }

    /// Adds a purchase under a key the table does not hold, and answers its slot; `nil`, and
    /// nothing changes, when it does. A table rebuilt from storage inserts each purchase without
    /// looking its key up first: one hash of the two strings and one probe, not two of each.
    mutating func insert(_ held: Held) -> Int? {
        values.append(held)
        guard byKey.insert(values.count - 1, in: values, key: Self.key) else {
            values.removeLast()
            return nil
        }
        holders.append()
        holders.file(values.count - 1, in: values)
        return values.count - 1
    }

    /// Changes only the owner (the key, and so the slot, stay).
    mutating func setOwner(_ owner: ProfileID?, at slot: Int) {
        change(slot, movesHolder: values[slot].owner != owner) { $0.owner = owner }
    }

    /// Room for `count` purchases in all, allocated once (a book rebuilt from a snapshot).
    mutating func reserveCapacity(_ count: Int) {
        values.reserveCapacity(count)
        holders.reserveCapacity(count)
        byKey.reserveCapacity(count, in: values, key: Self.key)
    }

    /// Changes a stored purchase in place. The holder lists recognise a holder by what the
    /// purchase stores, so one that changes holder leaves its list first and joins the new one
    /// after.
    private mutating func change(_ slot: Int, movesHolder: Bool, _ body: (inout Held) -> Void) {
        if movesHolder { holders.unfile(slot, in: values) }
        body(&values[slot])
        if movesHolder { holders.file(slot, in: values) }
    }
}
