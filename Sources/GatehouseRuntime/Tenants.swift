import GatehouseBase
public import GatehouseCore
import GatehouseStorage

/// What `tenant.snapshot` answers.
public struct TenantExport: Sendable {
    public var path: String
    public var cursor: UInt64
    public var profiles: Int
    public var bytes: Int
    public var sha256: String
}

/// What `tenant.restore` answers; `keys` only for a clone, which gets fresh ones.
public struct TenantRestore: Sendable {
    public var project: ProjectID
    public var cursor: UInt64
    public var profiles: Int
    public var keys: ProjectKeys?
}

/// Moving a tenant: export to a snapshot file, restore from one (PROTOCOL.md, `tenant.*`).
extension Engine {
    /// Writes a project's state, as of now and durable, as `name` in the exports directory
    /// (default `<project>-<cursor>.snap`). A `name` that is not a plain file name
    /// (``ExportName``) is `bad_request`, and nothing is written.
    public func exportTenant(_ id: ProjectID, named name: String?) async throws(GatehouseError) -> Committed<TenantExport> {
        let chosen = try name.map { (name) throws(GatehouseError) in try ExportName(validating: name) }
        let exports = paths.exports
        return try await exportTenant(id) { cursor in
            exports + "/" + (chosen ?? .standard(project: id, cursor: cursor)).rawValue
        }
    }

    /// Writes a project's state to `path`, wherever it is: for `gatehouse tenant export`, which
    /// runs as the operator on a stopped server's data directory, never for a client's request.
    public func exportTenant(_ id: ProjectID, toPath path: String) async throws(GatehouseError) -> Committed<TenantExport> {
        try await exportTenant(id) { _ in path }
    }

    /// Captures the project, waits until what it shows is durable, and writes it to the path
    /// `target` gives for its cursor.
    private func exportTenant(_ id: ProjectID, target: (UInt64) -> String) async throws(GatehouseError)
        -> Committed<TenantExport>
    {
        guard let project = registry.project(id) else { throw .notFound("project \(id)") }
        let (state, lsn) = await project.captureForExport()
        await log.waitDurable(lsn)
        let path = target(state.sequence)
        let header = SnapshotHeader(streamID: project.incarnation, lsn: lsn, createdMs: registry.clock.nowMs(),
                                    metadata: Array(id.rawValue.utf8))
        let fileSystem = self.fileSystem
        do {
            let written = try await io.run {
                try SnapshotFile.write(path: path, header: header, parts: StateCoding.encodeParts(state), fileSystem: fileSystem)
            }
            registry.logger.info("tenant.exported", metadata: ["project": "\(id)", "path": "\(path)", "bytes": "\(written.bytes)"])
            return Committed(TenantExport(path: path, cursor: state.sequence, profiles: state.profiles.count, bytes: written.bytes,
                                          sha256: written.sha256), lsn: lsn)
        } catch {
            throw GatehouseError(.badRequest, "path: cannot write \(path): \(error)")
        }
    }

    /// Restores a tenant as `id` from the snapshot file `name` in the exports directory: the same
    /// id keeps its keys; another id is a clone with fresh keys. Over a live project only with
    /// `replace`. Each step is crash-safe: the state is staged in its own snapshot file first,
    /// then one log record makes it count. A `name` that is not a plain file name is `bad_request`.
    public func restoreTenant(_ id: ProjectID, named name: String, replace: Bool) async throws(GatehouseError)
        -> Committed<TenantRestore>
    {
        let file = try ExportName(validating: name)
        let loaded = try await readSnapshot(paths.exports + "/" + file.rawValue, named: file)
        if registry.project(id) != nil, !replace {
            throw GatehouseError(.conflict, "project \(id) exists; pass \"replace\":true to overwrite it")
        }
        do {
            return try await checkpointer.exclusively { () async throws(GatehouseError) -> Committed<TenantRestore> in
                try await self.install(loaded, as: id, replace: replace)
            }
        } catch let error as GatehouseError {
            throw error
        } catch {
            throw GatehouseError(.internal, "restore failed: \(error)")
        }
    }

