@testable import GatehouseCore
import Testing

// KeyTimeline holds the idempotency keys a ledger answered and the store notifications a purchase
// book applied: keys in the order they came, found by key, forgotten oldest first, compacted once
// most are forgotten. Its owners' own suites (IdempotencyTableBehaviour, PurchaseBounds) test
// them through it; these test what both rely on.
@Suite struct KeyTimelineBehaviour {
    private static let window: Int64 = 1_000

    private func keys(_ timeline: KeyTimeline<Void>) -> [String] {
        timeline.positions.map { timeline.key(at: $0) }
    }

    @Test func keysAreFoundInTheOrderTheyCameAndARepeatIsNotAdded() {
        var timeline = KeyTimeline<Void>()
        for (index, key) in ["b", "a", "c"].enumerated() {
            let added = timeline.append(key, atMs: Int64(index), { _ in () })
            #expect(added == (index, true))
        }
        let repeated = timeline.append("a", atMs: 9, { _ in () })
        #expect(repeated == (1, false))
        #expect(keys(timeline) == ["b", "a", "c"])
        #expect(timeline[1].atMs == 1, "a repeat changes nothing")
        #expect(timeline.position(of: "c") == 2 && timeline.position(of: "d") == nil)
        #expect(timeline.positionsByKey.map { timeline.key(at: $0) } == ["a", "b", "c"])
    }

    @Test func keysOlderThanTheWindowAreForgottenOldestFirst() {
        var timeline = KeyTimeline<Void>()
        for index in 0..<10 { _ = timeline.append("k\(index)", atMs: Int64(index) * 300, { _ in () }) }
        // At 2,700 the window keeps 1,700 and later: k6 (1,800) on; k5 (1,500) goes.
        timeline.forget(olderThan: Self.window, at: 2_700)
        #expect(keys(timeline) == ["k6", "k7", "k8", "k9"])
        #expect(timeline.count == 4 && timeline.position(of: "k5") == nil && timeline.position(of: "k6") != nil)
        // Exactly the window old is kept.
        timeline.forget(olderThan: Self.window, at: 2_800)
        #expect(keys(timeline).first == "k6")
        // A forgotten key is new again.
        #expect(timeline.append("k0", atMs: 2_800, { _ in () }).added)
    }

    @Test func compactionKeepsTheLiveKeysTheirOrderAndTheirPayloadsText() {
        var timeline = KeyTimeline<Int>()
        let total = KeyTimeline<Int>.compactionFloor * 3
        for index in 0..<total {
            let atMs = Int64(index)
            _ = timeline.append("key-\(index)", atMs: atMs) { text in text.append("payload-\(index)") }
            timeline.forget(olderThan: 100, at: atMs) { offset, old, fresh in fresh.append(offset, from: old) }
        }
        // Only the last 101 are kept, and the arena was rebuilt on the way: it holds less than
        // half of the 22 bytes each key and payload took.
        #expect(timeline.count == 101)
        #expect(timeline.text.count < total * 22 / 2)
        for position in timeline.positions {
            let index = total - 101 + (position - timeline.positions.lowerBound)
            #expect(timeline.key(at: position) == "key-\(index)")
            #expect(timeline.text.string(at: timeline[position].payload) == "payload-\(index)")
            #expect(timeline.position(of: "key-\(index)") == position)
        }
        #expect(timeline.position(of: "key-\(total - 102)") == nil)
    }

    @Test func aReplacedEntryKeepsItsPlace() {
        var timeline = KeyTimeline<Int>()
        for index in 0..<3 { _ = timeline.append("k\(index)", atMs: Int64(index), { _ in index }) }
        timeline.replace(at: 1, atMs: 50, { _ in 7 })
        #expect(timeline.positions.map { timeline[$0].payload } == [0, 7, 2])
        #expect(timeline[1].atMs == 50 && timeline.key(at: 1) == "k1")
    }

    @Test func aCopyKeepsItsKeysWhileTheOriginalMovesOn() {
        // A snapshot's capture holds a copy of the state while the project goes on writing.
        var timeline = KeyTimeline<Void>()
        for index in 0..<3_000 { _ = timeline.append("n\(index)", atMs: Int64(index), { _ in () }) }
        let captured = timeline
        for index in 3_000..<6_000 {
            _ = timeline.append("n\(index)", atMs: Int64(index), { _ in () })
            timeline.forget(olderThan: 500, at: Int64(index))
        }
        #expect(captured.count == 3_000 && keys(captured) == (0..<3_000).map { "n\($0)" })
        #expect(captured.position(of: "n0") == 0 && captured.position(of: "n3000") == nil)
        #expect(timeline.count == 501 && timeline.position(of: "n0") == nil && timeline.position(of: "n5999") != nil)
    }
}

@Suite struct NotificationMemoryBehaviour {
    private static let day: Int64 = 86_400_000

    @Test func idsAreRememberedThirtyDaysFromTheNewest() {
        var memory = NotificationMemory()
        // Two thousand ids a day apart from the start: most are forgotten, so the store compacts.
        for index in 0..<2_000 {
            memory.insert(SeenNotification(key: "apple:\(index)", atMs: Int64(index) * Self.day))
        }
        #expect(memory.count == 31)
        #expect(memory.live.map(\.key) == (1_969..<2_000).map { "apple:\($0)" })
        #expect(memory.contains("apple:1969") && !memory.contains("apple:1968"))
        // A repeat inside the window is not remembered again; what its time puts out of the
        // window is forgotten first.
        memory.insert(SeenNotification(key: "apple:1990", atMs: 2_000 * Self.day))
        #expect(memory.count == 30 && memory.live.first?.key == "apple:1970" && memory.live.last?.key == "apple:1999")
    }
}
