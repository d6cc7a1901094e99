@testable import GatehouseCore
import Testing

// The compact storage under the purchase book: purchases stored once in a table, found by key,
// by owner and by the token of unowned ones through indexes of positions, and the timer queue
// over slots.

@Suite struct PurchaseTableBehaviour {
    static let alice = ProfileID(high: 1, low: 1, tag: 1)
    static let bob = ProfileID(high: 2, low: 2, tag: 1)
    static let token = AppAccountToken(high: 7, low: 7)

    static func held(_ id: String, owner: ProfileID? = nil, token: AppAccountToken? = nil, purchasedMs: Int64 = 1_000)
        -> HeldPurchase
    {
        HeldPurchase(OneTimePurchase(store: "test", transactionID: id, productID: "lifetime", purchasedMs: purchasedMs,
                                     price: 1, environment: .production), owner: owner, token: token)
    }

    static func key(_ id: String) -> PurchaseKey { PurchaseKey(store: "test", id: id) }

    @Test func storingAKeyAgainReplacesItInItsSlot() {
        var table = PurchaseTable<HeldPurchase>()
        let first = table.store(Self.held("a"))
        let second = table.store(Self.held("b"))
        #expect(first.slot == 0 && first.previous == nil && second.slot == 1 && second.previous == nil)
        let replaced = table.store(Self.held("a", purchasedMs: 2_000))
        #expect(replaced.slot == 0 && replaced.previous == Self.held("a"))
        #expect(table.count == 2)
        #expect(table[Self.key("a")]?.purchase.purchasedMs == 2_000)
        #expect(table[Self.key("c")] == nil)
        #expect(table.slot(of: PurchaseKey(store: "other", id: "a")) == nil)
    }

    @Test func manyPurchasesAreEachFoundByKey() {
        var table = PurchaseTable<HeldPurchase>()
        table.reserveCapacity(10)
        for index in 0..<3_000 { table.store(Self.held("p\(index)")) }
        #expect(table.count == 3_000)
        for index in stride(from: 0, to: 3_000, by: 7) { #expect(table.slot(of: Self.key("p\(index)")) == index) }
        #expect(table.slot(of: Self.key("p3000")) == nil)
    }

    @Test func equalityComparesPurchasesByKeyNotSlot() {
        var forwards = PurchaseTable<HeldPurchase>()
        var backwards = PurchaseTable<HeldPurchase>()
        backwards.reserveCapacity(3)
        for id in ["a", "b", "c"] { forwards.store(Self.held(id)) }
        for id in ["c", "b", "a"] { backwards.store(Self.held(id)) }
        #expect(forwards == backwards)
        #expect(forwards.values != backwards.values)
        backwards.store(Self.held("b", purchasedMs: 5))
        #expect(forwards != backwards)
        var shorter = PurchaseTable<HeldPurchase>()
        shorter.store(Self.held("a"))
        #expect(shorter != forwards && !shorter.isEmpty && PurchaseTable<HeldPurchase>().isEmpty)
    }

    @Test func eachOwnerListsWhatItOwns() {
        var table = PurchaseTable<HeldPurchase>()
        for (id, owner) in [("a1", Self.alice), ("b1", Self.bob), ("a2", Self.alice), ("a3", Self.alice)] {
            table.store(Self.held(id, owner: owner))
        }
        table.store(Self.held("loose"))
        #expect(Set(table.slots(ownedBy: Self.alice)) == [0, 2, 3])
        #expect(table.slots(ownedBy: Self.bob) == [1])
        #expect(table.ownsAny(Self.bob) && !table.ownsAny(ProfileID(high: 9, low: 9, tag: 1)))
    }

    @Test func movingTheFirstAMiddleOrTheLastPurchaseOfAnOwnerKeepsTheRest() {
        var table = PurchaseTable<HeldPurchase>()
        for index in 0..<4 { table.store(Self.held("p\(index)", owner: Self.alice)) }
        // The list starts with the first purchase stored; the others follow it.
        table.setOwner(Self.bob, at: 0)
        #expect(Set(table.slots(ownedBy: Self.alice)) == [1, 2, 3])
        table.setOwner(Self.bob, at: 2)
        table.setOwner(Self.bob, at: 1)
        #expect(table.slots(ownedBy: Self.alice) == [3])
        table.store(Self.held("p3", owner: Self.bob, purchasedMs: 9))  // a replacement that changes the owner
        #expect(table.slots(ownedBy: Self.alice).isEmpty && !table.ownsAny(Self.alice))
        #expect(Set(table.slots(ownedBy: Self.bob)) == [0, 1, 2, 3])
        #expect(table[Self.key("p3")]?.owner == Self.bob)
    }

    @Test func unownedPurchasesAreHeldUnderTheirTokenUntilOwned() {
        var table = PurchaseTable<HeldPurchase>()
        table.store(Self.held("t1", token: Self.token))
        table.store(Self.held("t2", token: Self.token))
        table.store(Self.held("loose"))
        table.store(Self.held("t3", owner: Self.bob, token: Self.token))
        #expect(Set(table.slots(heldUnder: Self.token)) == [0, 1])
        table.setOwner(Self.alice, at: 0)
        #expect(table.slots(heldUnder: Self.token) == [1])
        #expect(table.slots(ownedBy: Self.alice) == [0] && table.slots(ownedBy: Self.bob) == [3])
        table.setOwner(nil, at: 3)
        #expect(Set(table.slots(heldUnder: Self.token)) == [1, 3] && !table.ownsAny(Self.bob))
        #expect(table.slots(heldUnder: AppAccountToken(high: 8, low: 8)).isEmpty)
    }

    @Test func manyOwnersComeAndGo() {
        var table = PurchaseTable<HeldPurchase>()
        let owners = (0..<500).map { ProfileID(high: UInt64($0), low: 3, tag: 1) }
        for owner in owners {
            table.store(Self.held("g\(owner.high)", owner: owner))
            table.store(Self.held("h\(owner.high)", owner: owner))
        }
        for index in owners.indices where index % 2 == 0 {
            table.setOwner(nil, at: 2 * index)
            table.setOwner(owners[(index + 1) % owners.count], at: 2 * index + 1)
        }
        for (index, owner) in owners.enumerated() {
            var expected: Set<Int> = index % 2 == 0 ? [] : [2 * index, 2 * index + 1]
            if index % 2 == 1 { expected.insert(2 * (index - 1) + 1) }
            #expect(Set(table.slots(ownedBy: owner)) == expected, "owner \(index)")
        }
    }
}

@Suite struct DeadlineQueueBehaviour {
    @Test func theTopIsTheEarliestAndStaleEntriesAreDroppedFromTheTop() {
        var queue = DeadlineQueue<Int32>()
        for (ms, slot) in [(30, 0), (10, 1), (20, 2), (10, 3)] as [(Int64, Int32)] { queue.push(ms, slot) }
        #expect(queue.top?.ms == 10 && queue.count == 4)
        #expect(queue.entries(atOrBefore: 20).map(\.ms).sorted() == [10, 10, 20])
        // Slot 1 and 3 moved their deadlines: only slot 2's and slot 0's entries are live.
        let current: [Int32: Int64] = [0: 30, 2: 20]
        queue.dropStale { current[$0] }
        #expect(queue.top?.item == 2 && queue.top?.ms == 20 && queue.count == 2)
        queue.pop()
        queue.pop()
        queue.pop()
        #expect(queue.top == nil && queue.count == 0)
    }
}
