import GatehouseCore
import GatehouseRuntime
import Synchronization

/// The profiles one connection watches, and the way pushes reach it: a push is handed to the
/// connection's event loop, which appends it to the output between whole answer lines.
final class ConnectionWatches: WatchTarget {
    /// Watched profiles per connection (PROTOCOL.md leaves the limit to the server).
    static let perConnectionMax = 100

    let watchID: UInt64
    /// Counts the server's watches (the `gatehouse_watches` gauge).
    private let stats: ServerStats
    private let deliver: @Sendable ([UInt8]) -> Void
    private let watched = Mutex<[Key: Project]>([:])

    /// A watch: the project's hub (one per project) and the profile.
    private struct Key: Hashable {
        let hub: ObjectIdentifier
        let profile: ProfileID
    }

    init(id: UInt64, stats: ServerStats, deliver: @escaping @Sendable ([UInt8]) -> Void) {
        self.watchID = id
        self.stats = stats
        self.deliver = deliver
    }

    func push(_ line: [UInt8]) {
        deliver(line)
    }

    func watchEnded(_ profile: ProfileID, in hub: WatchHub) {
        let ended = watched.withLock { $0.removeValue(forKey: Key(hub: ObjectIdentifier(hub), profile: profile)) != nil }
        if ended { stats.watchesChanged(by: -1) }
    }

    /// Whether the connection watches anything (a watcher waiting for pushes is not idle).
    var isEmpty: Bool { watched.withLock { $0.isEmpty } }

    /// Claims room for one more watch (a repeat of one already held takes none).
    func reserve(_ project: Project, _ profile: ProfileID) throws(GatehouseError) {
        let key = Key(hub: ObjectIdentifier(project.watchHub), profile: profile)
        let fits = watched.withLock { watched -> Bool in
            guard watched[key] == nil else { return true }
            guard watched.count < Self.perConnectionMax else { return false }
            watched[key] = project
            stats.watchesChanged(by: 1)
            return true
        }
        guard fits else { throw GatehouseError.badField("profile_id", "a connection watches at most \(Self.perConnectionMax) profiles") }
    }

    /// Forgets one watch; answers whether it was held.
    @discardableResult
    func release(_ project: Project, _ profile: ProfileID) -> Bool {
        let held = watched.withLock { $0.removeValue(forKey: Key(hub: ObjectIdentifier(project.watchHub), profile: profile)) != nil }
        if held { stats.watchesChanged(by: -1) }
        project.watchHub.remove(watchID, profile: profile)
        return held
    }

    /// The connection closed: every watch ends.
    func releaseAll() {
        let all = watched.withLock { watched in
            defer { watched.removeAll() }
            return watched.map { ($0.value, $0.key.profile) }
        }
        if !all.isEmpty { stats.watchesChanged(by: -all.count) }
        for (project, profile) in all { project.watchHub.remove(watchID, profile: profile) }
    }
}
