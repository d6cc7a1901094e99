public import GatehouseCore
import Synchronization

/// Whoever wants pushes about profiles: a connection, in the server.
public protocol WatchTarget: AnyObject, Sendable {
    /// Unique among live targets.
    var watchID: UInt64 { get }
    /// Hands one push line (ending in `\n`) to the target; it sends it after what it already has.
    func push(_ line: [UInt8])
    /// The hub ended a watch itself (its profile merged into another or was deleted).
    func watchEnded(_ profile: ProfileID, in hub: WatchHub)
}

/// A project's watchers (`watch`): per profile, who watches it and the cursor each was last told
/// about. The actor computes the pushes of each change here, in the order changes are logged,
/// and they go out once the change is durable, so a watcher that keeps up gets every change
/// exactly once, in order.
public final class WatchHub: Sendable {
    private struct Watch {
        let target: any WatchTarget
        var lastCursor: UInt64
    }

    private let watches = Mutex<[ProfileID: [UInt64: Watch]]>([:])

    init() {}

    var isEmpty: Bool { watches.withLock { $0.isEmpty } }

    /// Starts (or restarts) watching `profile` from `cursor`.
    func add(_ target: any WatchTarget, profile: ProfileID, cursor: UInt64) {
        watches.withLock { $0[profile, default: [:]][target.watchID] = Watch(target: target, lastCursor: cursor) }
    }

    /// Stops one watch; answers whether there was one.
    @discardableResult
    public func remove(_ targetID: UInt64, profile: ProfileID) -> Bool {
        watches.withLock { watches in
            guard watches[profile]?.removeValue(forKey: targetID) != nil else { return false }
            if watches[profile]?.isEmpty == true { watches[profile] = nil }
            return true
        }
    }

    /// The pushes one applied batch makes: for each watched profile it changed (every watched
    /// profile when the config changed), the parts changed since each watcher's last cursor. A
    /// profile that is gone (merged into another, deleted) tells its watchers `identity` once,
    /// and its watches end.
    func pushes(for effects: ProjectState.BatchEffects, in state: ProjectState) -> [(any WatchTarget, [UInt8])] {
        watches.withLock { watches in
            guard !watches.isEmpty else { return [] }
            var result: [(any WatchTarget, [UInt8])] = []
            var candidates = effects.changedProfiles.filter { watches[$0] != nil }
            if effects.configChanged { candidates = Array(watches.keys).sorted() }
            for id in candidates {
                guard let profile = state.profiles.profile(id), profile.id == id else { continue }
                for (targetID, watch) in watches[id] ?? [:] {
                    var parts = profile.cursors.changed(after: watch.lastCursor)
                    if state.configCursor > watch.lastCursor { parts.append(.offerings) }
                    guard !parts.isEmpty else { continue }
                    let cursor = max(profile.cursor, state.configCursor)
                    watches[id]?[targetID]?.lastCursor = cursor
                    result.append((watch.target, Self.line(id, cursor: cursor, parts: parts)))
                }
            }
            for id in effects.removedProfiles {
                guard let gone = watches.removeValue(forKey: id) else { continue }
                for watch in gone.values {
                    watch.target.watchEnded(id, in: self)
                    result.append((watch.target, Self.line(id, cursor: state.sequence, parts: [.identity])))
                }
            }
            return result
        }
    }

    /// `{"push":"changed","profile_id":"gh_…","cursor":N,"changed":[…]}` and a newline: every
    /// part is plain ASCII, so no escaping is needed.
    static func line(_ id: ProfileID, cursor: UInt64, parts: [SyncPart]) -> [UInt8] {
        let changed = parts.map { "\"\($0.rawValue)\"" }.joined(separator: ",")
        return Array("{\"push\":\"changed\",\"profile_id\":\"\(id)\",\"cursor\":\(cursor),\"changed\":[\(changed)]}\n".utf8)
    }
}
