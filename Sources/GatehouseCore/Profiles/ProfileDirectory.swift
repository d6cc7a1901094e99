/// A project's profiles with an O(1) index for every way to find one: by id, by the id of a
/// profile merged into it (alias), by customer user id, and by app account token (its own, or
/// the token of a profile merged into it).
public struct ProfileDirectory: Sendable, Equatable {
    private var profiles: [ProfileID: Profile] = [:]
    /// Merged-away ids → the profile they resolve to now.
    private var aliases: [ProfileID: ProfileID] = [:]
    private var byCustomerUserID: [String: ProfileID] = [:]
    /// Every token that resolves to a profile: its own, and those of profiles merged into it.
    private var byToken: [AppAccountToken: ProfileID] = [:]
    /// The tokens of profiles merged into each profile (so a merge or delete never scans). A set,
    /// with no empty entries, so a directory rebuilt from a snapshot equals the one it came from.
    private var mergedTokens: [ProfileID: Set<AppAccountToken>] = [:]

    public init() {}

    /// Rebuilds the indexes from stored profiles and the tokens of merged-away profiles.
    public init(profiles: [Profile], aliasTokens: [AppAccountToken: ProfileID]) {
        // Sized once: a snapshot of a million profiles is not rehashed on the way in.
        self.profiles.reserveCapacity(profiles.count)
        byToken.reserveCapacity(profiles.count + aliasTokens.count)
        byCustomerUserID.reserveCapacity(profiles.count)
        for profile in profiles {
            self.profiles[profile.id] = profile
            if let customerUserID = profile.customerUserID { byCustomerUserID[customerUserID] = profile.id }
            byToken[profile.token] = profile.id
            for alias in profile.aliases { aliases[alias] = profile.id }
        }
        for (token, owner) in aliasTokens where byToken[token] == nil {
            byToken[token] = owner
            mergedTokens[owner, default: []].insert(token)
        }
    }

    public var count: Int { profiles.count }

    /// Every profile, ordered by id (snapshots are deterministic).
    public var all: [Profile] { profiles.values.sorted { $0.id < $1.id } }

    /// Tokens of merged-away profiles and who they resolve to, for snapshots.
    public var aliasTokens: [AppAccountToken: ProfileID] {
        var result: [AppAccountToken: ProfileID] = [:]
        for (owner, tokens) in mergedTokens {
            for token in tokens { result[token] = owner }
        }
        return result
    }

    /// The id a profile id or alias stands for now, if any.
    public func canonicalID(_ id: ProfileID) -> ProfileID? {
        // `index(forKey:)`, not `profiles[id] != nil`: that would copy the profile to test it.
        if profiles.index(forKey: id) != nil { return id }
        return aliases[id]
    }

    /// Whether `id` is a profile's own id (not an alias, not deleted). Copies nothing.
    public func isProfile(_ id: ProfileID) -> Bool {
        profiles.index(forKey: id) != nil
    }

    /// The profile behind an id or an alias.
    public func profile(_ id: ProfileID) -> Profile? {
        if let index = profiles.index(forKey: id) { return profiles.values[index] }
        return aliases[id].flatMap { profiles[$0] }
    }

    /// The customer user id of the profile behind an id or an alias. `mutating` only to read
    /// through an in-place access: the dictionary's getter would copy the whole profile (a
    /// retain and release of each of its buffers), once for every event recorded.
    mutating func customerUserID(of id: ProfileID) -> String? {
        guard let canonical = canonicalID(id), let index = profiles.index(forKey: canonical) else { return nil }
        return Self.customerUserID(in: &profiles.values[index])
    }

    private static func customerUserID(in profile: inout Profile) -> String? {
        profile.customerUserID
    }

    public func profile(customerUserID: String) -> Profile? {
        byCustomerUserID[customerUserID].flatMap { profiles[$0] }
    }

    /// The profile a token resolves to (its own, or merged into it).
    public func profile(token: AppAccountToken) -> Profile? {
        byToken[token].flatMap { profiles[$0] }
    }

    // MARK: Changes (called by ProjectState.apply only; each keeps every index consistent)

    mutating func insert(_ profile: Profile) {
        precondition(!isProfile(profile.id) && aliases[profile.id] == nil, "profile id \(profile.id) reused")
        precondition(byToken[profile.token] == nil, "token \(profile.token) already held")
        if let customerUserID = profile.customerUserID {
            precondition(byCustomerUserID[customerUserID] == nil, "customer user id already held")
            byCustomerUserID[customerUserID] = profile.id
        }
        profiles[profile.id] = profile
        byToken[profile.token] = profile.id
    }

