public import GatehouseBase
public import GatehouseCore
public import GatehouseStorage
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

/// The server's projects: creation, lookup, deletion and key checks. Directory changes are
/// logged and applied under one lock, so two `project.create` of the same id cannot both
/// succeed and the log holds them in the order they took effect.
public final class Registry: Sendable {
    /// What every project is given: the log, the snapshot trigger, the clock, randomness and retention.
    let projectContext: ProjectContext
    let logger: Logger
    private let adminKey: SecretDigest
    public var clock: any ServerClock { projectContext.clock }
    public var log: WriteAheadLog { projectContext.log }
    /// The randomness every project draws from (the outbox's jitter too).
    public var random: any RandomSource { projectContext.random }
    var trigger: SnapshotTrigger { projectContext.trigger }
    private let directory: Mutex<Directory>

    struct Directory {
        var projects: [ProjectID: Project] = [:]
        var nextIncarnation: Incarnation = 1
    }

    init(adminKey: String, context: ProjectContext, logger: Logger, projects: [Project], nextIncarnation: Incarnation) {
        self.adminKey = SecretDigest(secret: adminKey)
        self.projectContext = context
        self.logger = logger
        var directory = Directory(nextIncarnation: nextIncarnation)
        for project in projects { directory.projects[project.id] = project }
        self.directory = Mutex(directory)
    }

    // MARK: Authentication

    /// The principal a key stands for, or `nil` for a key that is not valid. Keys are compared
    /// as SHA-256 digests in constant time; a key is never logged.
    public func authenticate(key: String) -> Principal? {
        if let (kind, projectID) = KeyFormat.parse(key) {
            guard let project = project(projectID), project.published.matches(KeyFormat.canonical(key), kind: kind) else {
                return nil
            }
            return .project(project, kind, generation: project.published.generation(of: kind))
        }
        return adminKey.matches(key) ? .admin : nil
    }

    // MARK: Directory

    public func project(_ id: ProjectID) -> Project? {
        directory.withLock { $0.projects[id] }
    }

    public var projectCount: Int { directory.withLock { $0.projects.count } }

    /// Profiles over every project, each as its actor last published it: read without entering
    /// any project.
    public var profileCount: Int {
        directory.withLock { directory in directory.projects.values.reduce(0) { $0 + $1.published.profileCount } }
    }

    /// Every project, ordered by id.
    public func allProjects() -> [Project] {
        directory.withLock { Array($0.projects.values) }.sorted { $0.id < $1.id }
    }

    /// The largest incarnation given so far plus one, for the manifest.
    var nextIncarnation: Incarnation { directory.withLock { $0.nextIncarnation } }

    /// Creates a project with fresh keys; an existing id is `conflict`.
    public func createProject(id: ProjectID, name: String?) throws(GatehouseError) -> Committed<(Project, ProjectKeys)> {
        let name = try ProjectState.validateName(name ?? id.rawValue)
        let keys = ProjectKeys(
            publicKey: KeyFormat.make(.public, project: id, random: random),
            secretKey: KeyFormat.make(.secret, project: id, random: random)
        )
        let state = ProjectState(id: id, name: name, createdMs: clock.nowMs(), keys: KeyDigests(keys))
        let result = directory.withLock { directory -> Result<(Project, LSN), GatehouseError> in
            guard directory.projects[id] == nil else { return .failure(GatehouseError(.conflict, "project \(id) exists already")) }
            let incarnation = directory.nextIncarnation
            let lsn: LSN
            do throws(GatehouseError) {
                lsn = try log.appendMappingErrors(RuntimeRecord.projectCreated(incarnation, state).logRecord)
            } catch {
                return .failure(error)
            }
            directory.nextIncarnation += 1
            let project = Project(state: state, incarnation: incarnation, originLSN: lsn, lastLSN: lsn, context: projectContext)
            directory.projects[id] = project
            return .success((project, lsn))
        }
        let (project, lsn) = try result.get()
        logger.info("project.created", metadata: ["project": "\(id)"])
        return Committed((project, keys), lsn: lsn)
    }

    /// Deletes a project and all its data; its keys stop working at once.
    public func deleteProject(_ id: ProjectID) throws(GatehouseError) -> LSN {
        let result = directory.withLock { directory -> Result<(Project, LSN), GatehouseError> in
            guard let project = directory.projects[id] else { return .failure(.notFound("project \(id)")) }
            do throws(GatehouseError) {
                let lsn = try log.appendMappingErrors(RuntimeRecord.projectDeleted(project.incarnation).logRecord)
                directory.projects[id] = nil
                return .success((project, lsn))
            } catch {
                return .failure(error)
            }
        }
        let (removed, lsn) = try result.get()
        removed.published.markDeleted()
        logger.info("project.deleted", metadata: ["project": "\(id)"])
        return lsn
    }

    /// Replaces one of a project's keys and answers the new key (the only time it is shown; the
    /// server keeps its digest). The other key is untouched and, being stored as a digest, unknown.
    public func rotateKey(of id: ProjectID, kind: KeyKind) async throws(GatehouseError) -> Committed<String> {
        guard let project = project(id) else { throw .notFound("project \(id)") }
        let key = try await project.rotateKey(kind, random: random)
        logger.info("project.key_rotated", metadata: ["project": "\(id)", "which": "\(kind.rawValue)"])
        return key
    }

    /// Installs a restored project under `id` in place of `expectedLive` (the project the
    /// caller froze, or `nil` when there was none) and logs the restore in the same step. The
    /// state's snapshot is already on disk in `snapshotFile`.
    func installRestored(
        id: ProjectID, replacing expectedLive: Project?, snapshotFile: String,
        makeProject: (Incarnation, LSN) -> Project
    ) throws(GatehouseError) -> (project: Project, lsn: LSN) {
        let result = directory.withLock { directory -> Result<(Project, Project?, LSN), GatehouseError> in
            let live = directory.projects[id]
            guard live === expectedLive else {
                return .failure(GatehouseError(.conflict, "project \(id) changed while it was being restored; try again"))
            }
            let incarnation = directory.nextIncarnation
            let record = RuntimeRecord.projectRestored(incarnation, snapshotFile: snapshotFile, replacing: live?.incarnation)
            do throws(GatehouseError) {
                let lsn = try log.appendMappingErrors(record.logRecord)
                directory.nextIncarnation += 1
                let project = makeProject(incarnation, lsn)
                directory.projects[id] = project
                return .success((project, live, lsn))
            } catch {
                return .failure(error)
            }
        }
        let (project, replaced, lsn) = try result.get()
        replaced?.published.markDeleted()
        return (project, lsn)
    }
}
