public import GatehouseBase
public import GatehouseCore
import Synchronization

/// Who a connection is, once `hello` has succeeded.
public enum Principal: Sendable {
    case admin
    /// A project key: `sdk` for the public key, `server` for the secret one, with the key
    /// generation it was checked against.
    case project(Project, KeyKind, generation: UInt64)

    public var role: Role {
        switch self {
        case .admin: .admin
        case .project(_, .public, _): .sdk
        case .project(_, .secret, _): .server
        }
    }

    /// False once the key was rotated or the project deleted: the session must say `hello` again.
    public var isCurrent: Bool {
        switch self {
        case .admin:
            return true
        case .project(let project, let kind, let generation):
            return !project.published.isDeleted && project.published.generation(of: kind) == generation
        }
    }

    public var project: Project? {
        if case .project(let project, _, _) = self { return project }
        return nil
    }
}

/// The three roles of PROTOCOL.md ("Session and roles").
public enum Role: String, Sendable, CaseIterable {
    case sdk
    case server
    case admin
}

/// The server's projects: creation, lookup, deletion and key checks. Directory changes happen
/// under one lock, so two `project.create` of the same id cannot both succeed.
public final class Registry: Sendable {
    public let clock: any ServerClock
    private let random: any RandomSource
    private let adminKey: SecretDigest
    private let logger: Logger
    private let projects = Mutex<[ProjectID: Project]>([:])

    public init(adminKey: String, clock: any ServerClock, random: any RandomSource, logger: Logger) {
        self.adminKey = SecretDigest(secret: adminKey)
        self.clock = clock
        self.random = random
        self.logger = logger
    }

    // MARK: Authentication

    /// The principal a key stands for, or `nil` for a key that is not valid. Keys are compared
    /// as SHA-256 digests in constant time; a key is never logged.
    public func authenticate(key: String) -> Principal? {
        if let (kind, projectID) = KeyFormat.parse(key) {
            guard let project = project(projectID), project.published.matches(key, kind: kind) else { return nil }
            return .project(project, kind, generation: project.published.generation(of: kind))
        }
        return adminKey.matches(key) ? .admin : nil
    }

    // MARK: Directory

    public func project(_ id: ProjectID) -> Project? {
        projects.withLock { $0[id] }
    }

    public var projectCount: Int { projects.withLock { $0.count } }

    /// Creates a project with fresh keys; an existing id is `conflict`.
    public func createProject(id: ProjectID, name: String?) throws(GatehouseError) -> (Project, ProjectKeys) {
        let name = try ProjectState.validateName(name ?? id.rawValue)
        let keys = ProjectKeys(
            publicKey: KeyFormat.make(.public, project: id, random: random),
            secretKey: KeyFormat.make(.secret, project: id, random: random)
        )
        let state = ProjectState(id: id, name: name, createdMs: clock.nowMs(), keys: KeyDigests(keys))
        let project = Project(state: state)
        let inserted = projects.withLock { projects -> Bool in
            guard projects[id] == nil else { return false }
            projects[id] = project
            return true
        }
        guard inserted else { throw GatehouseError(.conflict, "project \(id) exists already") }
        logger.info("project.created", metadata: ["project": "\(id)"])
        return (project, keys)
    }

    /// Every project, ordered by id.
    public func allProjects() -> [Project] {
        projects.withLock { Array($0.values) }.sorted { $0.id < $1.id }
    }

    /// Deletes a project and all its data; its keys stop working at once.
    public func deleteProject(_ id: ProjectID) throws(GatehouseError) {
        let removed = projects.withLock { $0.removeValue(forKey: id) }
        guard let removed else { throw .notFound("project \(id)") }
        removed.published.markDeleted()
        logger.info("project.deleted", metadata: ["project": "\(id)"])
    }

    /// Replaces one of a project's keys and answers the new key (the only time it is shown; the
    /// server keeps its digest). The other key is untouched and, being stored as a digest, unknown.
    public func rotateKey(of id: ProjectID, kind: KeyKind) async throws(GatehouseError) -> String {
        guard let project = project(id) else { throw .notFound("project \(id)") }
        let key = await project.rotateKey(kind, random: random)
        logger.info("project.key_rotated", metadata: ["project": "\(id)", "which": "\(kind.rawValue)"])
        return key
    }
}
