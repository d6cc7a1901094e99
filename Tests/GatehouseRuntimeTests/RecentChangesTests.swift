@testable import GatehouseCore
import GatehouseStorage
@testable import GatehouseRuntime
import Testing

/// A project's changes not yet durable, by profile and by sequence, held only until the log has
/// made them durable.
@Suite struct RecentChangesBehaviour {
    static let alice = ProfileID(high: 1, low: 1, tag: 1)
    static let bob = ProfileID(high: 2, low: 2, tag: 1)

    static func effects(_ changed: [ProfileID] = [], touched: [ProfileID] = [], config: Bool = false) -> ProjectState.BatchEffects {
        ProjectState.BatchEffects(changedProfiles: changed, touchedProfiles: touched, configChanged: config)
    }

    @Test func aLookupFindsTheNewestChangeOfAProfileOrNothing() {
        var recent = RecentChanges()
        recent.note(lsn: 10, sequence: 5, effects: Self.effects([Self.alice])) { 0 }
        recent.note(lsn: 11, sequence: 6, effects: Self.effects([Self.bob])) { 0 }
        recent.note(lsn: 12, sequence: 7, effects: Self.effects(touched: [Self.alice])) { 0 }
        recent.note(lsn: 13, sequence: 8, effects: Self.effects(config: true)) { 0 }
        #expect(recent.lsn(reflecting: Self.alice) == 12, "attributes move a document too")
        #expect(recent.lsn(reflecting: Self.bob) == 11)
        #expect(recent.lsn(reflecting: ProfileID(high: 3, low: 3, tag: 1)) == 0)
        #expect(recent.configLSN == 13)
        #expect(recent.lsn(reflectingSequence: 6) == 11 && recent.lsn(reflectingSequence: 100) == 13)
        #expect(recent.lsn(reflectingSequence: 4) == 0, "older than anything held: durable")
        recent.prune(durableUpTo: 11)
        #expect(recent.lsn(reflecting: Self.bob) == 0 && recent.lsn(reflecting: Self.alice) == 12)
        #expect(recent.count == 2)
        recent.prune(durableUpTo: 13)
        #expect(recent.count == 0 && recent.lsn(reflecting: Self.alice) == 0)
        #expect(recent.configLSN == 13, "the config's position stays: every document is read against it")
    }

    @Test func whatIsHeldFollowsTheLogsProgressNotTheProjectsAge() {
        var recent = RecentChanges()
        var durable: LSN = 0
        for lsn in LSN(1)...100_000 {
            recent.note(lsn: lsn, sequence: lsn, effects: Self.effects([Self.alice])) { durable }
            // The log makes each change durable 100 changes later.
            durable = lsn > 100 ? lsn - 100 : 0
        }
        #expect(recent.count <= 100 + RecentChanges.pruneInterval)
        #expect(recent.lsn(reflecting: Self.alice) == 100_000)
    }
}
