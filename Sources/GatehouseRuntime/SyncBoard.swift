public import GatehouseCore
import Synchronization

/// What a connection's thread needs to answer "nothing changed" to a `sync`, or "not modified" to
/// a RevenueCat revalidation, without entering the project's actor (DESIGN.md, "Lock-free
/// reads"): each profile's cursors and the project's config cursor, published by the actor after
/// every change.
///
/// The cursors are split over 64 shards, each a small lock around a hash table, so the actor's
/// updates and many readers rarely meet on one lock (an uncontended lock is one atomic
/// exchange). The config cursor is an atomic. A cursor is published when its change is applied,
/// durable or not: a reader only ever concludes "nothing changed" from it, which is true of
/// everything durable; anything newer sends the request to the actor, which waits for the log.
///
/// The board starts empty and learns a profile when it changes or when a `sync` for it goes
/// through the actor: a start-up does not walk every profile to fill it (a million profiles
/// took 0.2 s on the critical path of a restart), and it holds only the profiles in use since.
public final class SyncBoard: Sendable {
    private static let shardCount = 64
    private let shards: [Shard]

    private final class Shard: Sendable {
        let table: Mutex<[ProfileID: Cursors]>
        init(_ table: [ProfileID: Cursors]) { self.table = Mutex(table) }
    }
    private let config = Atomic<UInt64>(0)

    /// A profile's two cursors: the last change `sync` reports, and the last change of anything
    /// its document shows (its attributes and last-seen time too, which `sync` does not report).
    struct Cursors: Sendable {
        var sync: UInt64
        var document: UInt64
    }

    init(configCursor: UInt64) {
        shards = (0..<Self.shardCount).map { _ in Shard([:]) }
        config.store(configCursor, ordering: .releasing)
    }

    private static func shard(of id: ProfileID) -> Int { Int(truncatingIfNeeded: id.low & UInt64(shardCount - 1)) }

    /// Whether the profile (by its own id, not an alias) has no change after `cursor`, the config
    /// included. `nil`: the board does not know the id (an alias, another project's, unknown, or
    /// a profile neither changed nor synced through the actor since the start).
    public func nothingChanged(for id: ProfileID, after cursor: UInt64) -> Bool? {
        guard let profileCursor = shards[Self.shard(of: id)].table.withLock({ $0[id]?.sync }) else { return nil }
        return profileCursor <= cursor && config.load(ordering: .acquiring) <= cursor
    }

    /// The document cursor of the profile whose own id is `id`; `nil` when the board does not
    /// know it (as for ``nothingChanged(for:after:)``).
    public func documentCursor(of id: ProfileID) -> UInt64? {
        shards[Self.shard(of: id)].table.withLock { $0[id]?.document }
    }

    /// The config's cursor: the last `config.put`.
    public var configCursor: UInt64 { config.load(ordering: .acquiring) }

    /// Learns a profile's cursors (called by the actor, which holds it, for a read the board
    /// could not answer).
    func learn(_ id: ProfileID, from state: borrowing ProjectState) {
        guard let cursors = state.profiles.cursors(of: id) else { return }
        shards[Self.shard(of: id)].table.withLock { $0[id] = Cursors(sync: cursors.sync, document: cursors.document) }
    }

    /// Publishes what one batch changed (called by the actor, after applying it).
    func publish(_ effects: ProjectState.BatchEffects, from state: ProjectState) {
        for id in effects.removedProfiles {
            _ = shards[Self.shard(of: id)].table.withLock { $0.removeValue(forKey: id) }
        }
        for id in effects.changedProfiles { learn(id, from: state) }
        for id in effects.touchedProfiles { learn(id, from: state) }
        if effects.configChanged { config.store(state.configCursor, ordering: .releasing) }
    }
}
