@testable import GatehouseCore
import Testing

/// The slot index finds positions by a key it reads from the elements, and stays right through
/// growth, removals (which shift later entries back) and the moves of a swap-remove.
@Suite struct SlotIndexBehaviour {
    /// Keys that, when `colliding`, hash to one of three values on purpose: removals must then
    /// shift whole runs, around the end of the table too.
    struct Colliding: Hashable {
        let value: Int
        let colliding: Bool
        func hash(into hasher: inout Hasher) { hasher.combine(colliding ? value % 3 : value) }
    }

    @Test func insertedPositionsAreFoundByKey() {
        let elements = (0..<1_000).map { "key-\($0)" }
        var index = SlotIndex<String>()
        let inserted = elements.indices.map { position in index.insert(position, in: elements, key: { $0 }) }
        #expect(inserted.allSatisfy { $0 })
        #expect(index.count == 1_000)
        for position in elements.indices { #expect(index.position(of: elements[position], in: elements, key: { $0 }) == position) }
        #expect(index.position(of: "missing", in: elements, key: { $0 }) == nil)
        #expect(SlotIndex<String>().position(of: "key-1", in: elements, key: { $0 }) == nil)
    }

    @Test func aKeyIndexedTwiceIsRefused() {
        let elements = ["a", "b", "a"]
        var index = SlotIndex<String>()
        let inserted = (0..<3).map { position in index.insert(position, in: elements, key: { $0 }) }
        #expect(inserted == [true, true, false])
        #expect(index.count == 2)
        #expect(index.position(of: "a", in: elements, key: { $0 }) == 0)
    }

    /// Random inserts and swap-removes against a dictionary of the same keys.
    @Test(arguments: [false, true])
    func swapRemovalsKeepEveryKeyFindable(colliding: Bool) {
        var elements: [Colliding] = []
        var index = SlotIndex<Colliding>()
        var generator = SystemRandomNumberGenerator()
        var next = 0
        for step in 0..<4_000 {
            if elements.isEmpty || Int.random(in: 0..<3, using: &generator) > 0 {
                elements.append(Colliding(value: next, colliding: colliding))
                next += 1
                let inserted = index.insert(elements.count - 1, in: elements, key: { $0 })
                #expect(inserted)
            } else {
                let position = Int.random(in: elements.indices, using: &generator)
                index.remove(position, in: elements, key: { $0 })
                let last = elements.count - 1
                if position != last {
                    index.move(last, to: position, key: elements[last])
                    elements.swapAt(position, last)
                }
                elements.removeLast()
            }
            if step.isMultiple(of: 500) || step == 3_999 {
                #expect(index.count == elements.count)
                for position in elements.indices {
                    #expect(index.position(of: elements[position], in: elements, key: { $0 }) == position)
                }
            }
        }
        #expect(index.position(of: Colliding(value: next, colliding: colliding), in: elements, key: { $0 }) == nil)
    }

    @Test func reservedCapacityHoldsWhatIsAlreadyIndexed() {
        let elements = Array(0..<100)
        var index = SlotIndex<Int>()
        for position in 0..<50 { _ = index.insert(position, in: elements, key: { $0 }) }
        index.reserveCapacity(100, in: elements, key: { $0 })
        for position in 50..<100 { _ = index.insert(position, in: elements, key: { $0 }) }
        #expect((0..<100).allSatisfy { index.position(of: $0, in: elements, key: { $0 }) == $0 })
    }
}
