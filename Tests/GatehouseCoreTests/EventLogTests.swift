@testable import GatehouseCore
import Testing

/// The feed keeps at least the last 100,000 events or 7 days, whichever is more (PROTOCOL.md).
@Suite struct EventRetention {
    static let profile = ProfileID(high: 1, low: 1, tag: 1)
    static let day: Int64 = 86_400_000

    static func log(count: Int, atMs: (Int) -> Int64) -> EventLog {
        var log = EventLog()
        for index in 0..<count {
            log.append(Event(id: "evt_\(index)_0", cursor: UInt64(index + 1), type: .subscriberAlias, profileID: profile,
                             customerUserID: nil, atMs: atMs(index), details: []))
        }
        return log
    }

    @Test func oldEventsBeyondTheNewestHundredThousandAreDropped() {
        var log = Self.log(count: 115_000) { _ in 0 }
        log.prune(nowMs: 8 * Self.day)
        #expect(log.events.count == EventLog.keptCountMin)
        #expect(log.events.first?.cursor == 15_001, "the newest are kept")
    }

    @Test func eventsOfTheLastSevenDaysAreKeptWhateverTheirNumber() {
        var log = Self.log(count: 115_000) { index in index < 5_000 ? 0 : 2 * Self.day }
        log.prune(nowMs: 8 * Self.day)
        #expect(log.events.count == 110_000, "only the 5,000 older than 7 days go")
        #expect(log.events.allSatisfy { 8 * Self.day - $0.atMs <= EventLog.keptAgeMs })
    }

    @Test func aHundredThousandAreKeptHoweverOld() {
        var log = Self.log(count: EventLog.keptCountMin) { _ in 0 }
        log.prune(nowMs: 365 * Self.day)
        #expect(log.events.count == EventLog.keptCountMin)
    }

    @Test func pagesAfterACursorAreExclusiveOrderedAndLimited() {
        let log = Self.log(count: 10) { Int64($0) }
        #expect(log.events(after: 0, limit: 3).map(\.cursor) == [1, 2, 3])
        #expect(log.events(after: 3, limit: 100).map(\.cursor) == [4, 5, 6, 7, 8, 9, 10])
        #expect(log.events(after: 10, limit: 5).isEmpty)
        #expect(log.events(after: 99, limit: 5).isEmpty)
    }
}
