public import GatehouseBase
public import GatehouseCore
import GatehouseStorage

/// Takes project snapshots, publishes the manifest and lets the log drop what no snapshot needs
/// (storage.md C.7). One checkpoint step runs at a time.
///
/// Each project keeps its two newest snapshots; the log is kept back to the older one, so a
/// damaged newest snapshot always has a fallback that the log can bring up to date.
public actor Checkpointer {
    private let paths: DataPaths
    private let fileSystem: any FileSystem
    private let log: WriteAheadLog
    private let io: BlockingIO
    private let logger: Logger
    private let gate = AsyncSerialGate()
    private let registry: Registry
    /// Snapshots on disk per incarnation, newest first.
    private var retained: [Incarnation: [RetainedSnapshot]]
    private var pending: Set<Incarnation> = []
    private let walBytesCap: Int
    public private(set) var lastSnapshotMs: Int64?
    /// How long each project snapshot took, from capturing the project's state to publishing
    /// the manifest that names it (from then on recovery starts from it). Its count is the
    /// snapshots taken. Read without entering the actor.
    public nonisolated let snapshotDurations = DurationHistogram(bounds: DurationHistogram.storageBounds)

    /// Project snapshots written and published since the server started.
    public nonisolated var snapshotsTaken: UInt64 { snapshotDurations.snapshot().count }

    struct RetainedSnapshot: Equatable {
        var file: String
        var lsn: LSN
    }

    init(paths: DataPaths, fileSystem: any FileSystem, log: WriteAheadLog, registry: Registry, io: BlockingIO,
         logger: Logger, retained: [Incarnation: [RetainedSnapshot]], walBytesCap: Int)
    {
        self.walBytesCap = walBytesCap
        self.paths = paths
        self.fileSystem = fileSystem
        self.log = log
        self.registry = registry
        self.io = io
        self.logger = logger
        self.retained = retained
    }

    /// Snapshots every project now and truncates the log; answers each project's cursor.
    public func checkpoint() async throws -> [(ProjectID, UInt64)] {
        try await gate.run {
            var cursors: [(ProjectID, UInt64)] = []
            var captures: [ContinuousClock.Instant] = []
            for project in self.registry.allProjects() {
                let taken = try await self.takeSnapshot(of: project, force: true)
                cursors.append((project.id, taken.sequence))
                if let captured = taken.captured { captures.append(captured) }
            }
            try await self.publishManifest()
            self.observeSnapshots(capturedAt: captures)
            return cursors
        }
    }

    /// Snapshots one project because it logged enough since its last snapshot (`force` false),
    /// or because it holds the log back (`force` true: even an unchanged project gets a fresh
    /// copy, so both retained snapshots are recent and the old log can go).
    func snapshotSoon(_ project: Project, force: Bool = false) {
        guard pending.insert(project.incarnation).inserted else { return }
        Task {
            do {
                try await self.gate.run {
                    let taken = try await self.takeSnapshot(of: project, force: force)
                    try await self.publishManifest()
                    self.observeSnapshots(capturedAt: taken.captured.map { [$0] } ?? [])
                }
            } catch {
                self.logger.warning("snapshot.failed", metadata: ["project": "\(project.id)", "error": "\(error)"])
            }
            self.finished(project.incarnation)
        }
    }

    private func finished(_ incarnation: Incarnation) {
        pending.remove(incarnation)
    }

    /// Runs `body` with no checkpoint step under way, so files it stages in the snapshot
    /// directory cannot be swept as unreferenced before it has recorded them (`tenant.restore`).
    func exclusively<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await gate.run(body)
    }

    /// A restored project's staged snapshot becomes its base. Call inside ``exclusively(_:)``.
    func adoptRestored(_ incarnation: Incarnation, file: String, lsn: LSN) async throws {
        retained[incarnation] = [RetainedSnapshot(file: file, lsn: lsn)]
        try await publishManifest()
    }

    /// The snapshots captured at `captures` are named by the published manifest now.
    private nonisolated func observeSnapshots(capturedAt captures: [ContinuousClock.Instant]) {
        let now = ContinuousClock.now
        for captured in captures {
            snapshotDurations.observe(nanoseconds: UInt64(max(0, (now - captured) / .nanoseconds(1))))
        }
    }

    /// Writes a snapshot of `project` and answers its cursor, and when the state was captured if
    /// a snapshot was written. Without `force`, nothing is written when the newest snapshot is
    /// already current; with it, only when both retained ones are.
    private func takeSnapshot(of project: Project, force: Bool) async throws
        -> (sequence: UInt64, captured: ContinuousClock.Instant?)
    {
        let captured = ContinuousClock.now
        let (state, lsn) = await project.capture()
        let previous = retained[project.incarnation] ?? []
        let current = previous.filter { $0.lsn >= lsn }.count
        if current >= (force ? 2 : 1) { return (state.sequence, nil) }
        // A snapshot never runs ahead of the durable log (storage.md C.1-6).
        await log.waitDurable(lsn)
        let file = Hex.fixed16(project.incarnation) + "-" + Hex.fixed16(lsn) + "-"
            + registry.random.randomToken(alphabet: .base62, length: 6) + ".snap"
        let header = SnapshotHeader(streamID: project.incarnation, lsn: lsn, createdMs: registry.clock.nowMs(),
                                    metadata: Array(project.id.rawValue.utf8))
        let path = paths.snapshots + "/" + file
        let fileSystem = self.fileSystem
        let started = ContinuousClock.now
        // Encoding a big state takes seconds of every core: it runs on the snapshot thread too.
        let written = try await io.run {
            try SnapshotFile.write(path: path, header: header, parts: StateCoding.encodeParts(state), fileSystem: fileSystem)
        }
        await project.snapshotWritten(bodyBytes: written.bodyBytes)
        retained[project.incarnation] = [RetainedSnapshot(file: file, lsn: lsn)] + previous.prefix(1)
        lastSnapshotMs = registry.clock.nowMs()
        logger.info("snapshot.written", metadata: [
            "project": "\(project.id)", "lsn": "\(lsn)", "bytes": "\(written.bytes)",
            "took_ms": "\((ContinuousClock.now - started).wholeMilliseconds)",
        ])
        return (state.sequence, captured)
    }

    /// Publishes the manifest for the live projects, then drops log segments and snapshot files
    /// nothing needs any more. The order matters: a crash between the steps leaves extra files,
    /// never a manifest that points at something deleted.
    private func publishManifest() async throws {
        let live = registry.allProjects()
        let liveIncarnations = Set(live.map(\.incarnation))
        var entries: [ManifestEntry] = []
        var replayFrom = log.lastLSN + 1
        for project in live {
            for snapshot in retained[project.incarnation] ?? [] {
                entries.append(ManifestEntry(streamID: project.incarnation, file: snapshot.file, lsn: snapshot.lsn))
            }
            replayFrom = min(replayFrom, pin(of: project))
        }
        retained = retained.filter { liveIncarnations.contains($0.key) }
        var metadata = ByteWriter()
        metadata.writeVarUInt(registry.nextIncarnation)
        let manifest = Manifest(databaseID: log.databaseID, replayFromLSN: replayFrom, snapshots: entries,
                                runtimeMetadata: metadata.bytes)
        let paths = self.paths
        let fileSystem = self.fileSystem
        let keep = Set(entries.map(\.file))
        try await io.run {
            try ManifestFile.write(manifest, directory: paths.root, fileSystem: fileSystem)
            try Self.removeSnapshots(except: keep, in: paths.snapshots, fileSystem: fileSystem)
        }
        try log.removeSegments(before: replayFrom)
        if log.stats.bytesOnDisk > walBytesCap, let coldest = live.min(by: { pin(of: $0) < pin(of: $1) }),
            pin(of: coldest) < log.lastLSN
        {
            // Over the cap: the project reaching furthest back is what holds the old segments.
            logger.info("snapshot.log_over_cap", metadata: ["project": "\(coldest.id)", "wal_bytes": "\(log.stats.bytesOnDisk)"])
            snapshotSoon(coldest, force: true)
        }
    }

    /// The first log position a project still needs for recovery.
    private func pin(of project: Project) -> LSN {
        retained[project.incarnation]?.last.map { $0.lsn + 1 } ?? project.originLSN
    }

    /// Deletes snapshot files the manifest no longer names. A restore stages its file and
    /// records it inside ``exclusively(_:)``, so no staged file is swept before it is named.
    private static func removeSnapshots(except keep: Set<String>, in directory: String, fileSystem: any FileSystem) throws {
        for name in try fileSystem.listDirectory(directory) where name.hasSuffix(".snap") && !keep.contains(name) {
            try? fileSystem.unlink(directory + "/" + name)
        }
    }
}


/// Where things live inside the data directory, and the exports directory (inside it unless
/// the operator put it elsewhere).
struct DataPaths: Sendable {
    let root: String
    let exports: String
    var wal: String { root + "/wal" }
    var snapshots: String { root + "/snapshots" }

    init(root: String, exports: String? = nil) {
        self.root = root
        self.exports = exports ?? root + "/exports"
    }
}