    /// Changes a profile in place (one hash, no copy of it).
    mutating func update(_ id: ProfileID, _ body: (inout Profile) -> Void) {
        guard let index = profiles.index(forKey: id) else { preconditionFailure("update of unknown profile \(id)") }
        body(&profiles.values[index])
    }

    mutating func assignCustomerUserID(_ customerUserID: String, to id: ProfileID) {
        precondition(byCustomerUserID[customerUserID] == nil, "customer user id already held")
        update(id) { profile in
            precondition(profile.customerUserID == nil, "a customer user id never changes once set")
            profile.customerUserID = customerUserID
        }
        byCustomerUserID[customerUserID] = id
    }

    /// Gives `id` a new token; the old one is released (nothing resolves through it any more).
    /// A token that already resolved to `id` through a merge becomes its own.
    mutating func assignToken(_ token: AppAccountToken, to id: ProfileID) {
        let old = profiles[id]?.token
        precondition(byToken[token] == nil || byToken[token] == id, "token \(token) held by another profile")
        if let old, old != token { byToken[old] = nil }
        mergedTokens[id]?.remove(token)
        if mergedTokens[id]?.isEmpty == true { mergedTokens[id] = nil }
        update(id) { $0.token = token }
        byToken[token] = id
    }

    /// Folds `source` into `target`: the source's id, its aliases and its token resolve to the
    /// target from now on; the target's attributes win over the source's, and the source's are
    /// taken in key order only while the target holds fewer than the most a profile may hold.
    mutating func merge(_ source: ProfileID, into target: ProfileID) {
        guard let merged = profiles.removeValue(forKey: source) else { preconditionFailure("merge of unknown profile \(source)") }
        precondition(merged.customerUserID == nil, "only an anonymous profile is merged")
        for alias in merged.aliases { aliases[alias] = target }
        aliases[source] = target
        let moved = [merged.token] + (mergedTokens.removeValue(forKey: source) ?? [])
        for token in moved { byToken[token] = target }
        mergedTokens[target, default: []].formUnion(moved)
        update(target) { profile in
            profile.aliases.append(contentsOf: [source] + merged.aliases)
            for (key, value) in merged.attributes.sorted(by: { $0.key < $1.key }) where profile.attributes[key] == nil {
                guard profile.attributes.count < ProfileLimits.attributesPerProfileMax else { break }
                profile.attributes[key] = value
            }
        }
    }

    /// Removes a profile with its aliases; its customer user id and tokens become free.
    mutating func remove(_ id: ProfileID) {
        guard let removed = profiles.removeValue(forKey: id) else { preconditionFailure("delete of unknown profile \(id)") }
        if let customerUserID = removed.customerUserID { byCustomerUserID[customerUserID] = nil }
        for alias in removed.aliases { aliases[alias] = nil }
        byToken[removed.token] = nil
        for token in mergedTokens.removeValue(forKey: id) ?? [] { byToken[token] = nil }
    }

    /// Every profile counts as changed at `sequence` (a tenant restored over a live one).
    mutating func touchAll(at sequence: UInt64) {
        for id in Array(profiles.keys) { profiles[id]?.cursor = sequence }
    }
}

/// The project's event feed, oldest first, keeping at least the last 100,000 events or the last
/// 7 days, whichever is more (PROTOCOL.md, "The event feed").
public struct EventLog: Sendable, Equatable {
    public static let keptCountMin = 100_000
    public static let keptAgeMs: Int64 = 7 * 86_400_000

    public private(set) var events: [Event]

    public init(events: [Event] = []) {
        self.events = events
    }

    /// Events after `cursor` (exclusive), oldest first, at most `limit`.
    public func events(after cursor: UInt64, limit: Int) -> [Event] {
        var low = 0
        var high = events.count
        while low < high {
            let middle = (low + high) / 2
            if events[middle].cursor <= cursor { low = middle + 1 } else { high = middle }
        }
        return Array(events[low..<min(events.count, low + limit)])
    }

    mutating func append(_ event: Event) {
        events.append(event)
    }

    /// Drops what is both beyond the newest 100,000 and older than 7 days. Pruning waits until
    /// a tenth more has piled up, so a busy feed pays for one move of the array per 10,000
    /// events, not per event.
    mutating func prune(nowMs: Int64) {
        let excess = events.count - Self.keptCountMin
        guard excess >= Self.keptCountMin / 10 else { return }
        var drop = 0
        while drop < excess, nowMs - events[drop].atMs > Self.keptAgeMs { drop += 1 }
        if drop > 0 { events.removeFirst(drop) }
    }
}
