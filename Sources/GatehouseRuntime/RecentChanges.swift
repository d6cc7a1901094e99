import GatehouseCore
import GatehouseStorage

/// A project's latest changes and their log positions, kept until the log has made them durable,
/// so an answer can wait for exactly the newest change it shows (DESIGN.md: under fsync `always`
/// a read never shows a write that could still be lost, and every other read answers at once).
///
/// One entry per profile a change touched (its document moved), or one without a profile for a
/// change that touched none, in log order. A lookup walks back from the newest to the oldest
/// entry still held: those are the changes the last syncs have not covered, a group commit's
/// worth. Entries are dropped from the front once the log is durable past them, checked every
/// ``pruneInterval`` notes and at every lookup, so what is held follows the log's progress, not
/// the project's age.
struct RecentChanges {
    private struct Entry {
        let lsn: LSN
        let sequence: UInt64
        let profile: ProfileID?
    }

    private var entries: [Entry] = []
    private var head = 0
    private var notesSincePrune = 0
    /// The position of the project's newest config change (which every profile document and the
    /// offerings are read against), durable or not.
    private(set) var configLSN: LSN = 0

    static let pruneInterval = 256

    /// Remembers the change at `lsn`, numbered `sequence`, with what it did.
    mutating func note(lsn: LSN, sequence: UInt64, effects: ProjectState.BatchEffects, durableLSN: () -> LSN) {
        if effects.configChanged { configLSN = lsn }
        if effects.changedProfiles.isEmpty, effects.touchedProfiles.isEmpty {
            entries.append(Entry(lsn: lsn, sequence: sequence, profile: nil))
        } else {
            for profile in effects.changedProfiles { entries.append(Entry(lsn: lsn, sequence: sequence, profile: profile)) }
            for profile in effects.touchedProfiles { entries.append(Entry(lsn: lsn, sequence: sequence, profile: profile)) }
        }
        notesSincePrune += 1
        if notesSincePrune >= Self.pruneInterval { prune(durableUpTo: durableLSN()) }
    }

    /// Drops the entries the log has made durable.
    mutating func prune(durableUpTo durable: LSN) {
        notesSincePrune = 0
        while head < entries.count, entries[head].lsn <= durable { head += 1 }
        if head == entries.count {
            entries.removeAll(keepingCapacity: entries.capacity <= 4096)
            head = 0
        } else if head >= 1024, head * 2 >= entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }

    /// The position of the newest change held that touched `profile`, or 0 when every change
    /// that did is durable.
    func lsn(reflecting profile: ProfileID) -> LSN {
        var position = entries.count
        while position > head {
            position -= 1
            if entries[position].profile == profile { return entries[position].lsn }
        }
        return 0
    }

    /// The position of the change numbered `sequence` (or of the newest before it), or 0 when
    /// it is durable.
    func lsn(reflectingSequence sequence: UInt64) -> LSN {
        var position = entries.count
        while position > head {
            position -= 1
            if entries[position].sequence <= sequence { return entries[position].lsn }
        }
        return 0
    }

    /// Entries held (tests: what the log's progress lets go).
    var count: Int { entries.count - head }
}
