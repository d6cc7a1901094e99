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
    /// Writes a project's state, as of now and durable, to `path` (default
    /// `<data-dir>/exports/<project>-<unix ms>.snap`).
    public func exportTenant(_ id: ProjectID, to path: String?) async throws(GatehouseError) -> Committed<TenantExport> {
        guard let project = registry.project(id) else { throw .notFound("project \(id)") }
        let (state, lsn) = await project.captureForExport()
        await log.waitDurable(lsn)
        let target = path ?? paths.exports + "/\(id)-\(registry.clock.nowMs()).snap"
        let header = SnapshotHeader(streamID: project.incarnation, lsn: lsn, createdMs: registry.clock.nowMs(),
                                    metadata: Array(id.rawValue.utf8))
        let fileSystem = self.fileSystem
        do {
            let written = try await io.run {
                try SnapshotFile.write(path: target, header: header, parts: StateCoding.encodeParts(state), fileSystem: fileSystem)
            }
            registry.logger.info("tenant.exported", metadata: ["project": "\(id)", "path": "\(target)", "bytes": "\(written.bytes)"])
            return Committed(TenantExport(path: target, cursor: state.sequence, profiles: state.profiles.count, bytes: written.bytes,
                                          sha256: written.sha256), lsn: lsn)
        } catch {
            throw GatehouseError(.badRequest, "path: cannot write \(target): \(error)")
        }
    }

    /// Restores a tenant from a snapshot file as `id`: the same id keeps its keys; another id is
    /// a clone with fresh keys. Over a live project only with `replace`. Each step is crash-safe:
    /// the state is staged in its own snapshot file first, then one log record makes it count.
    public func restoreTenant(_ id: ProjectID, from path: String, replace: Bool) async throws(GatehouseError)
        -> Committed<TenantRestore>
    {
        let loaded = try await readSnapshot(path)
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
            // A restored tenant's pending expiries: what fell due since its snapshot, and its timer.
            await project.runExpiries()
            registry.logger.info("tenant.restored", metadata: ["project": "\(id)", "clone": "\(freshKeys != nil)", "replaced": "\(live != nil)"])
            return Committed(TenantRestore(project: id, cursor: state.sequence, profiles: state.profiles.count, keys: freshKeys), lsn: lsn)
        } catch {
            await live?.unfreeze()
            try? fileSystem.unlink(paths.snapshots + "/" + file)
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
    private func readSnapshot(_ path: String) async throws(GatehouseError) -> ProjectState {
        let fileSystem = self.fileSystem
        let body: [UInt8]
        do {
            body = try await io.run { try SnapshotFile.read(path: path, fileSystem: fileSystem).1 }
        } catch let error as StorageError where error.code == .notFound {
            throw GatehouseError(.notFound, "file \(path)")
        } catch {
            throw GatehouseError(.badRequest, "path: \(path) is not a valid snapshot: \(error)")
        }
        do {
            return try StateCoding.decode(body)
        } catch {
            throw GatehouseError(.badRequest, "path: \(path) is not a valid snapshot: \(error)")
        }
    }
}