    private func install(_ snapshot: ProjectState, as id: ProjectID, replace: Bool) async throws(GatehouseError)
        -> Committed<TenantRestore>
    {
        let live = registry.project(id)
        if live != nil, !replace {
            throw GatehouseError(.conflict, "project \(id) exists; pass \"replace\":true to overwrite it")
        }
        var state = snapshot
        var freshKeys: ProjectKeys?
        if snapshot.id != id {
            let keys = ProjectKeys(publicKey: KeyFormat.make(.public, project: id, random: registry.random),
                                   secretKey: KeyFormat.make(.secret, project: id, random: registry.random))
            state = snapshot.cloned(as: id, keys: KeyDigests(keys))
            freshKeys = keys
        }
        if let live {
            state = state.continuing(after: await live.freeze())
        }
        let file = "restore-\(registry.clock.nowMs())-\(registry.random.randomToken(alphabet: .base62, length: 8)).snap"
        do {
            let bodyBytes = try await stage(state, file: file)
            let (project, lsn) = try registry.installRestored(id: id, replacing: live, snapshotFile: file) { incarnation, lsn in
                Project(state: state, incarnation: incarnation, originLSN: lsn, lastLSN: lsn, context: registry.projectContext,
                        snapshotBodyBytes: bodyBytes)
            }
            await log.waitDurable(lsn)
            try? await checkpointer.adoptRestored(project.incarnation, file: file, lsn: lsn)
            // A restored tenant's pending expiries: what fell due since its snapshot, and its timer;
            // and the deliveries its outbox still owes.
            await project.runExpiries()
            await project.startOutbox()
            registry.logger.info("tenant.restored", metadata: ["project": "\(id)", "clone": "\(freshKeys != nil)", "replaced": "\(live != nil)"])
            return Committed(TenantRestore(project: id, cursor: state.sequence, profiles: state.profiles.count, keys: freshKeys), lsn: lsn)
        } catch {
            await live?.unfreeze()
            let staged = paths.snapshots + "/" + file
            let fileSystem = self.fileSystem
            try? await io.run { try fileSystem.unlink(staged) }
            throw error
        }
    }

    /// Writes `state` as a snapshot file of its own; answers the body's size.
    private func stage(_ state: ProjectState, file: String) async throws(GatehouseError) -> Int {
        let header = SnapshotHeader(streamID: 0, lsn: 0, createdMs: registry.clock.nowMs(), metadata: Array(state.id.rawValue.utf8))
        let path = paths.snapshots + "/" + file
        let fileSystem = self.fileSystem
        do {
            return try await io.run {
                try SnapshotFile.write(path: path, header: header, parts: StateCoding.encodeParts(state), fileSystem: fileSystem)
            }.bodyBytes
        } catch {
            throw GatehouseError(.internal, "cannot stage the restored state: \(error)")
        }
    }

    /// Reads and fully checks a snapshot file: `not_found` when it is missing, `bad_request` when
    /// it is not a valid snapshot (nothing changes either way).
    private func readSnapshot(_ path: String, named name: ExportName) async throws(GatehouseError) -> ProjectState {
        let fileSystem = self.fileSystem
        // Decoding a big state takes seconds of a core: on the snapshot thread, with the read.
        let loaded: Result<ProjectState, GatehouseError>
        do {
            loaded = try await io.run { () throws -> Result<ProjectState, GatehouseError> in
                let body = try SnapshotFile.read(path: path, fileSystem: fileSystem).1
                do {
                    return .success(try StateCoding.decode(body))
                } catch {
                    return .failure(GatehouseError(.badRequest, "path: \(name) is not a valid snapshot: \(error)"))
                }
            }
        } catch let error as StorageError where error.code == .notFound {
            throw .notFound("file \(name) in the exports directory")
        } catch {
            throw GatehouseError(.badRequest, "path: \(name) is not a valid snapshot: \(error)")
        }
        return try loaded.get()
    }
}
