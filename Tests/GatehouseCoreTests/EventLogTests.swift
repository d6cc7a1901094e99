import GatehouseBase
@testable import GatehouseCore
import Testing

/// The feed keeps the events of the last 7 days, at most the newest `--feed-max-events`
/// (PROTOCOL.md, "The event feed").
@Suite struct EventRetention {
    static let profile = ProfileID(high: 1, low: 1, tag: 1)
    static let day: Int64 = 86_400_000
    static let week = Retention.standard.feedAgeMs

    static func log(count: Int, atMs: (Int) -> Int64) -> EventLog {
        var log = EventLog()
        for index in 0..<count {
            log.append(Event(cursor: UInt64(index + 1), index: 0, type: .subscriberAlias, profileID: profile,
                             customerUserID: nil, atMs: atMs(index), details: []))
        }
        return log
    }

    @Test func eventsOlderThanSevenDaysAreForgottenHoweverFew() {
        var log = Self.log(count: 10) { index in index < 4 ? 0 : 2 * Self.day }
        log.prune(nowMs: 8 * Self.day, keptAgeMs: Self.week, keptCountMax: 1_000)
        #expect(log.map(\.cursor) == Array(5...10), "the 4 older than 7 days go")
        log.prune(nowMs: 2 * Self.day + Self.week, keptAgeMs: Self.week, keptCountMax: 1_000)
        #expect(log.count == 6, "exactly 7 days old is kept")
        log.prune(nowMs: 2 * Self.day + Self.week + 1, keptAgeMs: Self.week, keptCountMax: 1_000)
        #expect(log.isEmpty)
    }

    @Test func onlyTheNewestUpToTheCapAreKept() {
        var log = Self.log(count: 2_500) { Int64($0) }
        log.prune(nowMs: 2_500, keptAgeMs: Self.week, keptCountMax: 1_000)
        #expect(log.count == 1_000)
        #expect(log.first?.cursor == 1_501 && log.last?.cursor == 2_500, "the newest are kept")
        #expect(log.events(after: 0, limit: 2).map(\.cursor) == [1_501, 1_502], "cursor 0 reads from the oldest kept")
        #expect(log.events(after: 1_600, limit: 1).map(\.cursor) == [1_601])
    }

    /// The feed in a steady flow, one event a second (a moved clock) for three times its window:
    /// once events age out as fast as they come, every write still leaves the kept events where
    /// they lie. A write may copy the one chunk it lands in (a snapshot's capture holds the feed)
    /// and nothing else: the work per write does not grow with the feed.
    @Test func aSteadyFlowAcrossTheWindowMovesNoKeptEvent() {
        let window: Int64 = 20_000_000
        var log = EventLog()
        var worst = 0
        for second in 1...3 * Int(window / 1_000) {
            let now = Int64(second) * 1_000
            let captured = log
            let before = Set(log.entryChunkAddresses.compactMap { $0 })
            log.append(Event(cursor: UInt64(second), index: 0, type: .renewal, profileID: Self.profile, customerUserID: nil,
                             atMs: now, details: [EventDetail("n", .int(Int64(second)))]))
            log.prune(nowMs: now, keptAgeMs: window, keptCountMax: 10_000_000)
            let made = Set(log.entryChunkAddresses.compactMap { $0 }).subtracting(before)
            worst = max(worst, made.count)
            withExtendedLifetime(captured) {}
        }
        #expect(worst <= 2, "a write made \(worst) chunks anew")
        #expect(log.count == Int(window / 1_000) + 1, "the window's events are kept")
        #expect(log.first?.atMs == 2 * window, "and only those")
        #expect(log.detailBytesHeld < 3 * log.storedDetailsCount, "forgotten details are given back")
    }

    @Test func pagesAfterACursorAreExclusiveOrderedAndLimited() {
        let log = Self.log(count: 10) { Int64($0) }
        #expect(log.events(after: 0, limit: 3).map(\.cursor) == [1, 2, 3])
        #expect(log.events(after: 3, limit: 100).map(\.cursor) == [4, 5, 6, 7, 8, 9, 10])
        #expect(log.events(after: 10, limit: 5).isEmpty)
        #expect(log.events(after: 99, limit: 5).isEmpty)
    }
}

