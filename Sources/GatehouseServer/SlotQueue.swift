/// Answers of one connection that must go out in request order. Each request takes the next
/// slot; slots are filled in any order and released strictly from the front.
struct SlotQueue {
    private var slots: [[UInt8]?] = []
    private var head = 0
    /// The number of the first slot still held (slot numbers never repeat on a connection).
    private(set) var firstSlot: UInt64 = 0

    var count: Int { slots.count - head }
    var isEmpty: Bool { count == 0 }

    /// Takes the next slot, empty until ``fill(_:with:)``.
    mutating func reserve() -> UInt64 {
        slots.append(nil)
        return firstSlot + UInt64(count - 1)
    }

    /// Takes the next slot with its answer already known.
    mutating func append(_ answer: [UInt8]) {
        slots.append(answer)
    }

    mutating func fill(_ slot: UInt64, with answer: [UInt8]) {
        precondition(slot >= firstSlot && slot < firstSlot + UInt64(count), "answer for a slot not held")
        let index = head + Int(slot - firstSlot)
        precondition(slots[index] == nil, "slot answered twice")
        slots[index] = answer
    }

    /// Gives up the first slot, whose answer its owner wrote out itself.
    mutating func releaseFirst() {
        precondition(head < slots.count && slots[head] == nil, "released a slot not held or already answered")
        head += 1
        firstSlot += 1
    }

    /// Moves every answer ready at the front into `output`, in order.
    mutating func drainReady(into output: inout [UInt8]) {
        while head < slots.count, let answer = slots[head] {
            output.append(contentsOf: answer)
            slots[head] = nil
            head += 1
            firstSlot += 1
        }
        if head == slots.count {
            slots.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64, head * 2 > slots.count {
            slots.removeFirst(head)
            head = 0
        }
    }
}
