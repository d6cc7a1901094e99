extension PurchaseTable {
    /// The slots ordered by key (store, then id, as ``PurchaseKey`` orders them), so a table
    /// writes the same bytes whatever order it learnt its purchases in. No key is compared as a
    /// `String` in the sort: the slots are grouped by store (a project has a few) and each
    /// store's ids are sorted by ``TextArena/sortedPositions(of:)``. Sorting a
    /// million slots by `PurchaseKey` built two keys, and compared their strings, at every step.
    var slotsByKey: [Int] {
        var stores = CodeList()
        var slotsOfStore: [[Int]] = []
        for slot in values.indices {
            let number = Int(stores.intern(values[slot].key.store))
            if number == slotsOfStore.count { slotsOfStore.append([]) }
            slotsOfStore[number].append(slot)
        }
        var ordered: [Int] = []
        ordered.reserveCapacity(values.count)
        for number in stores.codes.indices.sorted(by: { stores.codes[$0] < stores.codes[$1] }) {
            let slots = slotsOfStore[number]
            var ids = TextArena()
            let offsets = slots.map { ids.append(values[$0].key.id) }
            ordered.append(contentsOf: ids.sortedPositions(of: offsets).lazy.map { slots[$0] })
        }
        return ordered
    }
}

extension PurchaseBook {
    /// The subscriptions' slots ordered by key (``PurchaseTable/slotsByKey``, specialised here
    /// for the concrete table: called generically from another module, every purchase it reads
    /// would be copied through the generic witness).
    public var subscriptionSlotsByKey: [Int] { subscriptions.slotsByKey }

    /// The one-time purchases' slots ordered by key (``PurchaseTable/slotsByKey``).
    public var oneTimePurchaseSlotsByKey: [Int] { oneTimePurchases.slotsByKey }
}
