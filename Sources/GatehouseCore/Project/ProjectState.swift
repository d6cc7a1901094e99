public import GatehouseBase

/// Everything a project holds, as a plain value. The project's actor owns one; rules are
/// methods on it that take time and randomness as inputs, so they run the same in tests.
public struct ProjectState: Sendable, Equatable {
    public let id: ProjectID
    public private(set) var name: String
    public let createdMs: Int64
    public private(set) var keys: KeyDigests
    /// How many times each key has been replaced; a session remembers the generation it
    /// authenticated with, so a rotated key stops working at once, even on open connections.
    public private(set) var keyGenerations: [KeyKind: UInt64]
    public private(set) var config: ProjectConfig
    /// The last number of the project's sequence: every change takes the next one.
    public private(set) var sequence: UInt64
    /// The sequence number of the last configuration change (`offerings` in `sync`).
    public private(set) var configCursor: UInt64

    public init(id: ProjectID, name: String, createdMs: Int64, keys: KeyDigests) {
        self.init(id: id, name: name, createdMs: createdMs, keys: keys, keyGenerations: [.public: 1, .secret: 1],
                  config: .empty, sequence: 0, configCursor: 0)
    }

    /// Every stored field, for loading a snapshot.
    public init(
        id: ProjectID, name: String, createdMs: Int64, keys: KeyDigests, keyGenerations: [KeyKind: UInt64],
        config: ProjectConfig, sequence: UInt64, configCursor: UInt64
    ) {
        self.id = id
        self.name = name
        self.createdMs = createdMs
        self.keys = keys
        self.keyGenerations = keyGenerations
        self.config = config
        self.sequence = sequence
        self.configCursor = configCursor
    }

    /// The same tenant under another id with other keys (a clone by `tenant.restore`).
    public func cloned(as newID: ProjectID, keys newKeys: KeyDigests) -> ProjectState {
        ProjectState(id: newID, name: name, createdMs: createdMs, keys: newKeys,
                     keyGenerations: [.public: 1, .secret: 1], config: config, sequence: sequence, configCursor: configCursor)
    }

    /// Restored over a live project whose clients hold cursors up to `liveSequence`: the sequence
    /// jumps past both, and everything counts as changed, so no client's cursor can go back or
    /// miss the restore.
    public func continuing(after liveSequence: UInt64) -> ProjectState {
        var copy = self
        copy.sequence = max(sequence, liveSequence) + 1
        copy.configCursor = copy.sequence
        return copy
    }

    /// A change to a project, the unit the log records and replays.
    public enum Change: Sendable, Equatable {
        case configReplaced(ProjectConfig)
        case keyRotated(KeyKind, SecretDigest)
    }

    /// Applies a change already validated; cannot fail, so the log and memory never disagree.
    public mutating func apply(_ change: Change) {
        sequence += 1
        switch change {
        case .configReplaced(let newConfig):
            config = newConfig
            configCursor = sequence
        case .keyRotated(let kind, let digest):
            keys[kind] = digest
            keyGenerations[kind, default: 1] += 1
        }
    }

    /// Validates a new configuration and returns the change that installs it.
    public func replaceConfig(with newConfig: ProjectConfig) throws(GatehouseError) -> Change {
        try newConfig.validate()
        return .configReplaced(newConfig)
    }

    public static func validateName(_ name: String) throws(GatehouseError) -> String {
        let trimmed = name.trimmingSpaces()
        guard (1...200).contains(trimmed.count) else { throw .badField("name", "must be 1–200 characters") }
        return trimmed
    }
}

extension String {
    /// The string without spaces at either end (DESIGN.md trims customer user ids the same way).
    public func trimmingSpaces() -> String {
        var view = Substring(self)
        while view.first == " " { view.removeFirst() }
        while view.last == " " { view.removeLast() }
        return String(view)
    }
}
