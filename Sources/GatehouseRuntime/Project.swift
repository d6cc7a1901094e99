import GatehouseBase
public import GatehouseCore
import Synchronization

/// One project (tenant): an actor that owns the project's state. Changes are validated,
/// applied and answered inside it with no suspension in between, so concurrent requests
/// cannot interleave halfway through a rule.
public actor Project {
    public nonisolated let id: ProjectID
    /// What other threads may read without entering the actor.
    public nonisolated let published: PublishedProjectState
    private var state: ProjectState

    init(state: ProjectState) {
        self.id = state.id
        self.state = state
        self.published = PublishedProjectState(state: state)
    }

    public func summary() -> ProjectSummary {
        ProjectSummary(id: state.id, name: state.name, createdMs: state.createdMs, profiles: 0, cursor: state.sequence)
    }

    public func config() -> ProjectConfig { state.config }

    /// Replaces the configuration as a whole; an invalid one changes nothing.
    public func putConfig(_ config: ProjectConfig) throws(GatehouseError) -> ProjectConfig {
        let change = try state.replaceConfig(with: config)
        apply(change)
        return state.config
    }

    /// Replaces one key; the old one stops working at once, also on open connections.
    func rotateKey(_ kind: KeyKind, random: some RandomSource) -> String {
        let key = KeyFormat.make(kind, project: id, random: random)
        apply(.keyRotated(kind, SecretDigest(secret: key)))
        return key
    }

    private func apply(_ change: ProjectState.Change) {
        state.apply(change)
        published.update(from: state)
    }
}

/// A project's facts that connections read on their own threads: the key digests for `hello`,
/// the key generations every request is checked against, and whether the project still exists.
public final class PublishedProjectState: Sendable {
    private let keys: Mutex<KeyDigests>
    private let publicGeneration: Atomic<UInt64>
    private let secretGeneration: Atomic<UInt64>
    private let deleted = Atomic<Bool>(false)

    init(state: ProjectState) {
        self.keys = Mutex(state.keys)
        self.publicGeneration = Atomic(state.keyGenerations[.public] ?? 1)
        self.secretGeneration = Atomic(state.keyGenerations[.secret] ?? 1)
    }

    func update(from state: ProjectState) {
        keys.withLock { $0 = state.keys }
        publicGeneration.store(state.keyGenerations[.public] ?? 1, ordering: .releasing)
        secretGeneration.store(state.keyGenerations[.secret] ?? 1, ordering: .releasing)
    }

    func markDeleted() {
        deleted.store(true, ordering: .releasing)
    }

    public var isDeleted: Bool { deleted.load(ordering: .acquiring) }

    public func generation(of kind: KeyKind) -> UInt64 {
        switch kind {
        case .public: publicGeneration.load(ordering: .acquiring)
        case .secret: secretGeneration.load(ordering: .acquiring)
        }
    }

    /// Whether `key` is the project's current key of `kind` (a constant-time comparison of digests).
    func matches(_ key: String, kind: KeyKind) -> Bool {
        let digest = keys.withLock { $0[kind] }
        return digest.matches(key)
    }
}

/// What `project.list` and `project.get` show of a project.
public struct ProjectSummary: Sendable, Equatable {
    public var id: ProjectID
    public var name: String
    public var createdMs: Int64
    public var profiles: Int
    public var cursor: UInt64
}