/// The feed keeps every event's details in one byte array; reading an event gives back exactly
/// what was appended, before and after pruning frees the details of the events it drops.
@Suite struct EventLogStorage {
    static let day: Int64 = 86_400_000
    static let week = Retention.standard.feedAgeMs

    static func event(_ cursor: Int, index: UInt32 = 0, atMs: Int64 = 0) -> Event {
        Event(cursor: UInt64(cursor), index: index, type: .renewal, profileID: cursor.isMultiple(of: 3) ? nil : EventRetention.profile,
              customerUserID: cursor.isMultiple(of: 2) ? "user-\(cursor)" : nil, atMs: atMs,
              details: [EventDetail("n", .int(Int64(cursor))), EventDetail("s", .string(String(repeating: "x", count: cursor % 7)))])
    }

    @Test func eventsReadBackAsAppended() {
        let events = (1...50).flatMap { cursor in (0..<UInt32(cursor % 3)).map { Self.event(cursor, index: $0) } }
        let log = EventLog(events: events)
        #expect(log.count == events.count)
        #expect(Array(log) == events)
        #expect(log.events == events)
        #expect(log[3].details == events[3].details)
        #expect(log.events(after: 10, limit: 4) == Array(events.filter { $0.cursor > 10 }.prefix(4)))
    }

    @Test func pruningDropsTheOldestAndKeepsTheRestIntact() {
        var log = EventLog()
        let count = 120_000
        for cursor in 1...count { log.append(Self.event(cursor)) }
        log.prune(nowMs: 0, keptAgeMs: Self.week, keptCountMax: 100_000)
        #expect(log.count == 100_000)
        #expect(log.first == Self.event(20_001))
        #expect(log.last == Self.event(count))
        #expect(log[50_000] == Self.event(70_001))
        log.append(Self.event(count + 1))
        #expect(log.last == Self.event(count + 1))
    }

    @Test func pruningGivesBackTheDetailsOfForgottenEvents() {
        var log = EventLog()
        for cursor in 1...100_000 { log.append(Self.event(cursor, atMs: Int64(cursor))) }
        let held = log.detailBytesHeld
        log.prune(nowMs: 100_000, keptAgeMs: 10_000, keptCountMax: .max)
        #expect(log.count == 10_001)
        #expect(log.detailBytesHeld < held / 5, "only about the kept events' details are held")
        #expect(log.detailBytesHeld >= log.storedDetailsCount)
        #expect(Array(log) == (90_000...100_000).map { Self.event($0, atMs: Int64($0)) })
    }

    @Test func logsWithTheSameEventsAreEqualWhereverTheirDetailsLie() {
        var pruned = EventLog()
        for cursor in 1...115_000 { pruned.append(Self.event(cursor)) }
        pruned.prune(nowMs: 0, keptAgeMs: Self.week, keptCountMax: 100_000)
        let fresh = EventLog(events: Array(pruned))
        #expect(fresh == pruned)
        #expect(fresh.detailBytesHeld < pruned.detailBytesHeld)
        #expect(EventLog(events: Array(pruned.dropLast())) != pruned)
    }
}

/// An event's id is `evt_<cursor>_<index>`, kept as the two numbers and spelled on demand; an id
/// read back must be exactly the spelling of its cursor, so it is written again byte for byte.
@Suite struct EventIDs {
    @Test func idIsSpelledFromCursorAndIndex() {
        let event = Event(cursor: 42, index: 3, type: .renewal, profileID: nil, customerUserID: nil, atMs: 0, details: [])
        #expect(event.id == "evt_42_3")
        #expect(Event(id: "evt_42_3", cursor: 42, type: .renewal, profileID: nil, customerUserID: nil, atMs: 0, details: []) == event)
    }

    @Test(arguments: [("evt_7_0", 0), ("evt_7_12", 12), ("evt_7_4294967295", 4_294_967_295)])
    func canonicalIDsParse(_ id: String, _ index: Int) {
        #expect(Event.index(inID: id, cursor: 7) == UInt32(index))
    }

    @Test(arguments: ["evt_8_0", "evt_07_0", "evt_7_01", "evt_7_+1", "evt_7_", "evt_7", "evt__0", "evt_7_0 ", "Evt_7_0",
                      "evt_7_4294967296", "evt_7_99999999999999999999", "", "evt_7_-1", "evt_7_0_0"])
    func anyOtherTextIsRefused(_ id: String) {
        #expect(Event.index(inID: id, cursor: 7) == nil)
    }

