/// A timer queue: a binary min-heap of deadlines, each naming the item it is for. An entry whose
/// item has since moved its deadline (renewed, expired, revoked) is stale and skipped, and
/// dropped once it reaches the top, so a change never has to find its old entry.
///
/// Generic so each kind of item is named as cheaply as it can be: the book's subscription
/// queue names a slot (a 16-byte entry), its grant queue a profile and an entitlement.
struct DeadlineQueue<Item: Sendable>: Sendable {
    struct Entry: Sendable {
        var ms: Int64
        var item: Item
    }

    private var heap = ChunkedArray<Entry>()

    var top: Entry? { heap.first }
    var count: Int { heap.count }

    mutating func reserveCapacity(_ count: Int) {
        heap.reserveCapacity(count)
    }

    mutating func push(_ ms: Int64, _ item: Item) {
        heap.append(Entry(ms: ms, item: item))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].ms < heap[parent].ms else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() {
        guard !heap.isEmpty else { return }
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].ms < heap[smallest].ms { smallest = left }
            if right < heap.count, heap[right].ms < heap[smallest].ms { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }

    /// Pops entries from the top while `current` says their item's deadline is no longer theirs.
    mutating func dropStale(current: (Item) -> Int64?) {
        while let top, current(top.item) != top.ms { pop() }
    }

    /// Every entry at or before `ms`, without changing the heap (visits only those and their
    /// children).
    func entries(atOrBefore ms: Int64) -> [Entry] {
        var result: [Entry] = []
        var pending = heap.isEmpty ? [] : [0]
        while let index = pending.popLast() {
            guard heap[index].ms <= ms else { continue }
            result.append(heap[index])
            let left = 2 * index + 1
            if left < heap.count { pending.append(left) }
            if left + 1 < heap.count { pending.append(left + 1) }
        }
        return result
    }
}
