/// Which purchases of one kind each holder holds: a profile the purchases it owns, an app
/// account token the purchases that carry it while no profile owns them (a purchase with
/// neither is found only by its key). Positions are those of the purchases in their
/// ``PurchaseTable``.
///
/// It stores no holder ids, which is what a dictionary from holder to list would spend most of
/// its bytes on (a 24-byte profile id in each of up to twice as many buckets as profiles, and a
/// list per profile). A holder's first purchase is found through a ``SlotIndex`` that reads the
/// owner (or token) from the purchase itself; the others follow it in a list linked through the
/// purchases, one `Int32` each. About 12 bytes a purchase in all.
///
/// So that a lookup recognises its holder, a purchase must store the holder it is filed under:
/// file a purchase once it is stored, and unfile it before its owner or token changes.
struct HolderLists<Held: KeyedPurchase>: Sendable {
    /// Per owner, the position of its first purchase.
    private var firstByOwner = SlotIndex<ProfileID?>()
    /// Per token, the position of the first unowned purchase carrying it.
    private var firstByToken = SlotIndex<AppAccountToken?>()
    /// Per position, the next purchase of the same holder, or `end`.
    private var next = ChunkedArray<Int32>()
    private static var end: Int32 { -1 }

    /// What the owner index reads from a purchase.
    private static func owner(_ held: Held) -> ProfileID? { held.owner }

    /// What the token index reads: only an unowned purchase is held under its token.
    private static func unownedToken(_ held: Held) -> AppAccountToken? { held.owner == nil ? held.token : nil }

    /// Makes room for the link of the purchase just stored at the end of `elements`.
    mutating func append() {
        next.append(Self.end)
    }

    mutating func reserveCapacity(_ count: Int) {
        next.reserveCapacity(count)
    }

    func positions(ownedBy owner: ProfileID, in elements: some SlotElements<Held>) -> [Int] {
        list(from: firstByOwner.position(of: owner, in: elements, key: Self.owner))
    }

    func ownsAny(_ owner: ProfileID, in elements: some SlotElements<Held>) -> Bool {
        firstByOwner.position(of: owner, in: elements, key: Self.owner) != nil
    }

    func positions(heldUnder token: AppAccountToken, in elements: some SlotElements<Held>) -> [Int] {
        list(from: firstByToken.position(of: token, in: elements, key: Self.unownedToken))
    }

    /// Files the purchase at `position` under the owner, else the token, it stores.
    mutating func file(_ position: Int, in elements: some SlotElements<Held>) {
        let held = elements[position]
        if held.owner != nil {
            Self.link(position, under: Self.owner(held), in: &firstByOwner, next: &next, elements: elements, key: Self.owner)
        } else if held.token != nil {
            Self.link(position, under: Self.unownedToken(held), in: &firstByToken, next: &next, elements: elements,
                      key: Self.unownedToken)
        }
    }

    /// Takes the purchase at `position` out of the list of the holder it still stores.
    mutating func unfile(_ position: Int, in elements: some SlotElements<Held>) {
        let held = elements[position]
        if held.owner != nil {
            Self.unlink(position, under: Self.owner(held), in: &firstByOwner, next: &next, elements: elements, key: Self.owner)
        } else if held.token != nil {
            Self.unlink(position, under: Self.unownedToken(held), in: &firstByToken, next: &next, elements: elements,
                        key: Self.unownedToken)
        }
    }

    /// A purchase joins its holder's list second, so the first (what the index names) stays.
    private static func link<Key: Hashable>(
        _ position: Int, under key: Key, in index: inout SlotIndex<Key>, next: inout ChunkedArray<Int32>, elements: some SlotElements<Held>,
        key keyOf: (Held) -> Key
    ) {
        if let first = index.position(of: key, in: elements, key: keyOf) {
            next[position] = next[first]
            next[first] = Int32(position)
        } else {
            next[position] = end
            _ = index.insert(position, in: elements, key: keyOf)
        }
    }

    private static func unlink<Key: Hashable>(
        _ position: Int, under key: Key, in index: inout SlotIndex<Key>, next: inout ChunkedArray<Int32>, elements: some SlotElements<Held>,
        key keyOf: (Held) -> Key
    ) {
        guard let first = index.position(of: key, in: elements, key: keyOf) else { return }
        let after = next[position]
        if first == position {
            if after == end {
                index.remove(position, in: elements, key: keyOf)
            } else {
                index.move(position, to: Int(after), key: key)
            }
        } else {
            var previous = first
            while next[previous] != Int32(position) {
                guard next[previous] != end else { return }
                previous = Int(next[previous])
            }
            next[previous] = after
        }
        next[position] = end
    }

    private func list(from first: Int?) -> [Int] {
        var positions: [Int] = []
        var position = first.map(Int32.init) ?? Self.end
        while position != Self.end {
            positions.append(Int(position))
            position = next[Int(position)]
        }
        return positions
    }
}