    @Test func largeCursorsParse() {
        #expect(Event.index(inID: "evt_18446744073709551615_2", cursor: .max) == 2)
        #expect(Event.index(inID: "evt_18446744073709551616_2", cursor: .max) == nil)
    }
}

/// The feed holds detail names the rules use as one byte each, and gives every detail back in
/// its packed form byte for byte, names it does not know and very long ones included.
@Suite struct EventDetailNameInterning {
    static func roundTrip(_ details: [EventDetail]) -> (packed: [UInt8], held: [UInt8], back: [UInt8]) {
        let packed = EventDetailCoding.pack(details)
        var held: [UInt8] = [0xAB]
        EventDetailNames.intern(packed, into: &held)
        return (packed, held, EventDetailNames.expand(held[1...]))
    }

    /// The codes are stored in snapshots (docs/data-format.md): a name never changes code.
    @Test func theNameCodesNeverChange() {
        let names = EventDetailNames.names.map { String(decoding: $0, as: UTF8.self) }
        #expect(names == [
            "store", "product_id", "original_transaction_id", "transaction_id", "expires_ms", "period_type", "environment",
            "entitlement", "reason", "merged_from", "transferred_from", "transferred_to", "original_transaction_ids",
            "currency", "amount", "balance", "source", "ref",
        ])
    }

    @Test func everyKnownNameIsOneByteAndComesBack() {
        let names = EventDetailNames.names.map { String(decoding: $0, as: UTF8.self) }
        let details = names.map { EventDetail($0, .string("v")) }
        let (packed, held, back) = Self.roundTrip(details)
        #expect(back == packed)
        #expect(held.count - 1 == packed.count - names.reduce(0) { $0 + $1.utf8.count })
    }

    @Test func otherNamesAndEveryKindComeBackAsPacked() {
        let long = String(repeating: "n", count: 300)
        let details = [
            EventDetail("merged_from", .profiles([ProfileID(high: 1, low: 2, tag: 3)])),
            EventDetail("custom", .int(-7)),
            EventDetail(long, .strings(["a", "store"])),
            EventDetail("store", .bool(true)),
            EventDetail(String(repeating: "m", count: 127), .string("")),
        ]
        let (packed, _, back) = Self.roundTrip(details)
        #expect(back == packed)
        #expect(EventDetailCoding.unpack(back) == details)
        #expect(Self.roundTrip([]).back == EventDetailCoding.pack([]))
    }
}

/// The log's stored form (snapshot bodies): each event's fields and the details as held, end to
/// end. Loading it back checks everything: a damaged form is an error, never a trap or a log
/// holding events out of order or malformed details.
@Suite struct EventLogStoredForm {
    static func export(_ log: EventLog) -> (events: [EventLog.StoredEvent], details: [UInt8]) {
        var events: [EventLog.StoredEvent] = []
        log.forEachStored { events.append($0) }
        return (events, Array(log.storedDetails))
    }

    static func load(_ events: [EventLog.StoredEvent], _ details: [UInt8]) throws(ByteReaderError) -> EventLog {
        var loader = EventLog.Loader(details: details, count: events.count, offset: 100)
        for (number, event) in events.enumerated() { try loader.append(event, at: number) }
        return try loader.finish()
    }

    @Test func aLogComesBackFromItsStoredForm() throws {
        let events = (1...40).flatMap { cursor in (0..<UInt32(cursor % 3)).map { EventLogStorage.event(cursor, index: $0) } }
        let log = EventLog(events: events)
        let (stored, details) = Self.export(log)
        #expect(stored.count == events.count)
        #expect(stored.reduce(0) { $0 + $1.detailsCount } == details.count)
        #expect(try Self.load(stored, details) == log)
        #expect(try Self.load([], []) == EventLog())
    }

    @Test func aPrunedLogStoresOnlyItsKeptEvents() throws {
        var log = EventLog()
        for cursor in 1...115_000 { log.append(EventLogStorage.event(cursor)) }
        log.prune(nowMs: 0, keptAgeMs: EventLogStorage.week, keptCountMax: 100_000)
        let (stored, details) = Self.export(log)
        #expect(stored.count == 100_000)
        #expect(details.count < log.detailBytesHeld)
        #expect(try Self.load(stored, details) == log)
    }

    @Test func eventsOutOfOrderAreRefused() {
        let (stored, details) = Self.export(EventLog(events: [EventLogStorage.event(1), EventLogStorage.event(2)]))
        #expect(throws: ByteReaderError.self) { try Self.load(stored.reversed(), details) }
        var twice = stored
        twice[1].cursor = 1
        #expect(throws: ByteReaderError.self) { try Self.load(twice, details) }
    }

    @Test func detailsThatDoNotAddUpAreRefused() {
        let (stored, details) = Self.export(EventLog(events: [EventLogStorage.event(1), EventLogStorage.event(2)]))
        for change in [-1, 1] {
            var wrong = stored
            wrong[0].detailsCount += change
            #expect(throws: ByteReaderError.self) { try Self.load(wrong, details) }
        }
        var empty = stored
        empty[0].detailsCount = 0
        #expect(throws: ByteReaderError.self) { try Self.load(empty, details) }
        #expect(throws: ByteReaderError.self) { try Self.load(stored, details + [0]) }
        #expect(throws: ByteReaderError.self) { try Self.load(stored, Array(details.dropLast())) }
    }

    @Test func aNameCodePastTheTableIsRefused() throws {
        let event = EventLog.StoredEvent(cursor: 1, index: 0, type: .renewal, profileID: nil, customerUserID: nil, atMs: 0,
                                         detailsCount: 4)
        let unknown = UInt8(0x80 + EventDetailNames.names.count)
        #expect(throws: ByteReaderError.self) { try Self.load([event], [1, unknown, 5, 1]) }
        #expect(throws: ByteReaderError.self) { try Self.load([event], [1, 0x80, 9, 1]) }
        #expect(try Self.load([event], [1, unknown - 1, 5, 1]).first?.details == [EventDetail("ref", .bool(true))])
    }
}

/// Details written straight into the feed (a balance change's) are held exactly as the same
/// details appended as an event, and the codes the rules write name the right details.
@Suite struct HeldDetailsWriterTests {
    @Test func everyKnownNameIsItsPlaceInTheTable() {
        let spelled = ["store", "product_id", "original_transaction_id", "transaction_id", "expires_ms", "period_type",
                       "environment", "entitlement", "reason", "merged_from", "transferred_from", "transferred_to",
                       "original_transaction_ids", "currency", "amount", "balance", "source", "ref"]
        #expect(EventDetailNames.Known.allCases.count == spelled.count)
        for (name, spelling) in zip(EventDetailNames.Known.allCases, spelled) {
            #expect(EventDetailNames.names[Int(name.rawValue)] == Array(spelling.utf8), "\(name)")
        }
    }

    @Test(arguments: [nil, "daily reward", String(repeating: "é", count: 300)] as [String?])
    func writtenDetailsAreHeldAsTheSameDetailsAppended(_ reason: String?) {
        let profile = ProfileID(high: 0x1234, low: 0x5678, tag: 0x9A)
        var details: [EventDetail] = [
            EventDetail("transaction_id", .string("vct_12_0")), EventDetail("currency", .string("COINS")),
            EventDetail("amount", .int(-250)), EventDetail("balance", .int(2_000_000_000)),
            EventDetail("source", .string("transaction")), EventDetail("ref", .string("key-1")),
        ]
        if let reason { details.append(EventDetail("reason", .string(reason))) }
        var appended = EventLog()
        appended.append(Event(cursor: 12, index: 0, type: .virtualCurrencyTransaction, profileID: profile,
                              customerUserID: "user-1", atMs: 99, details: details))
        var written = EventLog()
        written.append(cursor: 12, index: 0, type: .virtualCurrencyTransaction, profileID: profile, customerUserID: "user-1",
                       atMs: 99) { held in
            held.count(reason == nil ? 6 : 7)
            held.string(.transactionID, "vct_12_0")
            held.string(.currency, "COINS")
            held.int(.amount, -250)
            held.int(.balance, 2_000_000_000)
            held.string(.source, "transaction")
            held.string(.ref, "key-1")
            if let reason { held.string(.reason, reason) }
        }
        #expect(written.detailBytesHeld == appended.detailBytesHeld)
        #expect(written == appended)
        #expect(written[0].details == details)
    }
}
